import Foundation
import TidingsCore

// Apple platforms: TidingsNet has no TLS of its own there (COpenSSL is Linux-only), and URLSession is part
// of Foundation, so ``HTTPClient`` keeps using it. On Linux, HTTPClient+Transport.swift is used instead.
#if !TIDINGS_OPENSSL

    extension HTTPClient {
        /// The client's own ephemeral session: no shared cookies, cache or credential store.
        static func makeSession(cookies: HTTPCookieJar) -> (URLSession, HTTPSessionDelegate) {
            let sessionConfiguration = URLSessionConfiguration.ephemeral
            // Cookies are ours alone: the session must neither read nor write any shared store.
            sessionConfiguration.httpCookieStorage = nil
            sessionConfiguration.httpShouldSetCookies = false
            sessionConfiguration.httpCookieAcceptPolicy = .never
            sessionConfiguration.urlCache = nil
            sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
            // The real limit is the clock-based timeout; URLSession's own must never fire first.
            sessionConfiguration.timeoutIntervalForRequest = 7 * 24 * 3600
            sessionConfiguration.timeoutIntervalForResource = 7 * 24 * 3600
            let delegate = HTTPSessionDelegate(cookies: cookies)
            return (URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil), delegate)
        }

        private func prepare(_ request: HTTPRequest) -> URLRequest {
            var urlRequest = URLRequest(url: request.url)
            urlRequest.httpMethod = request.method.rawValue
            urlRequest.httpShouldHandleCookies = false
            urlRequest.timeoutInterval = 7 * 24 * 3600
            for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
            if let userAgent = configuration.userAgent, request.headers["User-Agent"] == nil {
                urlRequest.setValue(userAgent, forHTTPHeaderField: "User-Agent")
            }
            if let token = request.bearerToken {
                urlRequest.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            }
            if let cookie = cookies.cookieHeader(for: request.url) {
                let existing = request.headers["Cookie"].map { "\($0); " } ?? ""
                urlRequest.setValue(existing + cookie, forHTTPHeaderField: "Cookie")
            }
            urlRequest.httpBody = request.body
            return urlRequest
        }

        /// One call over URLSession, which follows redirects through ``HTTPSessionDelegate``.
        func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
            let urlRequest = prepare(request)
            let limit = configuration.maximumResponseSize
            let delegate = self.delegate
            // No completion handler: a task with one would not report its body to the delegate, which
            // is what counts the bytes and cancels the transfer once the limit is passed.
            let task = session.dataTask(with: urlRequest)
            let waiter = LockedState(ResponseWaiter<HTTPSessionDelegate.Outcome>.idle)
            let outcome = await withTaskCancellationHandler {
                await withCheckedContinuation {
                    (continuation: CheckedContinuation<HTTPSessionDelegate.Outcome, Never>) in
                    guard waiter.withLock({ $0.wait(continuation) }) else {
                        continuation.resume(returning: .failed(CancellationError()))
                        return
                    }
                    delegate.start(task, limit: limit) { outcome in
                        waiter.withLock { $0.finish() }?.resume(returning: outcome)
                    }
                }
            } onCancel: {
                // URLSession does not always report the end of a cancelled task (seen on Linux): the caller is
                // resumed here, whatever the task does next.
                waiter.withLock { $0.cancel() }?.resume(returning: .failed(CancellationError()))
                task.cancel()
            }
            let data: Data
            let urlResponse: URLResponse?
            switch outcome {
            case .finished(let body, let response):
                (data, urlResponse) = (body, response)
            case .tooLarge:
                throw HTTPError(.transport, request: request, underlying: "the response body exceeds \(limit) bytes")
            case .failed(let error):
                if Task.isCancelled { throw CancellationError() }
                let detail =
                    (error as? URLError).map { "URLError \($0.code.rawValue)" } ?? String(describing: type(of: error))
                throw HTTPError(.transport, request: request, underlying: detail)
            }
            guard let http = urlResponse as? HTTPURLResponse else {
                throw HTTPError(.transport, request: request, underlying: "not an HTTP response")
            }
            return HTTPResponse(
                status: http.statusCode, headers: Self.headers(of: http), body: data, url: http.url ?? request.url)
        }

        static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
            var headers = HTTPHeaders()
            for (key, value) in response.allHeaderFields {
                guard let name = key as? String, let value = value as? String else { continue }
                if name.caseInsensitiveCompare("Set-Cookie") == .orderedSame {
                    // Foundation joins repeated Set-Cookie fields with ", "; split them back apart.
                    for cookie in splitSetCookie(value) { headers.add(name: name, value: cookie) }
                } else {
                    headers.add(name: name, value: value)
                }
            }
            return headers
        }
    }

    /// Who resumes a request's caller: the completion handler or the cancellation, whichever comes first.
    private enum ResponseWaiter<Value> {
        case idle
        case waiting(CheckedContinuation<Value, Never>)
        case cancelled
        case finished

        /// Stores the caller's continuation; false when the request was cancelled before it started.
        mutating func wait(_ continuation: CheckedContinuation<Value, Never>) -> Bool {
            guard case .idle = self else { return false }
            self = .waiting(continuation)
            return true
        }

        /// Takes the continuation for the request's end, at most once.
        mutating func finish() -> CheckedContinuation<Value, Never>? {
            defer { self = .finished }
            if case .waiting(let continuation) = self { return continuation }
            return nil
        }

        /// Takes the continuation for the cancellation, at most once; a later `wait` then fails.
        mutating func cancel() -> CheckedContinuation<Value, Never>? {
            switch self {
            case .waiting(let continuation):
                self = .cancelled
                return continuation
            case .idle:
                self = .cancelled
                return nil
            case .cancelled, .finished:
                return nil
            }
        }
    }
#endif
