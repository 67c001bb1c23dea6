import Foundation
import TidingsCore

/// What the raised set knows about one candidate, read from ``NotificationPolicyStore`` (or a test's table).
public struct RaisedState: Hashable, Sendable {
    /// Whether the candidate's own server ID was raised.
    public var notificationRaised: Bool
    /// The newest notification ID raised for the candidate's group, and the request identifier it went under.
    public var group: (newest: ServerID, requestIdentifier: String)?
    /// The request identifier the candidate's newest notification was shown under beside its recorded group (a
    /// push not matched to the group); the group's update supersedes it. Set by the store, not compared.
    var besideGroup: String?

    /// A state.
    public init(notificationRaised: Bool = false, group: (newest: ServerID, requestIdentifier: String)? = nil) {
        self.notificationRaised = notificationRaised
        self.group = group
    }

    /// Nothing raised yet.
    public static let none = RaisedState()

    /// Equal when both parts are equal.
    public static func == (lhs: RaisedState, rhs: RaisedState) -> Bool {
        lhs.notificationRaised == rhs.notificationRaised && lhs.group?.newest == rhs.group?.newest
            && lhs.group?.requestIdentifier == rhs.group?.requestIdentifier
    }

    /// Hashes both parts, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(notificationRaised)
        hasher.combine(group?.newest)
        hasher.combine(group?.requestIdentifier)
    }
}

/// Everything outside the candidate and the settings that a decision depends on.
public struct NotificationPolicyContext: Sendable {
    /// Now, from the injected clock (``NotificationPolicyClock``).
    public var now: Date
    /// The person's current time zone, which quiet hours and digest times are read in.
    public var zone: NotificationTimeZone
    /// The account's notifications marker (last read notification), nil when unknown.
    public var marker: ServerID?
    /// How the content is worded and laid out.
    public var content: NotificationContentContext

    /// A context in Foundation's `timeZone`.
    public init(now: Date, timeZone: TimeZone, marker: ServerID?, content: NotificationContentContext = .init()) {
        self.init(now: now, zone: .foundation(timeZone), marker: marker, content: content)
    }

    /// A context in `zone` (``NotificationTimeZone/current()`` reads the device's without ICU on Linux).
    public init(
        now: Date, zone: NotificationTimeZone, marker: ServerID?, content: NotificationContentContext = .init()
    ) {
        self.now = now
        self.zone = zone
        self.marker = marker
        self.content = content
    }

    /// The zone as Foundation's `TimeZone` (reading a ``NotificationTimeZone/zoneInfo(_:)`` zone this way looks
    /// it up in Foundation); setting it makes ``zone`` that Foundation zone.
    public var timeZone: TimeZone {
        get { zone.foundationTimeZone }
        set { zone = .foundation(newValue) }
    }
}

/// `NotificationPolicy` is the decision of seed 002 §5 and issue 12 as one pure function: the same candidate,
/// settings, context and raised state always give the same decision. Push (content mode), polls and the
/// stream all call it, which is what makes "raised at most once" hold across them.
///
/// The rules, in order:
/// 1. a category switched off → drop (`categoryOff`);
/// 2. a notification the marker covers (`serverID ≤ marker` in `ServerID` order) → drop (`coveredByMarker`);
/// 3. already raised (its ID, or its group at this newest ID or newer) → drop (`alreadyRaised`); a group
///    raised before at an older newest ID → update in place under the same request identifier, even inside
///    quiet hours or a digest (it replaces what is shown; it does not add a notification);
/// 4. inside quiet hours → hold until their end;
/// 5. digest delivery → hold until the next digest time, unless it is a private mention or a mention from a
///    followed account and the setting lets those through;
/// 6. otherwise raise.
public enum NotificationPolicy {
    /// Decides what to do with `candidate`.
    public static func decide(
        _ candidate: NotificationCandidate, settings: NotificationSettings, context: NotificationPolicyContext,
        raised: RaisedState
    ) -> NotificationDecision {
        guard settings.enabledCategories.contains(candidate.category) else { return .drop(.categoryOff) }
        if let marker = context.marker, candidate.serverID <= marker { return .drop(.coveredByMarker) }
        if raised.notificationRaised { return .drop(.alreadyRaised) }
        if let group = raised.group, candidate.groupKey != nil {
            guard group.newest < candidate.serverID else { return .drop(.alreadyRaised) }
            var request = NotificationContentBuilder.request(for: candidate, context: context.content)
            request.identifier = group.requestIdentifier
            return .update(request)
        }
        // Without quiet hours or a digest no rule below reads the local time: no calendar is built, so a
        // notification extension's decision touches neither the calendar nor the time zone (issue 12's P2).
        guard settings.usesLocalTime else {
            return .raise(NotificationContentBuilder.request(for: candidate, context: context.content))
        }
        let calendar = NotificationCalendar(zone: context.zone)
        if calendar.isQuiet(context.now, settings.quietHours) {
            return .hold(until: calendar.quietEnd(at: context.now, settings.quietHours), reason: .quietHours)
        }
        if case .digest(_, let urgentAtOnce) = settings.delivery, settings.isDigest {
            if !(urgentAtOnce && candidate.isUrgentMention),
                let next = calendar.digestTimes(after: context.now, settings: settings, count: 1).first
            {
                return .hold(until: next, reason: .digest)
            }
        }
        return .raise(NotificationContentBuilder.request(for: candidate, context: context.content))
    }
}
