import PeerSupport
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct LoggerTests {
    @Test func dropsRecordsBelowTheMinimumLevelWithoutBuildingThem() {
        let collected = LogCollector()
        let log = TidingsLogger(subsystem: "test", minimumLevel: .warning) { collected.append($0) }
        var built = 0
        func message() -> String {
            built += 1
            return "m"
        }
        log.info(message())
        log.warning(message())
        #expect(built == 1)
        #expect(collected.records.map(\.level) == [.warning])
        #expect(collected.records.first?.description == "[warning] test: m")
    }

    @Test func scopedKeepsSinkAndLevel() {
        let collected = LogCollector()
        let log = TidingsLogger(subsystem: "a", minimumLevel: .debug) { collected.append($0) }.scoped("b")
        log.debug("x")
        #expect(collected.records.map(\.subsystem) == ["b"])
    }
}
