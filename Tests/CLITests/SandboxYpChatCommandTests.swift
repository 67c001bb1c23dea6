import Foundation
import PeerSupport
import Testing
import TidingsYpChat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox ypchat`, run as the real executable: a client logs in with only what it printed.
@Suite(.timeLimit(.minutes(1))) struct SandboxYpChatCommandTests {
    @Test func servesYpChatUntilSIGINTAndAClientLogsIn() async throws {
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["sandbox", "ypchat"], standardError: .nullDevice)
        defer { child.signal(SIGKILL) }
        let (printed, complete) = try await child.readOutput(timeout: .seconds(30)) { data in
            String(decoding: data, as: UTF8.self).contains("\nconnect: ")
        }
        #expect(complete)
        let output = String(decoding: printed, as: UTF8.self)
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("url: ") })
        let rest = YpChatRESTClient(
            configuration: try YpChatConfiguration(baseURL: String(line.dropFirst(5)), allowsInsecureHTTP: true))
        let session = try await rest.session()
        #expect(try await rest.countries().entries.first?.code == "DE")
        let socket = YpChatSocketClient(rest: rest)
        var events = socket.events.makeAsyncIterator()
        try await socket.connect()
        try await socket.login(userName: "anna", gender: "w", age: 30, country: "DE")
        var loggedIn = false
        while let event = await events.next() {
            if case .loginSuccess(let user) = event {
                loggedIn = user.userName == "anna"
                break
            }
        }
        #expect(loggedIn)
        #expect(try await rest.session() == SessionDto(loggedIn: true, userName: "anna", sessionId: session.sessionId))
        await socket.disconnect()

        child.signal(SIGINT)
        let tail = String(
            decoding: try await child.readOutput(timeout: .seconds(20)) { _ in false }.data, as: UTF8.self)
        #expect(tail.contains("Stopped on SIGINT."))
        let served = (output + tail).split(separator: "\n").filter { $0.hasPrefix("served: ") }
        #expect(served.contains { $0.contains("GET /api/session") })
        #expect(served.contains { $0.contains("EVENT / login") })
        #expect(!(output + tail).contains("connect.sid"))
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test func aBadPortIsAUsageError() async throws {
        #expect(try await ToolRun.run(["sandbox", "ypchat", "--port", "-1"]).status == 64)
        #expect(try await ToolRun.run(["sandbox", "ypchat", "--bogus"]).status == 64)
    }
}
