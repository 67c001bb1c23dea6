import Foundation
import TidingsCore

// Apple platforms only: on Linux ``HTTPClient`` uses its own transport (HTTP1Transport).
#if !TIDINGS_OPENSSL

    /// The delegate of an ``HTTPClient``'s session: it receives every body chunk, enforcing the size
    /// limit from the declared `Content-Length` and while the body arrives, and keeps redirects safe.
    ///
    /// It is the session's delegate, not each task's, because swift-corelibs-foundation never calls a
    /// per-task delegate.
    final class HTTPSessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
        /// How one request ended: its body and response, or why not.
        enum Outcome {
            case finished(Data, URLResponse?)
            case tooLarge
            case failed(any Error)
        }

        private struct Reception {
            var body = Data()
            var limit: Int
            var finish: @Sendable (Outcome) -> Void
        }

        let cookies: HTTPCookieJar
        private let receptions = LockedState<[Int: Reception]>([:])
        private let received = LockedState(0)

        init(cookies: HTTPCookieJar) { self.cookies = cookies }

        /// Body bytes delivered by URLSession so far, over all tasks (including the few that arrive
        /// after a task past its limit was cancelled).
        var bytesReceived: Int { received.withLock { $0 } }

        /// Starts `task`, collecting at most `limit` body bytes; `finish` is called once, on the session's
        /// delegate queue: at the task's end, or as soon as the body is known to be past `limit`.
        func start(_ task: URLSessionDataTask, limit: Int, finish: @escaping @Sendable (Outcome) -> Void) {
            receptions.withLock { $0[task.taskIdentifier] = Reception(limit: limit, finish: finish) }
            task.resume()
        }

        /// Refuses a body whose declared length is past the limit as soon as its header arrives, before any of it is
        /// counted; a body of unknown length is judged as it arrives.
        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            let declared = Self.declaredBodyLength(of: response, method: dataTask.originalRequest?.httpMethod)
            let refused = receptions.withLock { receptions -> Reception? in
                guard let declared, let limit = receptions[dataTask.taskIdentifier]?.limit, declared > limit else {
                    return nil
                }
                return receptions.removeValue(forKey: dataTask.taskIdentifier)
            }
            // swift-corelibs-foundation ignores the disposition (and never pauses the transfer for it): only
            // `cancel()` stops the task there.
            completionHandler(refused == nil ? .allow : .cancel)
            if let refused { refuse(dataTask, refused) }
        }

        /// The body length `response` announces in `Content-Length`, when that is the length of the body the
        /// delegate will receive: not for a compressed body (it arrives decoded, of another length) nor for a
        /// response that has no body whatever its header says (HEAD, 1xx, 204, 304).
        static func declaredBodyLength(of response: URLResponse, method: String?) -> Int? {
            guard response.expectedContentLength >= 0, method?.uppercased() != "HEAD",
                let http = response as? HTTPURLResponse
            else { return nil }
            if !(200...599).contains(http.statusCode) || http.statusCode == 204 || http.statusCode == 304 { return nil }
            if let encoding = http.value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces),
                !encoding.isEmpty, encoding.lowercased() != "identity"
            {
                return nil
            }
            return Int(exactly: response.expectedContentLength)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            received.withLock { $0 += data.count }
            let overLimit = receptions.withLock { receptions -> Reception? in
                guard var reception = receptions[dataTask.taskIdentifier] else { return nil }
                // Subtraction, not addition: `count + data.count` could not trap here, but the limit may be `Int.max`.
                if data.count > reception.limit - reception.body.count {
                    return receptions.removeValue(forKey: dataTask.taskIdentifier)
                }
                reception.body.append(data)
                receptions[dataTask.taskIdentifier] = reception
                return nil
            }
            if let overLimit { refuse(dataTask, overLimit) }
        }

        /// Answers the caller at once and cancels the transfer; what still arrives for `task` is counted and dropped.
        ///
        /// The caller does not wait for the task's end: on swift-corelibs-foundation the cancellation reaches the
        /// session's work queue only after the socket reads queued before it, and on loopback libcurl was measured
        /// reading tens of MiB (once 10 GiB) of an endless body after the limit before the task ended.
        private func refuse(_ task: URLSessionDataTask, _ reception: Reception) {
            reception.finish(.tooLarge)
            task.cancel()
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            // A refused task's reception is gone: its caller has had its answer.
            guard let reception = receptions.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            if let error {
                reception.finish(.failed(error))
            } else {
                reception.finish(.finished(reception.body, task.response))
            }
        }

        /// Keeps redirects safe and stateful: cookies set by the redirect response are stored, the next
        /// request carries the jar's cookies for its own URL, and `Authorization` does not follow to
        /// another host.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            var next = request
            if let from = response.url {
                cookies.store(setCookieHeaders: HTTPClient.headers(of: response).values(for: "Set-Cookie"), from: from)
            }
            if let url = next.url {
                if !HTTPClient.redirectKeepsAuthorization(
                    original: task.originalRequest?.url, from: response.url, to: url)
                {
                    next.setValue(nil, forHTTPHeaderField: "Authorization")
                }
                next.setValue(cookies.cookieHeader(for: url), forHTTPHeaderField: "Cookie")
            }
            completionHandler(next)
        }
    }
#endif
