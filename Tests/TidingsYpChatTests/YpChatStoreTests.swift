import Foundation
import Observation
import Testing
import TidingsCore
import TidingsSandbox
import TidingsYpChat

/// The `@MainActor` Observation store a SwiftUI view binds to, and the image cache, against the
/// sandbox in process.
@Suite(.timeLimit(.minutes(1))) struct YpChatStoreTests {
    /// Waits on the main actor until `predicate` holds, woken by Observation's change tracking (the
    /// same mechanism SwiftUI uses), never by polling.
    @MainActor static func observe(_ store: YpChatStore, until predicate: (ChatState) -> Bool) async {
        while !predicate(store.state) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                withObservationTracking {
                    _ = store.state
                } onChange: {
                    continuation.resume()
                }
            }
        }
    }

    static func repository(_ server: YpChatSandboxServer) throws -> YpChatRepository {
        let rest = try server.inProcessRESTClient()
        return YpChatRepository(
            rest: rest, socket: { YpChatSocketClient(rest: $0, connector: server.inProcessConnector()) })
    }

    @MainActor @Test func theStoreFollowsTheRepositoryAndIsObservable() async throws {
        let server = YpChatSandboxServer()
        let store = YpChatStore(repository: try Self.repository(server))
        store.start()
        await store.restoreSession().value
        await Self.observe(store) { $0.countries.count == 4 && $0.connection == .connected }
        await store.login(ChatProfile(userName: "anna", gender: "w", age: 30, country: "DE")).value
        await Self.observe(store) { $0.isLoggedIn }
        #expect(store.state.currentUser?.userName == "anna")
        await store.send("/users").value
        await Self.observe(store) { $0.commandTable != nil }
        #expect(store.state.commandTable?.rows.first?.first == "anna")
        #expect(YpChatTab.allCases.compactMap { $0.badge(in: store.state) }.isEmpty)
        await store.logout().value
        await Self.observe(store) { !$0.isLoggedIn }
        #expect(store.state.savedProfile?.userName == "anna")
        store.stop()
    }

    @Test func theImageCacheKeepsAtMostItsByteLimitAndDropsTheLeastRecentlyUsed() async throws {
        let server = YpChatSandboxServer()
        let rest = try server.inProcessRESTClient()
        _ = try await rest.session()
        var urls: [URL] = []
        for index in 0..<3 {
            urls.append(try await rest.uploadImage(Data(repeating: UInt8(index), count: 1_000)))
        }
        let cache = YpChatImageCache(rest: rest, byteLimit: 2_000)
        #expect(try await cache.image(at: urls[0]) == Data(repeating: 0, count: 1_000))
        _ = try await cache.image(at: urls[1])
        _ = try await cache.image(at: urls[0])  // 0 is now the most recently used
        _ = try await cache.image(at: urls[2])  // evicts 1
        #expect(await cache.count == 2)
        let before = server.log.entries.count
        _ = try await cache.image(at: urls[0])
        _ = try await cache.image(at: urls[2])
        #expect(server.log.entries.count == before)  // both served from the cache
        _ = try await cache.image(at: urls[1])
        #expect(server.log.entries.count == before + 1)
        let missing = try #require(URL(string: "https://www.ypchat.net/uploads/99"))
        await #expect(throws: YpChatError.status) { try await cache.image(at: missing) }
        #expect(await cache.count == 2)
    }
}
