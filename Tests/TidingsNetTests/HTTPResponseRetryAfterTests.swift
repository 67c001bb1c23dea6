import Foundation
import Testing
import TidingsNet

/// `HTTPResponse.retryAfter` cannot be stretched by a hostile server or a skewed local clock.
@Suite(.timeLimit(.minutes(1))) struct HTTPResponseRetryAfterTests {
    private let url = URL(string: "https://example.org/api")!

    private func response(_ headers: HTTPHeaders) -> HTTPResponse {
        HTTPResponse(status: 429, headers: headers, body: Data(), url: url)
    }

    @Test func deltaSecondsAreReadAsGiven() {
        #expect(response(["Retry-After": "120"]).retryAfter(now: Date()) == .seconds(120))
    }

    @Test func aHugeDelayIsClampedToTheMaximum() {
        let answer = response(["Retry-After": "999999999999"])
        #expect(answer.retryAfter(now: Date()) == .seconds(3600))
        #expect(answer.retryAfter(now: Date(), maximum: .seconds(60)) == .seconds(60))
    }

    @Test func anHTTPDateIsMeasuredOnTheServersClock() {
        // The server says it is 07:28:00 and asks for 07:30:00; the local clock is a day behind.
        let answer = response(["Date": "Wed, 21 Oct 2015 07:28:00 GMT", "Retry-After": "Wed, 21 Oct 2015 07:30:00 GMT"])
        let localNow = Date(timeIntervalSince1970: 1_445_412_480 - 86_400)
        #expect(answer.retryAfter(now: localNow) == .seconds(120))
    }

    @Test func withoutADateHeaderTheLocalClockStandsIn() {
        let answer = response(["Retry-After": "Wed, 21 Oct 2015 07:30:00 GMT"])
        #expect(answer.retryAfter(now: Date(timeIntervalSince1970: 1_445_412_480)) == .seconds(120))
        #expect(answer.retryAfter(now: Date(timeIntervalSince1970: 1_445_412_480 + 600)) == .zero)
    }

    @Test func garbageIsNoDelay() {
        #expect(response(["Retry-After": "soon"]).retryAfter(now: Date()) == nil)
    }
}
