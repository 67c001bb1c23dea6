import Foundation
import TidingsCore
import TidingsSandbox
import TidingsYpChat

/// Two people chatting through the YpChat sandbox in process (no socket): login, a message from pending to
/// sent, the unread badge, a console command with a table, and the inactivity countdown on a virtual clock
/// running out.
let ypchatDemoPart = DemoPart(name: "ypchat", title: "YpChat: two people chatting through ChatState") {
    let server = YpChatSandboxServer()
    let clock = TestClock()
    func repository(clock: some Clock<Duration>) throws -> YpChatRepository {
        YpChatRepository(
            rest: try server.inProcessRESTClient(),
            socket: { YpChatSocketClient(rest: $0, connector: server.inProcessConnector()) }, clock: clock)
    }
    let anna = try repository(clock: clock)
    let bob = try repository(clock: ContinuousClock())
    let renderer = YpChatTerminalRenderer(language: .english)

    await anna.restoreSession()
    print("anna starts the app: \(await anna.state.countries.map(\.name).joined(separator: ", ")) (the server's order)")
    await anna.login(ChatProfile(userName: "anna", gender: "w", age: 30, country: "DE"))
    await bob.login(ChatProfile(userName: "bob", gender: "m", age: 40, country: "AT"))
    var state = try await waitFor(anna) { $0.onlineUsers.count == 2 }
    print("anna and bob log in; online: \(state.onlineUsers.map(\.userName).joined(separator: ", "))")

    await anna.openConversation(with: "bob")
    await anna.send("Hallo Bob, wie geht's?")
    print("anna sends a message with a fresh UUID messageId; it is pending until the server confirms it")
    state = try await waitFor(anna) { $0.conversationMessages.last?.status == .sent }
    print("  …messageSent with that id: \(state.conversationMessages.last.map { "\($0.status)" } ?? "-")")
    state = try await waitFor(bob) { $0.unreadChatsCount == 1 }
    print("bob's inbox tab shows a badge: \(YpChatTab.inbox.badge(in: state).map(String.init) ?? "none")")
    await bob.openConversation(with: "anna")
    state = try await waitFor(bob) { !$0.conversationMessages.isEmpty }
    for item in state.conversationMessages { print("  bob reads [\(item.message.fromUserName)] \(item.message.text)") }

    await anna.send("/users")
    state = try await waitFor(anna) { $0.commandTable != nil }
    print("anna types /users in the conversation: a console command, answered with a table")
    if let table = state.commandTable { for line in YpChatTerminalRenderer.table(table) { print("  " + line) } }

    print("the inactivity countdown (virtual clock): \(renderer.countdownText(await anna.state.timeoutRemaining))")
    try await waitForTicker(clock)
    await clock.advance(by: .seconds(25 * 60))
    state = try await waitFor(anna) { $0.timeoutRemaining <= 300 }
    print("  after 25 quiet minutes: \(renderer.countdownText(state.timeoutRemaining))")
    await bob.send("Bist du noch da?")
    _ = try await waitFor(anna) { $0.conversationMessages.count == 2 }
    print(
        "  bob's message arrives; incoming events do not reset it: \(renderer.countdownText(await anna.state.timeoutRemaining))"
    )
    try await waitForTicker(clock)
    await clock.advance(by: .seconds(5 * 60))
    state = try await waitFor(anna) { !$0.isLoggedIn }
    print("  at 00:00 anna is logged out: \(state.errorMessage?.text(in: .english) ?? "-")")
    print(
        "  kept for the next login: profile \(state.savedProfile?.userName ?? "-"), \(state.countries.count) countries")
    await anna.close()
    await bob.logout()
    await bob.close()
}

/// Waits (at most 10 seconds) until the countdown's ticker sleeps on `clock`, so that advancing the clock
/// moves the countdown: on a busy machine the ticker may not be asleep yet, and a jump made before it sleeps
/// would be lost to it.
private func waitForTicker(_ clock: TestClock) async throws {
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while !(await clock.waitForSleepers(1, maxYields: 1_000)) {
        guard ContinuousClock.now < deadline else { throw ToolFailure(ExitCode.software, "the YpChat demo stalled") }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// The first state of `repository` that satisfies `predicate`, waiting at most 10 seconds.
private func waitFor(_ repository: YpChatRepository, _ predicate: @escaping @Sendable (ChatState) -> Bool)
    async throws -> ChatState
{
    try await withThrowingTaskGroup(of: ChatState?.self) { group in
        group.addTask {
            for await state in await repository.states() where predicate(state) { return state }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(10))
            return nil
        }
        defer { group.cancelAll() }
        guard let state = try await group.next() ?? nil else {
            throw ToolFailure(ExitCode.software, "the YpChat demo stalled")
        }
        return state
    }
}
