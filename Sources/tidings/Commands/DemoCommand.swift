/// `tidings demo`: every module at work against the in-process sandbox, no server needed.
let demoCommand = Command(
    name: "demo",
    abstract: "Show Tidings at work against in-process sandbox servers (no network needed).",
    usage: "demo [--only <part>]",
    options: ["--only <part>           Run one part: " + demoParts.map(\.name).joined(separator: ", ") + "."],
    run: { arguments in
        let only = try arguments.option("--only")
        try arguments.finish()
        let parts = try demoParts.filter { part in
            guard let only else { return true }
            guard demoParts.contains(where: { $0.name == only }) else {
                throw UsageError(message: "Unknown demo part '\(only)'.")
            }
            return part.name == only
        }
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
]
