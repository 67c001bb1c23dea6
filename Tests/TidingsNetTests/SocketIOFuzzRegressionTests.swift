import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// Replays the inputs kept in Tests/Fixtures/fuzz/ through the checks of the libFuzzer targets, so a
/// fixed finding stays fixed.
@Suite(.timeLimit(.minutes(1))) struct SocketIOFuzzRegressionTests {
    static func fixtures(_ area: String) throws -> [(String, [UInt8])] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/fuzz/\(area)").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "README.md" }
        return try names.sorted().map { ($0, Array(try Data(contentsOf: folder.appendingPathComponent($0)))) }
    }

    @Test func socketIOInputsDecodeOrFailWithTypedErrorsAndRoundTrip() throws {
        let inputs = try Self.fixtures("socketio")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            let text = String(decoding: lines.first ?? [], as: UTF8.self)
            do {
                let packet = try SocketIOPacket.decode(text)
                if packet.attachmentCount == 0, packet.kind != .binaryEvent, packet.kind != .binaryAck {
                    #expect(try SocketIOPacket.decode(packet.encoded().text) == packet, "\(name)")
                }
            } catch {
                #expect(error is SocketIOError, "\(name)")
            }
            var assembler = SocketIOPacketAssembler()
            _ = try? assembler.receive(text: text)
            for attachment in lines.dropFirst() { _ = try? assembler.receive(binary: Array(attachment)) }
            if let value = try? JSONValue(parsing: bytes) {
                #expect(try JSONValue(parsing: value.jsonString()) == value, "\(name)")
            }
        }
    }
}
