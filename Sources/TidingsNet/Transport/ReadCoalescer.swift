/// Decides when a socket's reads should be coalesced: while small reads arrive densely, the reader
/// asks the kernel to wake it only once many messages' worth of bytes are queued (`SO_RCVLOWAT`), and
/// reads whatever arrived at a deadline at most ``Settings/maximumDelay`` away, whichever comes first.
/// A dense stream of small messages is then read in batches, once per delay, instead of once per message.
///
/// Why: a peer that streams small messages (a chat server replaying a backlog, the echoes of pipelined
/// requests) otherwise wakes the reader once per message. On loopback and on small machines the peer
/// pays for every one of those wake-ups inside its own `send`, so an idle, fast client slows a busy
/// server down, and each wake-up costs the client a thread switch or two (docs/BENCHMARKS.md, "WS4").
/// Below the mark the peer's sends wake nobody; the reader's own timer does.
///
/// Latency stays bounded: a coalesced wait never lasts longer than ``Settings/maximumDelay`` (plus the
/// kernel's timer slack), and waits are only coalesced after ``Settings/entryStreak`` consecutive small
/// reads each found data within ``Settings/denseGap`` of starting to wait, which a request–response
/// exchange (one message in flight) rarely shows; a bulk transfer fills the mark at once. A coalesced
/// wait that ends at its deadline with less than ``Settings/minimumReadsPerWait`` reads' worth of bytes
/// means the stream is no longer dense enough to be worth the delay: coalescing stops, and the streak
/// needed to start again doubles (up to ``Settings/maximumEntryStreak``), so a mistaken guess costs at
/// most one delay per ever longer streak. A worthwhile coalesced wait resets the streak needed.
///
/// The policy is pure: times are nanoseconds of a monotonic clock given by the caller, so tests drive
/// it on virtual time.
struct ReadCoalescer: Sendable {
    /// The thresholds of the policy.
    struct Settings: Sendable, Equatable {
        /// A read of at most this many bytes counts as small.
        var smallReadLimit = 2048
        /// A small read that ends a wait shorter than this counts towards the streak (nanoseconds).
        var denseGap: UInt64 = 50_000
        /// Consecutive dense reads needed before the first coalesced wait.
        var entryStreak = 4
        /// The largest streak a run of mistaken guesses can make necessary.
        var maximumEntryStreak = 1024
        /// How many reads' worth of bytes one coalesced wait asks for (capped by
        /// ``maximumLowWatermark``): more than a dense stream brings within the delay, so that the
        /// deadline, not the peer's sends, paces the reader.
        var readsPerWake = 64
        /// A coalesced wait that reaches its deadline with fewer reads' worth of bytes than this ends
        /// coalescing: the stream is no longer dense enough to be worth the delay.
        var minimumReadsPerWait = 2
        /// The largest low-water mark asked for (bytes).
        var maximumLowWatermark = 4096
        /// The longest a coalesced wait may last before the reader reads what arrived (nanoseconds).
        var maximumDelay: UInt64 = 100_000

        /// Never coalesces (for platforms and sockets that cannot set a low-water mark).
        static let disabled = Settings(entryStreak: Int.max, maximumEntryStreak: Int.max)
    }

    /// How the next wait for readability should go.
    struct Plan: Equatable, Sendable {
        /// The low-water mark the socket must have during the wait (1: every byte wakes the reader).
        var lowWatermark: Int
        /// When the reader must be woken regardless, in nanoseconds; set whenever `lowWatermark` > 1.
        var deadline: UInt64?
    }

    let settings: Settings
    /// The low-water mark of the current coalesced waits, or 1 while not coalescing.
    private(set) var lowWatermark = 1
    /// Consecutive dense reads seen while not coalescing.
    private var streak = 0
    /// The streak needed to start coalescing; doubles after each mistaken guess.
    private(set) var requiredStreak: Int
    /// When the pending wait started, if the reader is waiting (or woke and has not read yet).
    private var waitStarted: UInt64?
    /// The deadline of the pending coalesced wait.
    private var deadline: UInt64?
    /// Size of the last small read before coalescing began: sizes the low-water mark and the least
    /// a coalesced wait must bring.
    private var lastSmallRead = 0

    init(settings: Settings = Settings()) {
        self.settings = settings
        requiredStreak = settings.entryStreak
    }

    /// Whether waits are being coalesced now.
    var isCoalescing: Bool { lowWatermark > 1 }

    /// The reader found nothing to read and is about to wait, at `now`.
    ///
    /// Called again after a wake-up that found nothing, the deadline of a coalesced wait is kept, not
    /// moved, so no wait outlasts ``Settings/maximumDelay`` from its start.
    mutating func willWait(now: UInt64) -> Plan {
        if waitStarted == nil {
            waitStarted = now
            if isCoalescing { deadline = now.addingReportingOverflow(settings.maximumDelay).partialValue }
        } else if isCoalescing, let deadline, now >= deadline {
            // The deadline passed without a single byte: the stream went quiet.
            stopAfterMistake()
            waitStarted = now
        }
        guard isCoalescing, let deadline else { return Plan(lowWatermark: 1, deadline: nil) }
        return Plan(lowWatermark: lowWatermark, deadline: deadline)
    }

    /// The wait as it must go on a socket whose low-water mark is `socketLowWatermark` after trying to apply
    /// `planned`: a socket left above one byte (the kernel refused to lower its mark) still gets a deadline,
    /// at most ``Settings/maximumDelay`` from `now`, so bytes below the mark never wait for ever; a socket at
    /// one byte needs none.
    func plan(_ planned: Plan, onSocketAt socketLowWatermark: Int, now: UInt64) -> Plan {
        guard socketLowWatermark > 1 else { return Plan(lowWatermark: 1, deadline: nil) }
        let deadline = planned.deadline ?? now.addingReportingOverflow(settings.maximumDelay).partialValue
        return Plan(lowWatermark: socketLowWatermark, deadline: deadline)
    }

    /// A read returned `count` bytes (more than zero); `now` is read only when a wait preceded the read,
    /// so the common case of bytes already queued costs no clock read.
    mutating func didRead(count: Int, now: @autoclosure () -> UInt64) {
        guard let started = waitStarted else {
            // The bytes were already there when the reader came back: no wait to judge.
            return
        }
        let now = now()
        waitStarted = nil
        if isCoalescing {
            let reachedDeadline = deadline.map { now >= $0 } ?? true
            deadline = nil
            if count >= lowWatermark {
                requiredStreak = settings.entryStreak
            } else if reachedDeadline {
                let worthwhile = lastSmallRead.multipliedReportingOverflow(by: settings.minimumReadsPerWait)
                if worthwhile.overflow || count < worthwhile.partialValue {
                    stopAfterMistake()
                } else {
                    requiredStreak = settings.entryStreak
                }
            }
            return
        }
        let waited = now >= started ? now - started : 0
        if count <= settings.smallReadLimit, waited <= settings.denseGap {
            streak += 1
            lastSmallRead = count
        } else {
            streak = 0
        }
        if streak >= requiredStreak {
            let wanted = lastSmallRead.multipliedReportingOverflow(by: settings.readsPerWake)
            let mark = wanted.overflow ? settings.maximumLowWatermark : wanted.partialValue
            lowWatermark = min(max(mark, 2), settings.maximumLowWatermark)
            streak = 0
        }
    }

    /// Coalescing stops; the next start needs twice the streak.
    private mutating func stopAfterMistake() {
        lowWatermark = 1
        deadline = nil
        streak = 0
        let doubled = requiredStreak.multipliedReportingOverflow(by: 2)
        requiredStreak =
            doubled.overflow ? settings.maximumEntryStreak : min(doubled.partialValue, settings.maximumEntryStreak)
    }
}
