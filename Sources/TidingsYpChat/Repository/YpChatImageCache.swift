import Foundation
import TidingsCore

/// Chat images, fetched with the session's cookies (the REST client's jar) and kept in a small
/// in-memory cache.
///
/// Guarantees: at most ``byteLimit`` bytes are kept (the least recently used image goes first; an
/// image larger than the limit is returned but not kept); concurrent requests for one URL share one
/// fetch; a failed fetch is not cached.
public actor YpChatImageCache {
    /// The most bytes kept.
    public nonisolated let byteLimit: Int
    private let rest: YpChatRESTClient
    private let flights = SingleFlight<URL, Data>()
    private var images: [URL: Data] = [:]
    private var order: [URL] = []
    private var byteCount = 0

    /// A cache over `rest`'s cookies, keeping at most `byteLimit` bytes (16 MiB by default).
    public init(rest: YpChatRESTClient, byteLimit: Int = 16 * 1024 * 1024) {
        self.rest = rest
        self.byteLimit = max(0, byteLimit)
    }

    /// How many images are cached now.
    public var count: Int { images.count }

    /// The image at `url`: from the cache, or fetched with the session's cookies.
    ///
    /// - Throws: what ``YpChatRESTClient/fetchImage(_:)`` throws.
    public func image(at url: URL) async throws -> Data {
        if let data = images[url] {
            touch(url)
            return data
        }
        let rest = self.rest
        let data = try await flights.run(key: url) { try await rest.fetchImage(url) }
        keep(data, for: url)
        return data
    }

    private func touch(_ url: URL) {
        order.removeAll { $0 == url }
        order.append(url)
    }

    private func keep(_ data: Data, for url: URL) {
        guard images[url] == nil, data.count <= byteLimit else { return }
        images[url] = data
        order.append(url)
        byteCount += data.count
        while byteCount > byteLimit, let oldest = order.first {
            order.removeFirst()
            byteCount -= images.removeValue(forKey: oldest)?.count ?? 0
        }
    }
}
