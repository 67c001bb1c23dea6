extension RateLimitFamily {
    /// The family Mastodon meters a request in, matched the way its Rack::Attack rules match:
    ///
    /// - ``mediaUploads``: `POST /api/v1/media`, `POST /api/v2/media` (any `/api/vN/media`);
    /// - ``statusDeletions``: `DELETE /api/v1/statuses/:id` and `POST /api/v1/statuses/:id/unreblog`,
    ///   with a numeric id;
    /// - ``accountCreation``: `POST /api/v1/accounts`;
    /// - ``default``: everything else.
    ///
    /// The match is exact, as on the server (a trailing slash is another path there too), because
    /// a request counted in the wrong family would carry that family's `X-RateLimit-*` headers into
    /// the wrong budget. A query string is ignored; the method is matched case-insensitively.
    ///
    /// - Parameters:
    ///   - method: The HTTP method, e.g. `"POST"`.
    ///   - path: The URL's path, optionally followed by `?query`.
    public static func mastodon(method: String, path: String) -> RateLimitFamily {
        let method = method.uppercased()
        let path = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        // "/api/v1/media" splits into ["", "api", "v1", "media"].
        guard segments.count >= 4, segments[0].isEmpty, segments[1] == "api" else { return .default }
        let version = segments[2]
        let rest = segments.dropFirst(3)
        switch (method, Array(rest)) {
        case ("POST", ["media"]) where isVersion(version):
            return .mediaUploads
        case ("DELETE", let tail) where version == "v1" && tail.count == 2 && tail[0] == "statuses" && isID(tail[1]):
            return .statusDeletions
        case ("POST", let tail)
        where version == "v1" && tail.count == 3 && tail[0] == "statuses" && isID(tail[1]) && tail[2] == "unreblog":
            return .statusDeletions
        case ("POST", ["accounts"]) where version == "v1":
            return .accountCreation
        default:
            return .default
        }
    }

    /// `v` followed by one or more ASCII digits.
    private static func isVersion(_ segment: Substring) -> Bool {
        segment.first == "v" && isID(segment.dropFirst())
    }

    /// One or more ASCII digits (Mastodon's ids are numeric snowflakes).
    private static func isID(_ segment: Substring) -> Bool {
        !segment.isEmpty && segment.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
