import Foundation
import TidingsNet

/// The server side of HTTP/1.1 on the wire: request heads in, responses out. Pure functions, so that
/// the byte-level rules are tested without sockets.
///
/// The client side (``TidingsNet/HTTPResponseParser``) parses responses; nothing here duplicates it.
enum SandboxHTTPWire {
    /// The most bytes a request head may have.
    static let maximumHeadSize = 64 * 1024
    /// The most bytes a request body may have.
    static let maximumBodySize = 16 * 1024 * 1024

    /// A parsed request head.
    struct Head: Sendable {
        var method: String
        var target: String
        var version: String
        var headers: HTTPHeaders
        /// The body length from `Content-Length` (0 when absent).
        var contentLength: Int
        /// Whether the connection stays open after the response.
        var keepAlive: Bool
    }

    /// Parses the bytes before the blank line.
    ///
    /// - Throws: ``SandboxHTTPError`` for a malformed request line, header field or length, a chunked
    ///   body (not supported: answered 411), or a body over ``maximumBodySize``.
    static func parseHead(_ bytes: ArraySlice<UInt8>) throws -> Head {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        while lines.last == "" { lines.removeLast() }
        let requestLine = lines.first?.split(separator: " ", omittingEmptySubsequences: false) ?? []
        guard requestLine.count == 3, !requestLine[0].isEmpty, requestLine[0].allSatisfy(\.isLetter),
            requestLine[1].hasPrefix("/"), requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0"
        else { throw SandboxHTTPError(.badRequest, detail: "malformed request line") }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: { $0 == " " || $0 == "\t" })
            else { throw SandboxHTTPError(.badRequest, detail: "malformed header field") }
            headers.add(
                name: String(line[..<colon]),
                value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        if headers["Transfer-Encoding"] != nil {
            throw SandboxHTTPError(
                .lengthRequired, detail: "chunked request bodies are not supported; send Content-Length")
        }
        var length = 0
        let lengths = Set(headers.values(for: "Content-Length"))
        if let value = lengths.first {
            // Digits only, and a bound before any arithmetic: Int(...) of a long digit string is nil, not a trap.
            guard lengths.count == 1, !value.isEmpty, value.count <= 10, value.allSatisfy(\.isASCIIDigit),
                let parsed = Int(value)
            else { throw SandboxHTTPError(.badRequest, detail: "malformed Content-Length") }
            guard parsed <= maximumBodySize else { throw SandboxHTTPError(.tooLarge, detail: "body too large") }
            length = parsed
        }
        let version = String(requestLine[2])
        let connection = headers["Connection"]?.lowercased() ?? ""
        let keepAlive = version == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
        return Head(
            method: String(requestLine[0]).uppercased(), target: String(requestLine[1]), version: version,
            headers: headers, contentLength: length, keepAlive: keepAlive)
    }

    /// The head of `response` (status line, headers, framing), for a request with `method`.
    static func encodeHead(_ response: SandboxHTTPResponse, keepAlive: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(response.status) \(SandboxHTTPResponse.reason(response.status))\r\n"
        for field in response.headers {
            let lower = field.name.lowercased()
            guard lower != "content-length", lower != "transfer-encoding", lower != "connection" else { continue }
            text += "\(field.name): \(field.value)\r\n"
        }
        if response.chunks != nil {
            text += "Transfer-Encoding: chunked\r\n"
        } else {
            text += "Content-Length: \(response.body.count)\r\n"
        }
        text += keepAlive ? "" : "Connection: close\r\n"
        return Array((text + "\r\n").utf8)
    }

    /// The body of `response` as framed on the wire (chunked when it has chunks); empty for HEAD.
    static func encodeBody(_ response: SandboxHTTPResponse, method: String) -> [UInt8] {
        guard method != "HEAD" else { return [] }
        guard let chunks = response.chunks else { return [UInt8](response.body) }
        var bytes: [UInt8] = []
        for chunk in chunks where !chunk.isEmpty {
            bytes += Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)
        }
        return bytes + Array("0\r\n\r\n".utf8)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
