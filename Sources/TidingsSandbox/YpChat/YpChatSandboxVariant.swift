/// Ways a real YpChat server may differ from the plan's reading, as switches of the sandbox.
public struct YpChatSandboxVariant: Sendable, Equatable {
    /// Users are sent with `userName` only (no gender, age or country).
    public var omitOptionalUserFields = false
    /// The server also emits events the plan does not name (`serverNotice` after each connect).
    public var extraUnknownEvents = false

    /// The server refuses WebSocket (a proxy without upgrades): clients stay on polling.
    public var pollingOnly = false

    /// The plan's server.
    public init(omitOptionalUserFields: Bool = false, extraUnknownEvents: Bool = false, pollingOnly: Bool = false) {
        self.omitOptionalUserFields = omitOptionalUserFields
        self.extraUnknownEvents = extraUnknownEvents
        self.pollingOnly = pollingOnly
    }
}
