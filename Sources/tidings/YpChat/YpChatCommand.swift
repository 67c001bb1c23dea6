import Foundation
import TidingsYpChat

private let serverOption = OptionSpec.value(
    "--server", "url", environment: "YPCHAT_BASE_URL",
    help: "The YpChat server's base URL (default: a sandbox started on loopback).")
private let allowHTTPOption = OptionSpec.flag(
    "--allow-http", help: "Allow a plain http server that is not on loopback (debug servers only).")
private let languageOption = OptionSpec.value(
    "--lang", "de|en", default: "en", environment: "LANG", help: "The language of what is printed.")

/// `tidings ypchat [--server URL]`: an interactive YpChat client in the terminal, built on `ChatState`.
let ypchatCommand = Command(
    name: "ypchat",
    abstract: "Chat on a YpChat server (or a loopback sandbox) in the terminal; reads commands from standard input.",
    options: [serverOption, allowHTTPOption, languageOption],
    discussion: [
        "Type :help for the commands. On a terminal the input line is edited in place and keeps what you",
        "type while messages arrive; from a pipe every line is one command. Exits 0 on :quit or end of input.",
    ],
    validate: { parsed in
        let server = parsed.string(serverOption)
        if let server {
            guard let components = URLComponents(string: server), components.scheme != nil, components.host != nil
            else { throw ValidationError("--server needs an absolute http(s) URL.") }
        }
        return YpChatTerminalInput(
            server: server, allowsInsecureHTTP: parsed.flag(allowHTTPOption),
            language: YpChatLanguage(identifier: parsed.string(languageOption) ?? "en"))
    },
    run: { input in try await runYpChatTerminal(input) }
)
