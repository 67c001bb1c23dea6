import Foundation

/// One part of a `multipart/form-data` body.
public struct SandboxMultipartPart: Sendable, Equatable {
    /// The form field's name (`Content-Disposition: form-data; name="…"`).
    public var name: String
    /// The file name, for a file part.
    public var filename: String?
    /// The part's `Content-Type`, if given.
    public var contentType: String?
    /// The part's bytes.
    public var data: Data

    /// Splits `body` on `boundary`; throws on a part without a head or a name.
    static func parse(_ body: Data, boundary: String) throws -> [SandboxMultipartPart] {
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        let headEnd = Array("\r\n\r\n".utf8)
        var parts: [SandboxMultipartPart] = []
        guard var start = bytes.firstRange(of: delimiter)?.upperBound else {
            throw SandboxHTTPError(.badBody, detail: "no multipart boundary in the body")
        }
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if bytes[start...].starts(with: Array("--".utf8)) { return parts }
            guard bytes[start...].starts(with: Array("\r\n".utf8)) else {
                throw SandboxHTTPError(.badBody, detail: "a multipart delimiter is not followed by CRLF")
            }
            let partStart = start + 2
            guard let next = bytes[partStart...].firstRange(of: Array("\r\n".utf8) + delimiter),
                let head = bytes[partStart..<next.lowerBound].firstRange(of: headEnd)
            else { throw SandboxHTTPError(.badBody, detail: "an unterminated multipart part") }
            let headText = String(decoding: bytes[partStart..<head.lowerBound], as: UTF8.self)
            var name: String?
            var filename: String?
            var contentType: String?
            for line in headText.components(separatedBy: "\r\n") {
                let lower = line.lowercased()
                if lower.hasPrefix("content-disposition:") {
                    name = Self.parameter("name", in: line)
                    filename = Self.parameter("filename", in: line)
                } else if lower.hasPrefix("content-type:") {
                    contentType = line.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
                }
            }
            guard let name else { throw SandboxHTTPError(.badBody, detail: "a multipart part has no name") }
            parts.append(
                SandboxMultipartPart(
                    name: name, filename: filename, contentType: contentType,
                    data: Data(bytes[head.upperBound..<next.lowerBound])))
            start = next.upperBound
        }
    }

    private static func parameter(_ key: String, in line: String) -> String? {
        for piece in line.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == key else { continue }
            return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        }
        return nil
    }
}
