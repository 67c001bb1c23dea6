import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet

/// A transport that holds every request until the demo's driver lets it through, one at a time in a fixed
/// order (method, path and query; then arrival), so that requests which several tasks start at the same
/// virtual instant (a tick, the stream's backfill, the app's own call) reach the server in the same order on
/// every run, whatever the thread pool does. It keeps no URL after ordering and never logs one.
final class MastodonDemoTurnstile: MastodonTransport {
    private struct Waiting {
        let order: String
        let arrival: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        var arrivals = 0
        var inFlight = 0
        var open = false
        var quietAfter = ContinuousClock.now
        var seconds: [Int] = []
    }

    private let inner: any MastodonTransport
    private let state = LockedState(State())

    private let clock: TestClock

    /// A turnstile in front of `inner`; `clock` dates each request (``requestSeconds``).
    init(_ inner: any MastodonTransport, clock: TestClock) {
        self.inner = inner
        self.clock = clock
    }

    /// Requests held, and requests let through whose answer has not come back yet.
    var snapshot: (waiting: Int, inFlight: Int) { state.withLock { ($0.waiting.count, $0.inFlight) } }

    /// The virtual second of the day each request was sent at, in order.
    var requestSeconds: [Int] { state.withLock { $0.seconds } }

    /// Until when (real time) the callers of the latest answers may still be decoding and storing them, out of
    /// the driver's sight: 1 ms after an answer, four times what the server took to make it, and 1 ms per KB.
    var quietAfter: ContinuousClock.Instant { state.withLock { $0.quietAfter } }

    func response(for request: HTTPRequest) async throws -> HTTPResponse {
        let order = request.method.rawValue + " " + request.url.path + "?" + (request.url.query ?? "")
        let second = Int(clock.now.offset.components.seconds)
        state.withLock { $0.seconds.append(second) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let passes = state.withLock { state -> Bool in
                if state.open {
                    state.inFlight += 1
                    return true
                }
                state.arrivals += 1
                state.waiting.append(Waiting(order: order, arrival: state.arrivals, continuation: continuation))
                return false
            }
            if passes { continuation.resume() }
        }
        // The server's own work on the answer (encoding it) stands for the caller's decoding of it, on this
        // machine under its current load: the grace is a few times that, plus 1 ms per KB for the store.
        let started = ContinuousClock.now
        var bytes = 0
        defer {
            let grace = .milliseconds(1) + (ContinuousClock.now - started) * 4 + .microseconds(bytes)
            state.withLock {
                $0.inFlight -= 1
                $0.quietAfter = max($0.quietAfter, ContinuousClock.now + grace)
            }
        }
        let response = try await inner.response(for: request)
        bytes = response.body.count
        return response
    }

    /// Lets the first held request through (in the fixed order); false when none is held.
    func releaseNext() -> Bool {
        let next = state.withLock { state -> Waiting? in
            guard
                let index = state.waiting.indices.min(by: {
                    (state.waiting[$0].order, state.waiting[$0].arrival)
                        < (state.waiting[$1].order, state.waiting[$1].arrival)
                })
            else { return nil }
            state.inFlight += 1
            return state.waiting.remove(at: index)
        }
        next?.continuation.resume()
        return next != nil
    }

    /// Lets every held and later request through at once (the demo is over: nothing may stay suspended).
    func openForGood() {
        let held = state.withLock { state -> [Waiting] in
            state.open = true
            state.inFlight += state.waiting.count
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiting in held { waiting.continuation.resume() }
    }
}
