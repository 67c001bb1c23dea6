import Foundation

/// A `RateLimitSignal` is what one HTTP response said about rate limits, as raw header text.
///
/// TidingsNet's HTTP client fills it from every response and hands it to
/// ``RateBudget/record(_:host:account:family:)``;
/// parsing happens there, so a malformed header is ignored instead of failing the response.
public struct RateLimitSignal: Sendable, Hashable {
    /// The HTTP status code (429 means "too many requests").
    public var statusCode: Int
    /// `Retry-After`: delta-seconds or an HTTP-date.
    public var retryAfter: String?
    /// `X-RateLimit-Limit`: requests allowed per window.
    public var limit: String?
    /// `X-RateLimit-Remaining`: requests left in the current window.
    public var remaining: String?
    /// `X-RateLimit-Reset`: when the window resets (ISO-8601 on Mastodon; delta seconds, Unix
    /// seconds or Unix milliseconds elsewhere, told apart by ``RateLimitReset``).
    public var reset: String?
    /// `Date`: the server's clock when it answered, against which its dates are measured.
    public var date: String?

    /// Creates a signal from already-extracted header values.
    public init(
        statusCode: Int, retryAfter: String? = nil, limit: String? = nil, remaining: String? = nil,
        reset: String? = nil, date: String? = nil
    ) {
        self.statusCode = statusCode
        self.retryAfter = retryAfter
        self.limit = limit
        self.remaining = remaining
        self.reset = reset
        self.date = date
    }

    /// Creates a signal from response headers, matching names case-insensitively.
    public init(statusCode: Int, headers: [String: String]) {
        var lowercased: [String: String] = [:]
        for (name, value) in headers { lowercased[name.lowercased()] = value }
        self.init(
            statusCode: statusCode, retryAfter: lowercased["retry-after"], limit: lowercased["x-ratelimit-limit"],
            remaining: lowercased["x-ratelimit-remaining"], reset: lowercased["x-ratelimit-reset"],
            date: lowercased["date"])
    }
}

/// `RetryAfter` parses the `Retry-After` header of RFC 9110 §10.2.3.
public enum RetryAfter {
    /// How long to wait, or `nil` when the value is neither delta-seconds nor an HTTP-date.
    ///
    /// A date in the past gives `.zero`. Delta-seconds beyond ~292 years are capped; ``RateBudget``
    /// caps further, at its `maximumServerDelay`.
    ///
    /// - Parameters:
    ///   - value: The raw header value, e.g. `"120"` or `"Wed, 21 Oct 2015 07:28:00 GMT"`.
    ///   - now: The time the date is measured from: the response's `Date` when it has one, else
    ///     the current wall-clock time (injected, so tests control it).
    public static func parse(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Digits only; too many digits still mean "a very long time", not garbage.
            return Duration.clampedSeconds(Double(trimmed) ?? .infinity)
        }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return Duration.clampedSeconds(date.timeIntervalSince(now))
    }
}

/// Parses the date formats HTTP servers send.
public enum HTTPDate {
    /// Parses an HTTP-date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms
    /// RFC 9110 §5.6.7 says recipients must accept (RFC 850 and asctime). Returns `nil` otherwise.
    public static func parse(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            // A formatter per call: DateFormatter is not Sendable, and rate-limit dates are rare.
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            let normalised = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            if let date = formatter.date(from: normalised) { return date }
        }
        return nil
    }

    /// Parses an ISO-8601 timestamp with or without fractional seconds (`2017-06-13T21:35:00.123Z`),
    /// or Unix seconds when the text is a plain number. Returns `nil` otherwise.
    ///
    /// For `X-RateLimit-Reset`, prefer ``RateLimitReset/delay(_:now:)``, which also understands
    /// delta seconds and Unix milliseconds.
    public static func parseTimestamp(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = plainNumber(trimmed), seconds.isFinite {
            return Date(timeIntervalSince1970: seconds)
        }
        return parseISO8601(trimmed)
    }

    /// The value of a non-empty run of ASCII digits with at most one decimal point, else `nil`.
    static func plainNumber(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }) else { return nil }
        return Double(text)
    }

    /// Parses an ISO-8601 internet date-time with or without fractional seconds.
    static func parseISO8601(_ trimmed: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: trimmed) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: trimmed)
    }
}
