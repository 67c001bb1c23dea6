import Foundation

extension TidingsCrypto {
    /// `TidingsCrypto.PEM` reads and writes the text armour of RFC 7468 (`-----BEGIN LABEL-----`, base64, `-----END LABEL-----`).
    public enum PEM {
        /// Wraps DER bytes as PEM with 64-character lines and a trailing newline.
        public static func encode(_ der: [UInt8], label: String) -> String {
            let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
        }

        /// Returns the DER bytes of the first block labelled `label`; text around the block is ignored.
        ///
        /// - Throws: `CryptoError.invalidKey` when there is no such block or its body is not base64.
        public static func decode(_ text: String, label: String) throws(CryptoError) -> [UInt8] {
            let begin = "-----BEGIN \(label)-----"
            let end = "-----END \(label)-----"
            guard let start = text.range(of: begin),
                let stop = text.range(of: end, range: start.upperBound..<text.endIndex)
            else {
                throw .invalidKey("no PEM block labelled \(label)")
            }
            let body = text[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            guard !body.isEmpty, let data = Data(base64Encoded: String(body)) else {
                throw .invalidKey("PEM block \(label) is not valid base64")
            }
            return [UInt8](data)
        }
    }
}
