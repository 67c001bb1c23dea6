import TidingsPush

/// Feeds arbitrary text (bytes decoded as UTF-8, invalid sequences repaired) to the notification policy's
/// HTML-to-text conversion and its truncation. Besides never trapping, the output must keep the promises the
/// policy's content relies on: never more scalars than the input (a tag or entity only ever shrinks), no
/// leading or trailing whitespace, never more than one blank line in a row, and a truncation of at most
/// `maximumLength` characters that is the text itself when it fits.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let html = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    let text = NotificationPlainText.fromHTML(html)
    if text.unicodeScalars.count > html.unicodeScalars.count {
        fatalError("plain text has \(text.unicodeScalars.count) scalars from \(html.unicodeScalars.count)")
    }
    if let first = text.unicodeScalars.first, first == " " || first == "\n" { fatalError("leading whitespace") }
    if let last = text.unicodeScalars.last, last == " " || last == "\n" { fatalError("trailing whitespace") }
    if text.contains("\n\n\n") { fatalError("more than one blank line in a row") }
    // A limit chosen by the input's length exercises short limits too (1…64), plus the policy's own.
    for limit in [count % 64 + 1, NotificationPlainText.maximumLength] {
        let cut = NotificationPlainText.truncated(text, to: limit)
        if cut.count > limit { fatalError("truncated to \(cut.count) characters, limit \(limit)") }
        if text.count <= limit, cut != text { fatalError("a text that fits was changed") }
    }
    return 0
}
