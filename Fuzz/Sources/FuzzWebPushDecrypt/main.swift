import Foundation
import TidingsPush

/// The subscription every input is decrypted for: RFC 8291 Appendix A's user agent, so that the RFC's message and
/// the seeds in Tests/Fixtures/fuzz/webpush/ (made for these keys) reach the records, not just the header.
private let keys = try! WebPushSubscriptionKeys(
    base64URLPrivateKey: "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94", base64URLAuthSecret: "BTBZMqHH6r4Tts7J_aSIgg")
private let decryptor = WebPushDecryptor(keys: keys)
/// The `aesgcm` seeds' sender key and salt (RFC 8291 Appendix A's application server key and salt).
private let legacy = try! WebPushLegacyParameters(
    cryptoKey: "dh=BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8",
    encryption: "salt=DGv6ra1nlYgDCS1FRnbzlw")

/// Feeds arbitrary bytes to the Web Push decoder: as an `aes128gcm` body, as an `aesgcm` body with fixed
/// parameters, and (as text, split at the first newline) as `Crypto-Key` and `Encryption` header values with
/// the rest as the body. Nothing may trap; a decryption that succeeds can never return more bytes than it was
/// given.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: count))
    if let plaintext = try? decryptor.decryptAES128GCM(bytes), plaintext.count > bytes.count {
        fatalError("aes128gcm returned \(plaintext.count) bytes from \(bytes.count)")
    }
    if let plaintext = try? decryptor.decryptAESGCM(bytes, parameters: legacy), plaintext.count > bytes.count {
        fatalError("aesgcm returned \(plaintext.count) bytes from \(bytes.count)")
    }
    let lines = bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
    if lines.count == 3 {
        let cryptoKey = String(decoding: lines[0], as: UTF8.self)
        let encryption = String(decoding: lines[1], as: UTF8.self)
        _ = try? decryptor.decrypt(
            Array(lines[2]), contentEncoding: "aesgcm", cryptoKey: cryptoKey, encryption: encryption)
    }
    return 0
}
