import Foundation
import PeerSupport
import Testing
import TidingsCore

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct HTTPCookieJarTests {
    private let site = URL(string: "https://chat.example.org/api/v1/login")!

    @Test func maxAgeWinsOverExpiresAndRunsOnTheInjectedDate() {
        let date = TestDate()
        let jar = HTTPCookieJar(now: { date.now })
        jar.store(
            setCookieHeaders: ["sid=abc; Max-Age=60; Expires=Fri, 01 Jan 2100 00:00:00 GMT; Path=/"], from: site)
        #expect(jar.cookieHeader(for: site) == "sid=abc")
        date.advance(seconds: 60)
        #expect(jar.cookieHeader(for: site) == nil)
        #expect(jar.all.isEmpty)
    }

    @Test func anExpiresDateInThePastOrMaxAgeZeroDeletesTheCookie() {
        let jar = HTTPCookieJar(now: { Date(timeIntervalSince1970: 1_800_000_000) })
        jar.store(setCookieHeaders: ["a=1; Path=/", "b=2; Path=/"], from: site)
        jar.store(setCookieHeaders: ["a=gone; Max-Age=0; Path=/"], from: site)
        jar.store(setCookieHeaders: ["b=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/"], from: site)
        #expect(jar.cookieHeader(for: site) == nil)
    }

    @Test func domainPathAndSecureAreRespected() {
        let jar = HTTPCookieJar()
        jar.store(
            setCookieHeaders: [
                "host=1",  // host-only, default path /api/v1
                "wide=2; Domain=.example.org; Path=/",
                "secret=3; Secure; Path=/",
                "evil=4; Domain=other.org; Path=/",  // not our domain: refused
            ], from: site)
        #expect(
            jar.cookieHeader(for: URL(string: "https://chat.example.org/api/v1/timelines")!)
                == "host=1; wide=2; secret=3")
        #expect(jar.cookieHeader(for: URL(string: "https://media.example.org/")!) == "wide=2")
        #expect(jar.cookieHeader(for: URL(string: "http://chat.example.org/")!) == "wide=2")
        #expect(jar.cookieHeader(for: URL(string: "https://chat.example.org/api/v10")!) == "wide=2; secret=3")
        #expect(jar.cookieHeader(for: URL(string: "https://other.org/")!) == nil)
    }

    @Test func aNewValueReplacesTheOldOneAndRemoveAllForgetsEverything() {
        let jar = HTTPCookieJar()
        jar.store(setCookieHeaders: ["sid=1; Path=/"], from: site)
        jar.store(setCookieHeaders: ["sid=2; Path=/"], from: site)
        #expect(jar.cookieHeader(for: site) == "sid=2")
        jar.removeAll()
        #expect(jar.cookieHeader(for: site) == nil)
    }

    @Test func garbageSetCookieValuesAreIgnored() {
        let jar = HTTPCookieJar()
        jar.store(setCookieHeaders: ["", "novalue", "=x", ";;;", "ok=1; Max-Age=abc; Path=/"], from: site)
        #expect(jar.all.map(\.name) == ["ok"])
        #expect(jar.all.first?.expires == nil)
    }

    @Test func commaJoinedSetCookieHeadersSplitOutsideDates() {
        let combined = "a=1; Path=/, b=2; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/,c=3"
        #expect(
            HTTPClient.splitSetCookie(combined) == [
                "a=1; Path=/", "b=2; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/", "c=3",
            ])
    }
}

@Suite(.timeLimit(.minutes(1))) struct HTTPBodyEncodingTests {
    @Test func formEncodingFollowsTheURLStandard() {
        #expect(
            FormURLEncoding.encode([("q", "a b&c=d+e/ü"), ("x", "*-._~")]) == "q=a+b%26c%3Dd%2Be%2F%C3%BC&x=*-._%7E")
    }

    @Test func multipartHasExactlyTheRFC7578Layout() {
        var form = MultipartFormData(boundary: "XyZ")
        form.addField(name: "a", value: "1")
        form.addFile(name: "f", filename: "x\".txt", contentType: "text/plain", data: Data("hi".utf8))
        let expected =
            "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x%22.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nhi\r\n--XyZ--\r\n"
        #expect(String(decoding: form.encoded(), as: UTF8.self) == expected)
        #expect(form.contentType == "multipart/form-data; boundary=XyZ")
    }

    @Test func linkHeadersYieldEveryRelation() {
        let base = URL(string: "https://mastodon.social/api/v1/timelines/home")!
        let links = LinkHeader.parse(
            "<https://mastodon.social/api/v1/timelines/home?max_id=109>; rel=\"next\", "
                + "</api/v1/timelines/home?min_id=200>; rel=\"prev\"; title=\"a, b\"", base: base)
        #expect(links["next"]?.absoluteString == "https://mastodon.social/api/v1/timelines/home?max_id=109")
        #expect(links["prev"]?.absoluteString == "https://mastodon.social/api/v1/timelines/home?min_id=200")
        #expect(LinkHeader.parse("garbage, <>; rel", base: base).isEmpty)
        #expect(LinkHeader.parse("").isEmpty)
    }

    @Test func errorDescriptionsLeaveOutTheQuery() {
        let request = HTTPRequest(url: URL(string: "https://h.example/v1/ws?sessionId=1&token=SECRET#frag")!)
        let error = HTTPError(.timedOut, request: request)
        #expect(error.target == "https://h.example/v1/ws")
        #expect(!error.description.contains("SECRET"))
    }
}
