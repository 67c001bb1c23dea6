import Foundation
import TidingsCore

// Linux: HTTPClient over its own HTTP/1.1 transport, so FoundationNetworking (and libcurl) is never linked.
#if TIDINGS_OPENSSL
    extension HTTPClient {
        /// One call: the request and every redirect hop, each with its own cookies and `Authorization`
        /// decision. The caller bounds the whole of it with the request's timeout.
        func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
            let limit = configuration.maximumResponseSize
            var hop = Hop(method: request.method.rawValue, url: request.url, body: request.body)
            var keepsAuthorization = true
            var redirects = 0
            while true {
                let fields = headerFields(for: request, hop: hop, keepsAuthorization: keepsAuthorization)
                let exchange: HTTP1Transport.Exchange
                do {
                    exchange = try await transport.exchange(
                        method: hop.method, url: hop.url, fields: fields, body: hop.body, limit: limit)
                } catch let failure as HTTP1Transport.Failure {
                    throw HTTPError(.transport, request: request, underlying: failure.reason)
                }
                let response = HTTPResponse(
                    status: exchange.status, headers: exchange.headers, body: exchange.body, url: hop.url)
                guard let next = Self.redirect(from: response, hop: hop) else { return response }
                guard redirects < Self.maximumRedirects else {
                    throw HTTPError(
                        .transport, request: request, underlying: "more than \(Self.maximumRedirects) redirects")
                }
                redirects += 1
                // The redirect's own cookies count for the next hop (a login that sets its session and redirects).
                cookies.store(setCookieHeaders: response.headers.values(for: "Set-Cookie"), from: hop.url)
                keepsAuthorization =
                    keepsAuthorization
                    && Self.redirectKeepsAuthorization(original: request.url, from: hop.url, to: next.url)
                logger.debug("\(hop.method) \(hop.url.redactedForLogs) → \(response.status), following")
                hop = next
            }
        }

        /// What changes from one hop to the next.
        struct Hop {
            var method: String
            var url: URL
            var body: Data?
            /// Whether this hop is the request as the caller built it (not a redirect).
            var isFirst = true
            /// Whether the body was dropped by a method change, taking its `Content-Type` with it.
            var droppedBody = false
        }

        /// The header fields of one hop, in order: the caller's, the user agent, `Authorization` while the
        /// hops stay on the original origin, and the jar's cookies for this hop's URL (after the caller's own
        /// `Cookie` on the first hop only, as URLSession did).
        func headerFields(for request: HTTPRequest, hop: Hop, keepsAuthorization: Bool) -> [(
            name: String, value: String
        )] {
            var fields: [(name: String, value: String)] = []
            let tokenGoes = keepsAuthorization && request.bearerToken != nil
            for (name, value) in request.headers {
                let lower = name.lowercased()
                if lower == "cookie" { continue }
                if lower == "authorization" && (tokenGoes || !keepsAuthorization) { continue }
                if hop.droppedBody && (lower == "content-type" || lower == "content-length") { continue }
                fields.append((name, value))
            }
            if let userAgent = configuration.userAgent, request.headers["User-Agent"] == nil {
                fields.append(("User-Agent", userAgent))
            }
            if tokenGoes, let token = request.bearerToken { fields.append(("Authorization", "Bearer \(token)")) }
            let own = hop.isFirst ? request.headers.values(for: "Cookie") : []
            let jar = cookies.cookieHeader(for: hop.url)
            if let jar {
                fields.append(("Cookie", own.map { $0 + "; " }.joined() + jar))
            } else {
                for value in own { fields.append(("Cookie", value)) }
            }
            return fields
        }

        /// The next hop for a redirect response, or `nil` when `response` is final (not a redirect, no usable
        /// `Location`, or one leaving http(s)).
        static func redirect(from response: HTTPResponse, hop: Hop) -> Hop? {
            guard [301, 302, 303, 307, 308].contains(response.status),
                let location = response.headers["Location"], !location.isEmpty,
                let target = URL(string: location, relativeTo: hop.url)?.absoluteURL,
                let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
                target.host?.isEmpty == false
            else { return nil }
            var next = Hop(
                method: hop.method, url: target, body: hop.body, isFirst: false, droppedBody: hop.droppedBody)
            let method = hop.method.uppercased()
            // RFC 9110 §15.4 and the Fetch standard: 303 means "GET this instead"; 301/302 turn only a POST into a
            // GET (what browsers and URLSession do); 307/308 repeat the request as it was.
            if (response.status == 303 && method != "HEAD")
                || ((response.status == 301 || response.status == 302) && method == "POST")
            {
                next.method = "GET"
                next.droppedBody = next.droppedBody || hop.body != nil || method == "POST"
                next.body = nil
            }
            return next
        }
    }
#endif
