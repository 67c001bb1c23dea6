#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The version printed by `tidings --version`.
let tidingsVersion = "0.1.0"

let root = Command(
    name: "tidings",
    abstract: "A client-side sync engine for chat and social apps: try it, sync, inspect.",
    usage: "<subcommand> [options]",
    options: ["--version               Show the version."],
    subcommands: [
        demoCommand,
        kecalekCommand,
        sandboxCommand,
    ],
    run: { arguments in
        if arguments.flag("--version") {
            try arguments.finish()
            print(tidingsVersion)
            return
        }
        try arguments.finish()
        print(root.help(path: []), terminator: "")
    }
)

exit(await Runner(root: root).run(Array(CommandLine.arguments.dropFirst())))
