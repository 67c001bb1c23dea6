import Foundation
import Testing

@_spi(Fuzzing) @testable import TidingsNet

/// The polling pool's response parser, fed the way the connection delivers bytes: in pieces.
@Suite(.timeLimit(.minutes(1))) struct HTTPResponseParserTests {
    /// Parses `text` delivered `step` bytes at a time, then the end of the connection.
    private func parse(_ text: String, step: Int = 1, limit: Int = 1024, cleanEnd: Bool = true) throws
        -> HTTPResponseParser.Response
    {
        try parse(Array(text.utf8), step: step, limit: limit, cleanEnd: cleanEnd)
    }

    private func parse(_ bytes: [UInt8], step: Int = 1, limit: Int = 1024, cleanEnd: Bool = true) throws
        -> HTTPResponseParser.Response
    {
        var parser = HTTPResponseParser(maximumBodySize: limit)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + step, bytes.count)
            parser.append(bytes[offset..<end])
            offset = end
            if let response = try parser.next() { return response }
        }
        return try parser.finish(cleanEnd: cleanEnd)
    }

    @Test(arguments: [1, 3, 1000])
    func aContentLengthBodyIsReadExactly(step: Int) throws {
        let response = try parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", step: step)
        #expect(response == .init(status: 200, keepAlive: true, body: Array("hello".utf8)))
    }

    @Test(arguments: [1, 7, 1000])
    func aChunkedBodyWithExtensionsAndTrailersIsDecoded(step: Int) throws {
        let response = try parse(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n!\r\n0\r\nX-Trailer: 1\r\n\r\n",
            step: step)
        #expect(response.body == Array("hello!".utf8))
        #expect(response.keepAlive)
    }

    @Test func aBodyWithoutLengthRunsToTheEndAndClosesTheConnection() throws {
        let response = try parse("HTTP/1.1 200 OK\r\n\r\nto the end", step: 4)
        #expect(response == .init(status: 200, keepAlive: false, body: Array("to the end".utf8)))
    }

    @Test func aBodyWithoutLengthEndedWithoutCloseNotifyIsTruncation() {
        #expect(throws: EngineIOError.self) {
            _ = try parse("HTTP/1.1 200 OK\r\n\r\ncut sho", cleanEnd: false)
        }
    }

    @Test func aLengthFramedBodyDoesNotDependOnCloseNotify() throws {
        let response = try parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", cleanEnd: false)
        #expect(response.body == Array("ok".utf8))
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n",
        "HTTP/1.1 020 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel",
        "HTTP/2 200 OK\r\n\r\n",
    ])
    func malformedOrOversizedResponsesFailWithATypedError(text: String) {
        #expect(throws: EngineIOError.self) { _ = try parse(text, step: 3) }
    }

    @Test func chunksAddingUpPastTheLimitAreRefusedWithoutOverflow() {
        // The second size plus the body so far would overflow Int if added unchecked.
        #expect(throws: EngineIOError.self) {
            _ = try parse(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nfffffffffffffff\r\n", limit: Int.max)
        }
    }

    @Test func headersAboveTheLimitAreRefusedBeforeTheEndArrives() {
        var parser = HTTPResponseParser(maximumBodySize: 10)
        parser.append(Array("HTTP/1.1 200 OK\r\nX: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 70_000))
        #expect(throws: EngineIOError.self) { _ = try parser.next() }
    }

    @Test func noBodyStatusesEndAtTheHeaders() throws {
        var parser = HTTPResponseParser(maximumBodySize: 10)
        parser.append(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        #expect(try parser.next() == .init(status: 204, keepAlive: true, body: []))
    }

    @Test func nothingReceivedIsReportedSoTheCallerCanRetryAStaleConnection() {
        var parser = HTTPResponseParser(maximumBodySize: 10)
        #expect(!parser.hasReceivedBytes)
        parser.append([UInt8]())
        #expect(!parser.hasReceivedBytes)
        parser.append(Array("H".utf8))
        #expect(parser.hasReceivedBytes)
    }

    // MARK: Fuzz regressions

    static let httpFolder = Fixtures.root.appendingPathComponent("fuzz/http")
    static let handshakeFolder = Fixtures.root.appendingPathComponent("fuzz/websocket-handshake")

    static func inputs(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".bin") }
            .sorted()
    }

    @Test func theRegressionFoldersAreNotEmpty() {
        #expect(!Self.inputs(in: Self.httpFolder).isEmpty)
        #expect(!Self.inputs(in: Self.handshakeFolder).isEmpty)
    }

    /// Replays the FuzzHTTPResponse steps: pieces sized by the first byte, a body within the limit
    /// and no larger than the input, a status in 100…599.
    @Test(arguments: inputs(in: httpFolder))
    func httpResponseInputsReplayWithoutTrapping(name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: Self.httpFolder.appendingPathComponent(name)))
        guard let first = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        for cleanEnd in [true, false] {
            if let response = try? parse(body, step: Int(first % 32) + 1, cleanEnd: cleanEnd) {
                #expect(response.body.count <= min(1024, body.count))
                #expect((100...599).contains(response.status))
            }
        }
    }

    /// Replays the FuzzWebSocketHandshake steps: a prefix chosen by the first byte, then the whole.
    @Test(arguments: inputs(in: handshakeFolder))
    func handshakeResponseInputsReplayWithoutTrapping(name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: Self.handshakeFolder.appendingPathComponent(name)))
        guard let first = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        let split = body.isEmpty ? 0 : Int(first) * body.count / 255
        do {
            _ = try WebSocketHandshakeFuzzing.parseResponse(body, split: split)
        } catch {
            #expect(!error.description.isEmpty)
        }
    }

    @Test func theRFCExampleHandshakeResponseIsAccepted() throws {
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: chat\r\n\r\n"
        #expect(try WebSocketHandshakeFuzzing.parseResponse(Array(response.utf8), split: 10))
    }
}
