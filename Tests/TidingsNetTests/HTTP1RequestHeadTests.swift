import Foundation
import Testing

@_spi(Fuzzing) @testable import TidingsNet

/// The bytes ``HTTPClient``'s own transport writes, and what its response parser keeps for it (headers, HEAD,
/// bytes counted past the limit): pure functions, no socket.
@Suite(.timeLimit(.minutes(1))) struct HTTP1RequestHeadTests {
    private func head(
        _ method: String, _ url: String, fields: [(name: String, value: String)] = [], body: Data? = nil
    ) throws -> String {
        let bytes = try HTTP1RequestHead.bytes(method: method, url: URL(string: url)!, fields: fields, body: body)
        return String(decoding: bytes, as: UTF8.self)
    }

    private func head(_ url: String, fields: [(name: String, value: String)] = []) throws -> String {
        try head("GET", url, fields: fields)
    }

    @Test func theHostHeaderBracketsIPv6AndLeavesOutTheDefaultPort() throws {
        #expect(try head("http://[::1]:8080/a").contains("\r\nHost: [::1]:8080\r\n"))
        #expect(try head("https://[2001:db8::1]/a").contains("\r\nHost: [2001:db8::1]\r\n"))
        #expect(try head("https://example.org:443/").contains("\r\nHost: example.org\r\n"))
        #expect(try head("http://example.org:443/").contains("\r\nHost: example.org:443\r\n"))
    }

    @Test func theTargetKeepsATrailingSlashAndTheEncodedQuery() throws {
        let text = try head("http://example.org/socket.io/?EIO=4&q=a%20b")
        #expect(text.hasPrefix("GET /socket.io/?EIO=4&q=a%20b HTTP/1.1\r\n"))
        #expect(try head("http://example.org").hasPrefix("GET / HTTP/1.1\r\n"))
    }

    @Test func framingHeadersFromTheCallerAreLeftOutAndTheBodyIsCounted() throws {
        let text = try head(
            "POST", "http://example.org/x",
            fields: [
                ("Content-Length", "1"), ("Transfer-Encoding", "chunked"), ("Connection", "close"),
                ("Accept-Encoding", "gzip"), ("Host", "evil.example"), ("X-Kept", "1"),
            ], body: Data("hello".utf8))
        #expect(
            text
                == "POST /x HTTP/1.1\r\nHost: example.org\r\nX-Kept: 1\r\nAccept: */*\r\nContent-Length: 5\r\n\r\nhello"
        )
    }

    @Test func aPOSTWithoutBodySaysSoAndAGETSaysNothing() throws {
        #expect(try head("POST", "http://example.org/").contains("\r\nContent-Length: 0\r\n"))
        #expect(try !head("GET", "http://example.org/").contains("Content-Length"))
    }

    @Test(arguments: ["GET /", "GE\r\nT", "", "G\u{0}T"])
    func aMethodThatIsNotATokenIsRefused(method: String) {
        #expect(throws: HTTP1RequestHead.Refusal.self) { _ = try head(method, "http://example.org/") }
    }

    @Test(arguments: [("X-A", "a\r\nInjected: 1"), ("X-A", "a\nb"), ("X A", "b"), ("X-A\r\n", "b")])
    func aFieldThatWouldBreakItsLineIsRefused(field: (String, String)) {
        #expect(throws: HTTP1RequestHead.Refusal.self) {
            _ = try head("http://example.org/", fields: [(field.0, field.1)])
        }
    }

    // MARK: The parser as the transport uses it

    @Test func headerFieldsAreKeptInOrderWithRepeatedOnesApart() throws {
        var parser = HTTPResponseParser(maximumBodySize: 100)
        parser.append(
            Array(
                "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2; Expires=Wed, 21 Oct 2099 07:28:00 GMT\r\nContent-Length: 0\r\n\r\n"
                    .utf8))
        #expect(try parser.next()?.status == 200)
        #expect(parser.headerFields.map(\.name) == ["Set-Cookie", "set-cookie", "Content-Length"])
        #expect(parser.headerFields[1].value == "b=2; Expires=Wed, 21 Oct 2099 07:28:00 GMT")
    }

    @Test func aHEADResponseEndsAtItsHeadersWhateverItsLength() throws {
        var parser = HTTPResponseParser(maximumBodySize: 10, responseToHEAD: true)
        parser.append(Array("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n".utf8))
        let response = try parser.next()
        #expect(response?.body == [])
        #expect(response?.keepAlive == true)
    }

    @Test func bytesPastTheLimitAreCountedUpToThePieceThatPassedIt() {
        var parser = HTTPResponseParser(maximumBodySize: 8)
        parser.append(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghi".utf8))
        #expect(throws: EngineIOError.self) { _ = try parser.next() }
        #expect(parser.bodyBytesReceived == 9)
    }

    @Test func aLargeFixedBodyIsTakenAsItArrives() throws {
        var parser = HTTPResponseParser(maximumBodySize: 100)
        parser.append(Array("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.bodyBytesReceived == 3)
        parser.append(Array("def".utf8))
        #expect(try parser.next()?.body == Array("abcdef".utf8))
    }
}

#if TIDINGS_OPENSSL
    /// The redirect rules of ``HTTPClient``'s own transport, as a pure function of the response and the hop.
    @Suite(.timeLimit(.minutes(1))) struct HTTPClientRedirectRuleTests {
        private func next(_ status: Int, _ method: String, location: String?, body: Data? = Data("b".utf8))
            -> HTTPClient.Hop?
        {
            var headers = HTTPHeaders()
            if let location { headers["Location"] = location }
            let from = URL(string: "https://example.org/a/b?x=1")!
            let response = HTTPResponse(status: status, headers: headers, body: Data(), url: from)
            return HTTPClient.redirect(from: response, hop: .init(method: method, url: from, body: body))
        }

        @Test func aRelativeLocationResolvesAgainstTheHop() {
            #expect(next(302, "GET", location: "c")?.url.absoluteString == "https://example.org/a/c")
            #expect(next(302, "GET", location: "//other.example/d")?.url.absoluteString == "https://other.example/d")
        }

        @Test func noLocationOrANonHTTPOneEndsTheChain() {
            #expect(next(302, "GET", location: nil) == nil)
            #expect(next(302, "GET", location: "ftp://example.org/") == nil)
            #expect(next(200, "GET", location: "/x") == nil)
            #expect(next(304, "GET", location: "/x") == nil)
        }

        @Test func methodsAndBodiesFollowTheStatus() {
            let see = next(303, "PUT", location: "/x")
            #expect(see?.method == "GET")
            #expect(see?.body == nil)
            #expect(see?.droppedBody == true)
            #expect(next(303, "HEAD", location: "/x")?.method == "HEAD")
            #expect(next(302, "DELETE", location: "/x")?.method == "DELETE")
            let temporary = next(307, "POST", location: "/x")
            #expect(temporary?.method == "POST")
            #expect(temporary?.body == Data("b".utf8))
            #expect(temporary?.droppedBody == false)
        }
    }
#endif
