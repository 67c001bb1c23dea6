import Foundation

/// `RateLimitReset` reads `X-RateLimit-Reset`, which servers send in four shapes.
public enum RateLimitReset {
    /// Plain numbers below this are delta seconds: as a date it is 2001-09-09, as a delay 31 years.
    static let epochSecondsThreshold = 1e9
    /// Plain numbers from this up are Unix milliseconds: as seconds it would be the year 33658.
    static let epochMillisecondsThreshold = 1e12

    /// How long until the reset, `.zero` when it has passed, or `nil` when the value is unreadable.
    ///
    /// The rule: an ISO-8601 date-time (Mastodon) or an HTTP-date is a moment; a plain number
    /// (digits, at most one decimal point) below 10⁹ is delta seconds (the IETF RateLimit fields),
    /// from 10⁹ below 10¹² Unix seconds (GitHub, Twitter), and from 10¹² up Unix milliseconds.
    /// Numbers too long for a `Double` mean a very long time. Delays beyond ~292 years are capped;
    /// ``RateBudget`` caps further, at its `maximumServerDelay`.
    ///
    /// - Parameters:
    ///   - value: The raw header value.
    ///   - now: The time moments are measured from: the response's `Date` when it has one, else
    ///     the current wall-clock time.
    public static func delay(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let number = HTTPDate.plainNumber(trimmed) {
            guard number.isFinite else { return Duration.clampedSeconds(.infinity) }
            if number < epochSecondsThreshold { return Duration.clampedSeconds(number) }
            let seconds = number < epochMillisecondsThreshold ? number : number / 1000
            return Duration.clampedSeconds(seconds - now.timeIntervalSince1970)
        }
        guard let date = HTTPDate.parseISO8601(trimmed) ?? HTTPDate.parse(trimmed) else { return nil }
        return Duration.clampedSeconds(date.timeIntervalSince(now))
    }
}
