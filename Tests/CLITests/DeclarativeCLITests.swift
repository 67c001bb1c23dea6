import Foundation
import Testing
import TidingsCore

@testable import tidings

/// The declarative layer: help and usage derived from the specs, parsing errors, environment fallback, and
/// validation before any work, all run in process through ``Runner/capture(_:)``.
@Suite(.timeLimit(.minutes(1))) struct DeclarativeCLITests {
    /// Every command of the tool with its path.
    private func allCommands(_ command: Command = tidingsRoot, path: [String] = []) -> [(Command, [String])] {
        [(command, path)] + command.subcommands.flatMap { allCommands($0, path: path + [$0.name]) }
    }

    @Test func everyOptionAppearsOnceInHelpAndUsageAndTheHelpColumnIsAligned() async throws {
        for (command, path) in allCommands() {
            let run = await Runner(root: tidingsRoot, environment: [:]).capture(path + ["--help"])
            #expect(run.status == 0)
            let lines = run.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let usage = try #require(lines.first { $0.hasPrefix("USAGE: ") })
            let start = try #require(lines.firstIndex(of: "OPTIONS:"))
            let end = lines[start...].firstIndex(of: "") ?? lines.endIndex
            let section = Array(lines[(start + 1)..<end])
            let entries = section.filter { $0.hasPrefix("  -") }
            #expect(entries.count == command.options.count + 1, "\(path)")
            var columns: Set<Int> = []
            for option in command.options {
                let matching = entries.filter { $0.hasPrefix("  \(option.synopsis)  ") }
                #expect(matching.count == 1, "\(path) \(option.name) in OPTIONS")
                #expect(usage.components(separatedBy: "[\(option.synopsis)").count == 2, "\(path) \(option.name)")
                if let entry = matching.first {
                    let afterName = entry.dropFirst(2 + option.synopsis.count)
                    columns.insert(2 + option.synopsis.count + afterName.prefix { $0 == " " }.count)
                    #expect(entry.contains(String(option.help.prefix(20))))
                }
            }
            let help = try #require(entries.first { $0.hasPrefix("  -h, --help  ") })
            columns.insert(help.prefix { $0 != "S" }.count)
            #expect(columns.count == 1, "\(path): help starts at columns \(columns.sorted())")
            // A wrapped description continues exactly under its first line.
            for continuation in section where !continuation.hasPrefix("  -") {
                #expect(continuation.prefix { $0 == " " }.count == columns.first, "\(path): '\(continuation)'")
            }
            #expect(section.allSatisfy { $0.count <= HelpText.width }, "\(path)")
        }
    }

    @Test func helpNamesEachEnvironmentVariableAndDefault() async throws {
        let run = await Runner(root: tidingsRoot, environment: ["TIDINGS_KECALEK_TOKEN": "s3cret-token"]).capture([
            "help", "kecalek", "sync",
        ])
        #expect(run.status == 0)
        for variable in [
            "TIDINGS_KECALEK_STORE", "TIDINGS_KECALEK_KEY", "TIDINGS_KECALEK_SERVER", "TIDINGS_KECALEK_TOKEN",
        ] {
            #expect(run.standardOutput.components(separatedBy: variable).count == 2, "\(variable)")
        }
        #expect(run.standardOutput.contains("(default: kecalek-cache.sqlite)"))
        #expect(!run.standardOutput.contains("s3cret-token"), "help printed an environment variable's value")
    }

    @Test func theCommandLineBeatsTheEnvironmentWhichBeatsTheDefault() throws {
        let spec = OptionSpec.value("--store", "path", default: "fallback", environment: "STORE", help: "")
        let empty = try ParsedOptions([], specs: [spec], environment: [:])
        #expect(empty.resolved(spec)?.value == "fallback")
        #expect(empty.resolved(spec)?.origin == .defaultValue)
        let fromEnvironment = try ParsedOptions([], specs: [spec], environment: ["STORE": "env"])
        #expect(fromEnvironment.resolved(spec)?.value == "env")
        #expect(fromEnvironment.resolved(spec)?.origin == .environment)
        let emptyVariable = try ParsedOptions([], specs: [spec], environment: ["STORE": ""])
        #expect(emptyVariable.string(spec) == "fallback")
        let given = try ParsedOptions(["--store=cli"], specs: [spec], environment: ["STORE": "env"])
        #expect(given.resolved(spec)?.value == "cli")
        #expect(given.resolved(spec)?.origin == .commandLine)
    }

    @Test func parsingMistakesAreValidationErrors() {
        let specs: [OptionSpec] = [
            .value("--store", "path", help: ""), .repeating("--conversation", "id", help: ""),
            .flag("--json", help: ""), .value("--token", "token", help: ""),
        ]
        func error(_ words: [String]) -> String? {
            do {
                _ = try ParsedOptions(words, specs: specs, environment: [:])
                return nil
            } catch let error as ValidationError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(error(["--bogus"]) == "Unknown option '--bogus'.")
        #expect(error(["--store"]) == "Missing value for '--store'.")
        #expect(error(["--store", "--json"]) == "Missing value for '--store'.")
        #expect(error(["--store", "a", "--store=b"]) == "'--store' was given more than once.")
        #expect(error(["--json=yes"]) == "'--json' takes no value.")
        #expect(error(["stray"]) == "Unexpected argument 'stray'.")
        #expect(error(["--conversation", "a", "--conversation", "b", "--json"]) == nil)
        // A value that starts with a dash is still a value, so a token is never echoed as an "unknown option".
        #expect(error(["--token", "-x1secret"]) == nil)
        let parsed = try? ParsedOptions(
            ["--conversation", "a", "--token", "-x1secret", "--conversation=b"], specs: specs, environment: [:])
        #expect(parsed?.strings(specs[1]) == ["a", "b"])
        #expect(parsed?.string(specs[3]) == "-x1secret")
    }

    @Test func aValidationErrorExits64WithTheUsageLineAndTheBodyNeverRuns() async {
        let ran = LockedState(0)
        let count = OptionSpec.value("--count", "n", help: "How many.")
        let probe = Command(
            name: "probe", abstract: "A command that counts its runs.", options: [count],
            validate: { parsed in try parsed.int(count, in: 1...3) ?? 1 },
            run: { _ in ran.withLock { $0 += 1 } })
        let root = Command(name: "tidings", abstract: "", subcommands: [probe])
        for words in [["--count", "9"], ["--count"], ["--other"], ["extra"], ["--count", "1", "--count", "2"]] {
            let run = await Runner(root: root, environment: [:]).capture(["probe"] + words)
            #expect(run.status == ExitCode.usage, "\(words)")
            #expect(run.standardOutput.isEmpty)
            #expect(run.standardError.hasPrefix("Error: "), "\(words)")
            #expect(run.standardError.contains("\nUsage: tidings probe [--count <n>]\n"), "\(words)")
        }
        #expect(ran.withLock { $0 } == 0, "the body ran after a validation error")
        let good = await Runner(root: root, environment: [:]).capture(["probe", "--count=2"])
        #expect(good.status == 0)
        #expect(ran.withLock { $0 } == 1)
    }

    @Test func kecalekValidationFailsBeforeAnyFileIsCreated() async throws {
        let store = try KecalekCLI.temporaryStore()
        let runner = Runner(root: tidingsRoot, environment: [:])
        let keys = try KecalekCLI.conversationKeyArguments(["general"])
        let cases: [[String]] = [
            ["--server", "ws://127.0.0.1:9/", "--key", KecalekCLI.cacheKey] + keys,
            ["--server", "ws://127.0.0.1:9/", "--user", "alice"] + keys,
            ["--server", "http://x", "--user", "alice", "--key", KecalekCLI.cacheKey] + keys,
            ["--key", "abc"],
            ["--limit", "1001"],
            ["--conversation-key", "general"],
            ["--json", "--limit"],
        ]
        for extra in cases {
            let run = await runner.capture(["kecalek", "sync", "--store", store] + extra)
            #expect(run.status == 64, "\(extra): \(run.standardError)")
            #expect(run.standardError.contains("Usage: tidings kecalek sync "))
        }
        let show = await runner.capture(["kecalek", "show", "--store", store, "--key", "nothex"])
        #expect(show.status == 64)
        #expect(try KecalekCLI.listing(beside: store).isEmpty, "a usage error created a file")
    }

    @Test func theStoreAndKeyComeFromTheEnvironmentWhenNotGiven() async throws {
        let store = try KecalekCLI.temporaryStore()
        let environment = ["TIDINGS_KECALEK_STORE": store, "TIDINGS_KECALEK_KEY": KecalekCLI.cacheKey]
        let missing = await Runner(root: tidingsRoot, environment: environment).capture(["kecalek", "show"])
        #expect(missing.status == ExitCode.noInput)
        #expect(missing.standardError == "Error: No cache at \(store); run 'tidings kecalek sync' first.\n")
        let sync = await Runner(root: tidingsRoot, environment: environment).capture([
            "kecalek", "sync", "--conversation", "random", "--limit", "5",
        ])
        #expect(sync.status == 0, "\(sync.standardError)")
        #expect(sync.standardOutput.contains("Cache: \(store) (encrypted with your --key)"))
        #expect(!sync.standardOutput.contains(KecalekCLI.cacheKey), "the key was printed")
        // The environment's key opened it; the command line's key wins over the environment's.
        let show = await Runner(root: tidingsRoot, environment: environment).capture(["kecalek", "show"])
        #expect(show.status == 0, "\(show.standardError)")
        #expect(show.standardOutput.contains("random: 5 cached"))
        let otherKey = String(repeating: "a5", count: 32)
        let wrong = await Runner(root: tidingsRoot, environment: environment).capture([
            "kecalek", "show", "--key", otherKey,
        ])
        #expect(wrong.status == ExitCode.noPermission)
    }

    @Test func theServerAndTokenComeFromTheEnvironmentAndTheTokenIsNeverPrinted() async throws {
        let (_, endpoint) = try await KecalekCLI.server()
        defer { endpoint.stop() }
        let store = try KecalekCLI.temporaryStore()
        let token = "-x1-env-token-secret"
        let environment = [
            "TIDINGS_KECALEK_SERVER": endpoint.url.absoluteString, "TIDINGS_KECALEK_TOKEN": token,
            "TIDINGS_KECALEK_KEY": KecalekCLI.cacheKey,
        ]
        let run = await Runner(root: tidingsRoot, environment: environment).capture(
            ["kecalek", "sync", "--store", store, "--user", "alice"]
                + (try KecalekCLI.conversationKeyArguments(["general"])))
        #expect(run.status == ExitCode.noPermission, "\(run.standardError)")
        #expect(run.standardError.contains("refused the token (HTTP 401)"))
        #expect(!(run.standardOutput + run.standardError).contains(token))
        // The same token on the command line, dash and all, is a value rather than an unknown option.
        let given = await Runner(root: tidingsRoot, environment: [:]).capture(
            [
                "kecalek", "sync", "--store", store, "--user", "alice", "--server", endpoint.url.absoluteString,
                "--token", token, "--key", KecalekCLI.cacheKey, "--json",
            ] + (try KecalekCLI.conversationKeyArguments(["general"])))
        #expect(given.status == ExitCode.noPermission)
        #expect(!(given.standardOutput + given.standardError).contains(token))
    }
}
