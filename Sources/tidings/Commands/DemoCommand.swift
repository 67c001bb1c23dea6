private let onlyOption = OptionSpec.value(
    "--only", "part", help: "Run one part: " + demoParts.map(\.name).joined(separator: ", ") + ".")

/// `tidings demo`: every module at work against the in-process sandbox, no server needed.
let demoCommand = Command(
    name: "demo",
    abstract: "Show Tidings at work against in-process sandbox servers (no network needed).",
    options: [onlyOption],
    validate: { parsed in
        guard let only = parsed.string(onlyOption) else { return demoParts }
        guard let part = demoParts.first(where: { $0.name == only }) else {
            throw ValidationError("Unknown demo part '\(only)'.")
        }
        return [part]
    },
    run: { parts in
        for part in parts {
            print("== \(part.title)\n")
            try await part.run()
            print("")
        }
    }
)

/// One section of the demo.
struct DemoPart: Sendable {
    /// The word for `--only`.
    let name: String
    /// The heading printed before the part runs.
    let title: String
    /// Prints what the part shows; throws only when the library misbehaves.
    let run: @Sendable () async throws -> Void
}

/// The demo's parts in the order they run.
let demoParts: [DemoPart] = [
    coreDemoPart,
    kecalekDemoPart,
    mastodonDemoPart,
    pushDemoPart,
    ypchatDemoPart,
    openMatesDemoPart,
]
