import Foundation
import TidingsCore
import TidingsOpenMates

/// The keys the seeds in Tests/Fixtures/fuzz/openmates/ were sealed with, so mutations reach AES-GCM.
let chatKey = try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x11, count: 32))
let masterKey = try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x22, count: 32))

/// Feeds arbitrary bytes to the OpenMates wire decoder and the content-blob parser:
/// - as a WebSocket frame: `OpenMatesEnvelope(frame:)` then `OpenMatesServerEvent(_:)`; an envelope that
///   decodes must read back equal from its own text;
/// - as decoded blob bytes, opened with the chat key: a plaintext is never longer than the input;
/// - as text: a base64 content blob (opened with the chat key) and a wrapped chat key (unwrapped with the
///   master key).
/// Every refusal is a typed error by signature; a trap or a broken invariant stops the run.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let envelope = try? OpenMatesEnvelope(frame: bytes) {
        _ = OpenMatesServerEvent(envelope)
        guard let again = try? OpenMatesEnvelope(text: envelope.text), again == envelope else {
            fatalError("an envelope did not survive its own text")
        }
    }
    if let blob = try? OpenMatesContentBlob(bytes: bytes), let plain = try? blob.open(with: chatKey) {
        guard plain.count <= count else { fatalError("a blob opened to more bytes than it had") }
    }
    if let text = String(validating: bytes, as: UTF8.self) {
        if let blob = try? OpenMatesContentBlob(base64: text) { _ = try? blob.openText(with: chatKey) }
        _ = try? OpenMatesChatKeyWrap.unwrap(text, masterKey: masterKey)
    }
    return 0
}
