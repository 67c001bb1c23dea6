import Foundation
import TidingsCore
import TidingsMastodon

/// What the app has told sync, as the demo keeps it to name the tier.
struct MastodonDemoApp {
    var foreground = false
    var online = true
    var lowPower = false
}

/// How the demo's day is written: the tier, durations, the timeline's runs and gaps, times and numbers.
enum MastodonDemoFormat {
    /// The tier the account is on, from the app's state and the stream's, with the schedule the scheduler chose.
    static func tier(_ app: MastodonDemoApp, stream: MastodonStreamState, plan: MastodonPollPlan?) -> String {
        let name: String
        if !app.online {
            name = "offline: nothing polls"
        } else if !app.foreground {
            name = "background: the system's background refresh only"
        } else if stream == .open {
            name = "user stream + safety-net ticks"
        } else {
            name = "adaptive polling (no stream)"
        }
        var schedule = ""
        if let plan, case .every(let interval) = plan.schedule {
            schedule = ", a tick every \(duration(interval))"
            if let timeline = plan.timeline { schedule += " (\(timeline))" }
        }
        return name + schedule + (app.lowPower && app.online && app.foreground ? " [Low Power]" : "")
    }

    /// `30 s`, `5 min`, `90 s`.
    static func duration(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        return seconds >= 60 && seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }

    /// The timeline newest first as runs: `open gap · 72 statuses` (a gap above the newest stored).
    static func layout(_ entries: [MastodonTimelineEntry]) -> String {
        var parts: [String] = []
        var run = 0
        for entry in entries.reversed() {
            if entry.isGap {
                if run > 0 { parts.append("\(run) statuses") }
                parts.append(entry.content == .gap(.open) ? "open gap" : "unfillable gap")
                run = 0
            } else {
                run += 1
            }
        }
        if run > 0 { parts.append("\(run) statuses") }
        return parts.joined(separator: " · ")
    }

    /// A second of the day as `HH:MM:SS`.
    static func clock(_ second: Int) -> String {
        String(format: "%02d:%02d:%02d", second / 3600, (second / 60) % 60, second % 60)
    }

    /// `1,234`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }
}
