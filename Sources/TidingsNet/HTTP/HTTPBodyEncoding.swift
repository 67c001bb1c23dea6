import Foundation

/// `application/x-www-form-urlencoded` as the WHATWG URL standard defines it (spaces become `+`).
public enum FormURLEncoding {
    /// Bytes that stay as they are; everything else is percent-encoded.
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._".utf8)

    /// Encodes `fields` in order, e.g. `[("q", "a b&c")]` → `q=a+b%26c`.
    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                output.unicodeScalars.append(UnicodeScalar(byte))
            } else if byte == 0x20 {
                output += "+"
            } else {
                output += String(format: "%%%02X", byte)
            }
        }
        return output
    }
}

/// A `multipart/form-data` body (RFC 7578): text fields and files, in the order added.
///
/// For example:
///
/// ```swift
/// var form = MultipartFormData()
/// form.addField(name: "description", value: "A cat")
/// form.addFile(name: "file", filename: "cat.jpg", contentType: "image/jpeg", data: jpeg)
/// let request = HTTPRequest.multipart(url: uploadURL, form: form)
/// ```
public struct MultipartFormData: Sendable {
    private struct Part: Sendable {
        var name: String
        var filename: String?
        var contentType: String?
        var data: Data
    }

    /// The boundary between parts; random, so it cannot occur in the parts by accident.
    public let boundary: String
    private var parts: [Part] = []

    /// Creates an empty form with a random boundary (or a given one, for reproducible tests).
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? "tidings-\(UUID().uuidString.lowercased())"
    }

    /// The `Content-Type` header value, boundary included.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    public mutating func addField(name: String, value: String) {
        parts.append(Part(name: name, filename: nil, contentType: nil, data: Data(value.utf8)))
    }

    /// Adds a file.
    public mutating func addFile(
        name: String, filename: String, contentType: String = "application/octet-stream", data: Data
    ) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, data: data))
    }

    /// The encoded body.
    public func encoded() -> Data {
        var body = Data()
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quote(part.name))\""
            if let filename = part.filename { head += "; filename=\"\(Self.quote(filename))\"" }
            head += "\r\n"
            if let contentType = part.contentType {
                head += "Content-Type: \(contentType.filter { $0 != "\r" && $0 != "\n" })\r\n"
            }
            head += "\r\n"
            body.append(Data(head.utf8))
            body.append(part.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }

    /// Escapes a name for a quoted header parameter the way browsers do (HTML form submission):
    /// quotes and line breaks are percent-encoded so they cannot end the parameter or the header.
    private static func quote(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}

/// Parses `Link` headers (RFC 8288) as Mastodon and GitHub send them for pagination.
public enum LinkHeader {
    /// Maps each `rel` to its target, resolved against `base`; malformed links are skipped.
    ///
    /// For example `<https://x/api?max_id=1>; rel="next", <https://x/api?min_id=9>; rel="prev"`.
    public static func parse(_ value: String, base: URL? = nil) -> [String: URL] {
        var result: [String: URL] = [:]
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { break }
            let target = rest[rest.index(after: open)..<close]
            // Parameters run until the next link, which starts with "," followed by "<".
            var end = rest.endIndex
            var cursor = rest.index(after: close)
            var inQuotes = false
            while cursor < rest.endIndex {
                let character = rest[cursor]
                if character == "\"" { inQuotes.toggle() }
                if character == ",", !inQuotes,
                    rest[rest.index(after: cursor)...].drop(while: { $0 == " " }).first == "<"
                {
                    end = cursor
                    break
                }
                cursor = rest.index(after: cursor)
            }
            let parameters = rest[rest.index(after: close)..<end]
            if let url = URL(string: String(target), relativeTo: base)?.absoluteURL {
                for parameter in parameters.split(separator: ";") {
                    let pair = parameter.split(separator: "=", maxSplits: 1)
                    guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "rel" else {
                        continue
                    }
                    let rels = pair[1].trimmingCharacters(in: .whitespaces)
                        .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    for rel in rels.split(separator: " ") where result[rel.lowercased()] == nil {
                        result[rel.lowercased()] = url
                    }
                }
            }
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
        }
        return result
    }
}
