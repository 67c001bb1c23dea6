/// The version printed by `tidings --version`.
let tidingsVersion = "0.1.0"

private let versionOption = OptionSpec.flag("--version", help: "Show the version.")

/// `tidings`: the root of every command; alone it prints its help (the runner does that for every group), with
/// `--version` the version.
let tidingsRoot = Command(
    name: "tidings",
    abstract: "A client-side sync engine for chat and social apps: try it, sync, inspect.",
    options: [versionOption],
    subcommands: [
        demoCommand, kecalekCommand, mastodonCommand, openMatesCommand, pushCommand, sandboxCommand, ypchatCommand,
    ],
    validate: { _ in },
    run: { _ in print(tidingsVersion) }
)
