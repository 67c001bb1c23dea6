import Foundation
import Testing

@testable import tidings

/// `tidings demo --only mastodon`: a simulated day of one account on a virtual clock, the same every run.
@Suite(.timeLimit(.minutes(2))) struct MastodonDemoTests {
    /// The lines that start with a time of day and hold `text`.
    private static func lines(_ output: String, containing text: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter { $0.contains(text) }
    }

    /// The numbers in `line` after `prefix` (`loadGap ×1, 6 statuses, 1 gap(s) closed` → [1, 6, 1]).
    private static func numbers(after prefix: String, in line: String) -> [Int] {
        guard let range = line.range(of: prefix) else { return [] }
        return line[range.upperBound...].split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
    }

    private static func seconds(_ time: String) -> Int? {
        let parts = time.split(separator: ":").compactMap { Int($0) }
        return parts.count == 3 ? parts[0] * 3600 + parts[1] * 60 + parts[2] : nil
    }

    @Test func theDayShowsTiersGapsMarkersAndRequestsThatAddUp() async throws {
        let first = await Runner(root: tidingsRoot, environment: [:]).capture(["demo", "--only", "mastodon"])
        #expect(first.status == 0, "\(first.standardError)")
        let output = first.standardOutput

        // The tier follows the app: background, the stream with its safety net (doubled in Low Power),
        // offline, the adaptive table once the stream gave up, and the background again at night.
        let tiers = Self.lines(output, containing: "tier → ")
        #expect(tiers.first?.hasPrefix("00:00  tier → background") == true)
        #expect(
            tiers.contains {
                $0.hasPrefix("07:00") && $0.contains("user stream + safety-net ticks, a tick every 5 min")
            })
        #expect(
            tiers.contains {
                $0.contains("user stream + safety-net ticks, a tick every 10 min") && $0.contains("Low Power")
            })
        #expect(tiers.contains { $0.hasPrefix("14:30  tier → offline") })
        #expect(tiers.contains { $0.hasPrefix("15:10") && $0.contains("adaptive polling") })
        #expect(tiers.last?.hasPrefix("22:00  tier → background") == true)

        // A gap made by the burst, then closed by scrolling into it; the same after the network loss.
        let burst = try #require(Self.lines(output, containing: "bob posts 45 at once").first)
        #expect(burst.contains("open gap"))
        let scrolls = Self.lines(output, containing: "scrolls into the gap")
        #expect(scrolls.count == 2)
        for scroll in scrolls {
            let figures = Self.numbers(after: "loadGap ×", in: scroll)
            #expect(figures.count >= 3 && figures[0] >= 1 && figures[1] > 0 && figures[2] >= 1, "\(scroll)")
            #expect(!scroll.contains("gap ·") && !scroll.contains("· open gap"), "\(scroll)")
        }
        let backOnline = try #require(Self.lines(output, containing: "back online").first)
        #expect(backOnline.contains("open gap") && backOnline.contains("the stream gives up"))

        // The stream applied the edit and the delete; the marker was posted, and the other device's picked up.
        #expect(output.contains("bob edits a post: replaced in place"))
        #expect(output.contains("bob deletes a post: gone from the cache"))
        #expect(output.contains("debounce (1 POST)"))
        #expect(output.contains("the other device's marker picked up"))

        // The 429's Retry-After holds every request for 300 s.
        let limited = try #require(Self.lines(output, containing: "429").first)
        let times = limited.split(separator: " ").map(String.init).compactMap { word in
            Self.seconds(word.trimmingCharacters(in: CharacterSet(charactersIn: ";,")))
        }
        #expect(times.count == 2 && times[1] - times[0] >= 300, "\(limited)")

        // The hours add up to the day's total, which is what the transport counted, far below a naive poller;
        // the background refresh runs every night hour, nothing goes while offline.
        let hourLine = try #require(Self.lines(output, containing: "Requests per hour: ").first)
        let hours = Self.numbers(after: "Requests per hour: ", in: hourLine)
        #expect(hours.count == 24)
        #expect(hours[0..<7].allSatisfy { $0 > 0 })
        let day = try #require(Self.lines(output, containing: "Day: ").first)
        let figures = Self.numbers(after: "Day: ", in: day.replacingOccurrences(of: ",", with: ""))
        #expect(figures.count >= 4)
        #expect(figures.first == hours.reduce(0, +))
        #expect(figures.count >= 4 && figures[2] == figures[0] && figures[3] == 2880 && figures[0] < 2880 / 4)

        // A virtual clock, a seeded sandbox and requests let through in a fixed order: the same text every run.
        let second = await Runner(root: tidingsRoot, environment: [:]).capture(["demo", "--only", "mastodon"])
        #expect(second.standardOutput == output)
    }
}
