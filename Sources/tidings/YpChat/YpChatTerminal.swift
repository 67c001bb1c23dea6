import Foundation
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `tidings ypchat` was asked for.
struct YpChatTerminalInput: Sendable {
    /// The server's base URL; nil: a sandbox started in this process on loopback.
    var server: String?
    /// Whether plain http is allowed for a server that is not on loopback.
    var allowsInsecureHTTP: Bool
    /// The language of what is printed.
    var language: YpChatLanguage
}

/// The interactive chat of `tidings ypchat`: reads commands, runs them on a ``YpChatRepository`` and
/// prints every state change through ``YpChatTerminalRenderer``.
///
/// Commands start with `:` (see ``help``); a line starting with `/` is a console command; any other line
/// is a message to the open conversation. The admin password after `:admin-login` is read on the next
/// line without echo and handed to the repository only.
actor YpChatTerminal {
    private let repository: YpChatRepository
    private let screen: TerminalScreen
    private let renderer: YpChatTerminalRenderer
    private var awaitingPassword = false

    init(repository: YpChatRepository, screen: TerminalScreen, language: YpChatLanguage) {
        self.repository = repository
        self.screen = screen
        renderer = YpChatTerminalRenderer(language: language)
    }

    static let help = [
        "Commands:",
        "  :login NAME GENDER(m|w|d) AGE COUNTRY   :logout   :quit",
        "  :online   :open NAME   :close   :search [TEXT]   :inbox   :history",
        "  :block NAME   :unblock NAME   :image PATH   :timeout",
        "  :feedback   :feedback-send TEXT   :admin-login   :admin-logout   :delete-feedback ID   :partners",
        "  /COMMAND   a console command (also inside a conversation: it never reaches the partner)",
        "  TEXT       a message to the open conversation",
    ]

    /// Prints state changes until the repository's stream ends.
    func render() async {
        var previous: ChatState?
        for await state in await repository.states() {
            screen.print(renderer.lines(from: previous, to: state, countdown: !screen.isInteractive))
            screen.setPrompt(renderer.prompt(state))
            previous = state
        }
    }

    /// Runs one input line; false to quit.
    func handle(_ line: String) async -> Bool {
        if awaitingPassword {
            awaitingPassword = false
            screen.setHidden(false)
            await repository.adminLogin(password: line)
            return true
        }
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix(":") else {
            if trimmed.isEmpty { return true }
            if !trimmed.hasPrefix("/"), await repository.state.openConversation == nil {
                screen.print(["! :open NAME"])
                return true
            }
            await repository.send(trimmed)
            return true
        }
        let words = trimmed.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let argument = words.dropFirst().joined(separator: " ")
        switch words[0] {
        case ":quit", ":exit": return false
        case ":help": screen.print(Self.help)
        case ":login":
            guard words.count == 5, let age = Int(words[3]) else {
                screen.print(["! :login NAME GENDER AGE COUNTRY"])
                return true
            }
            await repository.login(ChatProfile(userName: words[1], gender: words[2], age: age, country: words[4]))
        case ":logout": await repository.logout()
        case ":online":
            let state = await repository.state
            screen.print([
                "* " + renderer.text(.tabOnline) + ": "
                    + (state.onlineUsers.isEmpty
                        ? renderer.text(.emptyOnline) : state.onlineUsers.map(Self.describe).joined(separator: ", "))
            ])
        case ":open" where !argument.isEmpty: await repository.openConversation(with: argument)
        case ":close": await repository.closeConversation()
        case ":search": await repository.search(YpChatSearchQuery(nameIncludes: argument))
        case ":inbox": await repository.requestInbox()
        case ":history": await repository.requestHistory()
        case ":block" where !argument.isEmpty: await repository.block(argument)
        case ":unblock" where !argument.isEmpty: await repository.unblock(argument)
        case ":image" where !argument.isEmpty: await sendImage(at: argument)
        case ":timeout":
            screen.print(["* " + renderer.countdownText(await repository.state.timeoutRemaining)])
        case ":feedback":
            await repository.loadFeedback()
            let entries = await repository.state.feedback
            screen.print(
                entries.isEmpty
                    ? ["* " + renderer.text(.moreFeedback) + ": -"]
                    : entries.map { "* #\($0.id) \($0.name.map { $0 + ": " } ?? "")\($0.message)" })
        case ":feedback-send" where !argument.isEmpty:
            await repository.sendFeedback(FeedbackRequest(message: argument))
        case ":admin-login":
            awaitingPassword = true
            screen.setHidden(true)
            screen.print(["* password:"])
        case ":admin-logout": await repository.adminLogout()
        case ":delete-feedback" where !argument.isEmpty: await repository.deleteFeedback(id: argument)
        case ":partners":
            await repository.loadPartners()
            screen.print(
                await repository.state.partners.map {
                    "* " + renderer.text(.morePartners) + ": \($0.pageName) <\($0.url)>"
                }
            )
        default: screen.print(["! \(words[0])? (:help)"])
        }
        return true
    }

    private static func describe(_ user: YpChatUser) -> String {
        let details = [user.gender, user.age.map(String.init), user.country].compactMap { $0 }
        return details.isEmpty ? user.userName : "\(user.userName) (\(details.joined(separator: " ")))"
    }

    private func sendImage(at path: String) async {
        let url = URL(fileURLWithPath: path)
        // Why a queue: a file read blocks its thread, and the pool has only a few.
        let data: Data? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: try? Data(contentsOf: url)) }
        }
        guard let data else {
            screen.print(["! \(url.lastPathComponent)?"])
            return
        }
        let type = url.pathExtension.lowercased() == "png" ? "image/png" : "image/jpeg"
        await repository.sendImage(data, filename: url.lastPathComponent, contentType: type)
    }
}

/// Runs `tidings ypchat`: connects (starting a loopback sandbox without `--server`), restores the session,
/// then reads commands until `:quit` or end of input; logs out when logged in, and restores the terminal.
func runYpChatTerminal(_ input: YpChatTerminalInput) async throws {
    let screen = TerminalScreen(interactive: isatty(0) == 1, console: Console.current)
    var listener: SandboxHTTPListener?
    let base: String
    if let server = input.server {
        base = server
    } else {
        let sandbox = YpChatSandboxServer()
        let started = try sandbox.serve()
        listener = started
        base = started.url.absoluteString
        screen.print(["* sandbox: \(base) (admin password: \(sandbox.state.adminPassword))"])
    }
    defer { listener?.stop() }
    let configuration = try YpChatConfiguration(
        baseURL: base, allowsInsecureHTTP: input.allowsInsecureHTTP || isLoopback(base))
    let repository = YpChatRepository(rest: YpChatRESTClient(configuration: configuration))
    let terminal = YpChatTerminal(repository: repository, screen: screen, language: input.language)
    let rendering = Task { await terminal.render() }
    screen.print(YpChatTerminal.help)
    await repository.restoreSession()
    for await line in TerminalInput.lines(screen: screen) {
        guard await terminal.handle(line) else { break }
    }
    if await repository.state.isLoggedIn { await repository.logout() }
    await repository.close()
    await rendering.value
    TerminalInput.restoreTerminal()
    if screen.isInteractive { Console.current.writeOutput("\n") }
}

/// Whether `base` names this machine (plain http is fine there).
private func isLoopback(_ base: String) -> Bool {
    guard let host = URLComponents(string: base)?.host?.lowercased() else { return false }
    return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]"
}
