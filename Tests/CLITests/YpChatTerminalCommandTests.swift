import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsSandbox
import TidingsYpChat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings ypchat`, the terminal client, run as the real executable against the sandbox on loopback:
/// scripted through a pipe, and in a pseudo-terminal (util-linux `script`) where arriving messages must
/// not garble the line being typed. A second user is a `YpChatRepository` in the test. One at a time:
/// each runs a child process (two on a terminal), and together they starved a loaded machine.
@Suite(.serialized, .timeLimit(.minutes(2))) struct YpChatTerminalCommandTests {
    /// A running `tidings ypchat` and everything it printed so far.
    final class Session: Sendable {
        let child: ChildProcess
        private let printed = LockedBox("")

        init(_ child: ChildProcess) { self.child = child }

        var output: String { printed.value }

        /// Types `text` (a line ends with "\n" from a pipe, "\r" on a terminal).
        func type(_ text: String) async throws { try await child.writeStandardInput(text) }

        /// Reads until the output contains `text`; fails the test when it does not come within 40 s (a guard
        /// against a hang, not a schedule: at the start of a full run on 2 shared cores the child once took
        /// over 20 s to connect, its server being one of 800 tests in this process).
        func expect(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            if output.contains(text) { return }
            let already = printed.value
            let (data, complete) = try await child.readOutput(timeout: .seconds(40)) { data in
                (already + String(decoding: data, as: UTF8.self)).contains(text)
            }
            printed.value = already + String(decoding: data, as: UTF8.self)
            #expect(
                complete, "never printed \(text.debugDescription); printed:\n\(output)", sourceLocation: sourceLocation)
        }

        /// Reads the rest of the output until the stream ends.
        func readToEnd() async throws {
            let already = printed.value
            let (data, _) = try await child.readOutput(timeout: .seconds(20)) { _ in false }
            printed.value = already + String(decoding: data, as: UTF8.self)
        }
    }

    static func bob(on base: String) async throws -> YpChatRepository {
        let rest = YpChatRESTClient(configuration: try YpChatConfiguration(baseURL: base, allowsInsecureHTTP: true))
        let bob = YpChatRepository(rest: rest)
        await bob.login(ChatProfile(userName: "bob", gender: "m", age: 40, country: "AT"))
        try await until(bob) { $0.isLoggedIn && $0.connection == .connected }
        return bob
    }

    static func base(_ url: URL) -> String {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    @Test func aScriptedSessionThroughAPipe() async throws {
        let server = YpChatSandboxServer()
        let listener = try server.serve()
        defer { listener.stop() }
        let base = Self.base(listener.url)
        let session = Session(
            try ChildProcess.spawn(
                executable: ToolRun.executable.path, arguments: ["ypchat", "--server", base, "--lang", "en"],
                standardInput: .pipe, standardError: .nullDevice))
        defer { session.child.signal(SIGKILL) }
        try await session.expect("* connected")
        try await session.type(":login anna w 30 DE\n")
        try await session.expect("* Logged in as anna")
        let bob = try await Self.bob(on: base)
        try await session.expect("* Online: anna, bob")

        try await session.type(":open bob\nHallo Bob\n")
        try await session.expect("[anna → bob] Hallo Bob")
        try await until(bob) { $0.unreadChatsCount == 1 }
        await bob.openConversation(with: "anna")
        try await until(bob) { $0.conversationMessages.map(\.message.text) == ["Hallo Bob"] }
        await bob.send("Hallo Anna")
        try await session.expect("[bob] Hallo Anna")

        try await session.type(":search bo\n")
        try await session.expect("* Search: bob")
        try await session.type(":history\n")
        try await session.expect("* History: bob (1): Hallo Anna")
        try await session.type(":block bob\n")
        try await session.expect("* bob blocked")
        try await session.type(":unblock bob\n")
        try await session.expect("* bob unblocked")
        try await session.type("/users\n")
        try await session.expect("| bob      | 40  | AT      |")
        #expect(session.output.contains("| userName | age | country |"))
        try await session.type("/nope\n")
        try await session.expect("console! unknown command")

        let image = FileManager.default.temporaryDirectory.appendingPathComponent("ypchat-\(UUID().uuidString).png")
        try Data(repeating: 7, count: 2_048).write(to: image)
        defer { try? FileManager.default.removeItem(at: image) }
        try await session.type(":image \(image.path)\n")
        let received = try await until(bob) { $0.conversationMessages.last?.message.isImage == true }
        let url = try #require(received.conversationMessages.last?.message.imageUrl)
        #expect(url.hasPrefix(base + "/uploads/"))
        #expect(try await YpChatImageCache(rest: bob.rest).image(at: try #require(URL(string: url))).count == 2_048)

        try await session.type(":feedback-send toll\n:feedback\n")
        try await session.expect("* #1 toll")
        try await session.type(":admin-login\n\(server.state.adminPassword)\n")
        try await session.expect("* Logged in as admin.")
        try await session.type(":delete-feedback 1\n")
        try await session.expect("* Feedback deleted.")
        try await session.type(":admin-logout\n")
        try await session.expect("* Logged out as admin.")
        try await session.type(":partners\n:timeout\n")
        try await session.expect("* Partners: Tidings <https://example.org/tidings>")
        try await session.expect("* Logout in ")

        try await session.type(":quit\n")
        try await session.readToEnd()
        #expect(await session.child.waitForExit(timeout: .seconds(20)) == .exited(0))
        #expect(session.output.contains("* Logged out"))
        #expect(!session.output.contains(server.state.adminPassword))
        try await until(bob) { !$0.onlineUsers.map(\.userName).contains("anna") }
    }

    @Test func inATerminalArrivingMessagesDoNotGarbleTheTypedLine() async throws {
        let server = YpChatSandboxServer()
        let listener = try server.serve()
        defer { listener.stop() }
        let base = Self.base(listener.url)
        let command = "\(ToolRun.executable.path) ypchat --server \(base) --lang en"
        // util-linux script runs the command on a pseudo-terminal and passes our pipe's bytes to it.
        let session = Session(
            try ChildProcess.spawn(
                executable: "/usr/bin/script", arguments: ["-qfec", command, "/dev/null"], standardInput: .pipe,
                standardError: .nullDevice))
        defer { session.child.signal(SIGKILL) }
        try await session.expect("* connected")
        try await session.type(":login anna w 30 DE\r")
        try await session.expect("* Logged in as anna")
        let bob = try await Self.bob(on: base)
        try await session.type(":open bob\r")
        try await session.expect("* Chat with bob")
        try await session.type("hal")
        try await session.expect("> hal")
        await bob.openConversation(with: "anna")
        await bob.send("Nachricht von Bob")
        try await session.expect("[bob] Nachricht von Bob")
        // The message went above the input line, and the prompt and "hal" were drawn again below it.
        let after = try #require(session.output.range(of: "[bob] Nachricht von Bob"))
        try await session.expect("hal")
        let tail = String(session.output[after.upperBound...])
        #expect(tail.contains("> hal"), "the typed text was not redrawn: \(tail.debugDescription)")
        try await session.type("lo\r")
        let state = try await until(bob) { $0.conversationMessages.count == 2 }
        #expect(state.conversationMessages.last?.message.text == "hallo")
        try await session.type("\u{03}")  // Ctrl-C: quit
        try await session.readToEnd()
        #expect(await session.child.waitForExit(timeout: .seconds(20)) == .exited(0))
        #expect(session.output.contains("* Logged out"))
    }

    @Test func inATerminalTheLineIsEditedAndEarlierLinesAreRecalled() async throws {
        let server = YpChatSandboxServer()
        let listener = try server.serve()
        defer { listener.stop() }
        let base = Self.base(listener.url)
        let command = "\(ToolRun.executable.path) ypchat --server \(base) --lang en"
        let session = Session(
            try ChildProcess.spawn(
                executable: "/usr/bin/script", arguments: ["-qfec", command, "/dev/null"], standardInput: .pipe,
                standardError: .nullDevice))
        defer { session.child.signal(SIGKILL) }
        let (left, right, up, down, home, end, delete) = (
            "\u{1B}[D", "\u{1B}[C", "\u{1B}[A", "\u{1B}[B", "\u{1B}[H", "\u{1B}[F", "\u{1B}[3~"
        )
        try await session.expect("* connected")
        try await session.type(":login anna w 30 DE\r")
        try await session.expect("* Logged in as anna")
        let bob = try await Self.bob(on: base)
        try await session.type(":open bob\r")
        try await session.expect("* Chat with bob")
        // The cursor moves inside the line: "hllo", three to the left, "a".
        try await session.type("hllo" + left + left + left + "a\r")
        var state = try await until(bob) { $0.unreadChatsCount == 1 }
        await bob.openConversation(with: "anna")
        state = try await until(bob) { $0.conversationMessages.count == 1 }
        #expect(state.conversationMessages.last?.message.text == "hallo")
        // Up recalls it; Home, a two-byte character, End, "!"; a stray Delete at the end does nothing.
        try await session.type(up + home + "¡" + end + "!" + delete + "\r")
        state = try await until(bob) { $0.conversationMessages.count == 2 }
        #expect(state.conversationMessages.last?.message.text == "¡hallo!")
        // Up twice, Down once: the newest line again; Delete and Right edit inside it.
        try await session.type(up + up + down + home + delete + right + right + right + right + "X\r")
        state = try await until(bob) { $0.conversationMessages.count == 3 }
        #expect(state.conversationMessages.last?.message.text == "hallXo!")
        try await session.type("\u{03}")
        try await session.readToEnd()
        #expect(await session.child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test func aBadServerURLIsAUsageError() async throws {
        #expect(try await ToolRun.run(["ypchat", "--server", "not a url"]).status == 64)
        #expect(try await ToolRun.run(["ypchat", "--bogus"]).status == 64)
    }
}

/// A value behind the project's lock box, for a test's shared output buffer.
final class LockedBox<Value: Sendable>: Sendable {
    private let state: LockedState<Value>
    init(_ value: Value) { state = LockedState(value) }
    var value: Value {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

/// Reads `repository`'s states until one satisfies `predicate` (the suite's time limit bounds it).
@discardableResult
func until(_ repository: YpChatRepository, _ predicate: @Sendable (ChatState) -> Bool) async throws -> ChatState {
    for await state in await repository.states() where predicate(state) { return state }
    throw CancellationError()
}

/// `tidings demo --only ypchat`: the YpChat part of the demo, in process.
@Suite(.timeLimit(.minutes(1))) struct YpChatDemoTests {
    @Test func theDemoChatsRunsACommandAndTimesOut() async throws {
        let run = try await ToolRun.run(["demo", "--only", "ypchat"])
        #expect(run.status == 0)
        for line in [
            "online: anna, bob", "messageSent with that id: sent", "bob's inbox tab shows a badge: 1",
            "bob reads [anna] Hallo Bob", "| bob      | 40  | AT      |", "after 25 quiet minutes: Logout in 05:00",
            "incoming events do not reset it: Logout in 05:00",
            "at 00:00 anna is logged out: You were logged out after 30 minutes without activity.",
        ] {
            #expect(run.standardOutput.contains(line), "\(line)")
        }
    }
}
