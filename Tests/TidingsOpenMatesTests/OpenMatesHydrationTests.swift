import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Opening metadata-only chats: loading state, one deduplicated and batched request, hydration, partial
/// errors, offline, and the retry on reconnect.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesHydrationTests {
    private func synced(parents: Int = 14, variant: OpenMatesSandboxVariant = .init()) async throws
        -> OpenMatesClientHarness
    {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: parents, messagesEach: 4)
        await harness.server.setVariant(variant)
        await harness.client.start()
        #expect(await harness.untilSynced())
        return harness
    }

    @Test func openingAMetadataOnlyChatRequestsItsContentAndHydratesIt() async throws {
        let harness = try await synced()
        #expect(try await harness.client.openChat("chat-012") == .loading(partial: []))
        #expect(await harness.until { $0 == .hydrated(["chat-012"]) })
        let request = try #require(await harness.received("request_chat_content_batch").first)
        #expect(request.payload["chat_ids"] == ["chat-012"])
        guard case .loaded(let messages) = try await harness.client.openChat("chat-012") else {
            Issue.record("not loaded")
            return
        }
        #expect(messages.map(\.messageID) == (0..<4).map { "chat-012-m\($0)" })
        #expect(messages.map(\.role) == ["user", "assistant", "user", "assistant"])
        // A chat phase 1b filled opens from the store without a request.
        guard case .loaded = try await harness.client.openChat("chat-000") else {
            Issue.record("phase 1b chat not loaded")
            return
        }
        #expect(await harness.received("request_chat_content_batch").count == 1)
    }

    @Test func requestsAreDeduplicatedAndBatched() async throws {
        let harness = try await synced()
        let client = harness.client
        // Three opens in one turn of the client (and one repeated) share one request.
        let results = await client.openThree(["chat-010", "chat-011", "chat-010", "chat-013"])
        #expect(results.allSatisfy { if case .loading = $0 { true } else { false } })
        #expect(
            await harness.until { change in
                if case .hydrated(let ids) = change { return Set(ids) == ["chat-010", "chat-011", "chat-013"] }
                return false
            })
        let requests = await harness.received("request_chat_content_batch")
        #expect(requests.count == 1)
        #expect(requests.first?.payload["chat_ids"] == ["chat-010", "chat-011", "chat-013"])
    }

    @Test func aPartialErrorIsSurfacedForTheChatsItNames() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.contentFailures = ["chat-011"]
        let harness = try await synced(variant: variant)
        _ = await harness.client.openThree(["chat-010", "chat-011"])
        var failure: OpenMatesError?
        #expect(
            await harness.until { change in
                if case .failure(let error) = change {
                    failure = error
                    return true
                }
                return false
            })
        #expect(failure == .contentUnavailable)
        #expect(failure?.chatIDs == ["chat-011"])
        #expect(try harness.store.chat("chat-010")?.content.isMetadataOnly == false)
        #expect(try harness.store.chat("chat-011")?.content.isMetadataOnly == true)
    }

    @Test func anUnansweredRequestEndsItsLoadingStateAtTheTimeout() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.contentNeverAnswered = ["chat-012"]
        let harness = try await synced(variant: variant)
        _ = try await harness.client.openChat("chat-012")
        #expect(await eventually { await !harness.received("request_chat_content_batch").isEmpty })
        // The app ping and the request's timeout.
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(30))
        #expect(
            await harness.until { change in
                if case .failure(let error) = change {
                    return error == .contentUnavailable && error.chatIDs == ["chat-012"]
                }
                return false
            })
    }

    @Test func offlineAMetadataOnlyChatIsNotAvailableAndIsFetchedOnTheNextConnection() async throws {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 14, messagesEach: 2)
        let first = try OpenMatesClientHarness(server: server)
        await first.client.start()
        #expect(await first.untilSynced())
        await first.client.close()
        // The same store, a new client that has not connected.
        let offline = try OpenMatesClientHarness(server: server, store: first.store)
        #expect(try await offline.client.openChat("chat-013") == .notAvailableOffline(partial: []))
        guard case .loaded = try await offline.client.openChat("chat-001") else {
            Issue.record("stored chat not loaded offline")
            return
        }
        await offline.client.start()
        #expect(await offline.until { $0 == .hydrated(["chat-013"]) })
    }

    @Test func requestsInFlightAreSentAgainAfterAReconnect() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.contentNeverAnswered = ["chat-012"]
        let harness = try await synced(variant: variant)
        _ = try await harness.client.openChat("chat-012")
        #expect(await eventually { await harness.received("request_chat_content_batch").count == 1 })
        await harness.server.setVariant(OpenMatesSandboxVariant())
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        // The request's timeout and the reconnect delay.
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(1))
        #expect(await harness.until { $0 == .hydrated(["chat-012"]) })
        #expect(await harness.received("request_chat_content_batch").count == 2)
    }
}

extension OpenMatesClient {
    /// Opens several chats in one turn of the client.
    func openThree(_ chatIDs: [String]) -> [ChatContent] {
        chatIDs.compactMap { try? openChat($0) }
    }
}
