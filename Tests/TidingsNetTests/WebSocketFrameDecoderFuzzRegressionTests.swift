import Foundation
import Testing

@testable import TidingsNet

/// Replays the fuzz regression inputs (Tests/Fixtures/fuzz/websocket/) through the steps of the
/// FuzzWebSocketFrame target: every input must end in frames or a typed error, never a trap.
@Suite(.timeLimit(.minutes(1))) struct WebSocketFrameDecoderFuzzRegressionTests {
    static let folder = Fixtures.root.appendingPathComponent("fuzz/websocket")

    static var inputs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".bin") }
            .sorted()
    }

    @Test func theRegressionFolderIsNotEmpty() {
        #expect(Self.inputs.count >= 6)
    }

    @Test(arguments: inputs)
    func replaysWithoutTrapping(name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: Self.folder.appendingPathComponent(name)))
        guard let first = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        let split = body.isEmpty ? 0 : Int(first) % (body.count + 1)
        for role in [WebSocketRole.client, .server] {
            var decoder = WebSocketFrameDecoder(role: role, maximumFrameSize: 1 << 16)
            var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 17)
            decoder.append(body[..<split])
            decoder.append(body[split...])
            do {
                while let frame = try decoder.nextFrame() {
                    if frame.opcode == .close {
                        _ = try frame.closeStatus()
                    } else if !frame.opcode.isControl {
                        _ = try assembler.push(frame)
                    }
                    let encoded = WebSocketFrameEncoder(role: role == .client ? .server : .client).encode(frame)
                    var echo = WebSocketFrameDecoder(role: role, maximumFrameSize: 1 << 16)
                    echo.append(encoded)
                    #expect(try echo.nextFrame() == frame)
                }
            } catch {
                // A typed error is the expected outcome for malformed input; it must carry a close code
                // that may be sent.
                #expect(error.closeCode.isValidOnWire)
            }
        }
    }

    @Test func handMadeEdgeCasesFailWithTheRightKind() throws {
        func outcome(_ name: String) throws -> WebSocketError? {
            let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(name)).dropFirst())
            var decoder = WebSocketFrameDecoder(role: .client, maximumFrameSize: 1 << 16)
            var assembler = WebSocketMessageAssembler()
            decoder.append(bytes)
            do {
                while let frame = try decoder.nextFrame() {
                    if frame.opcode == .close { _ = try frame.closeStatus() }
                    if !frame.opcode.isControl { _ = try assembler.push(frame) }
                }
                return nil
            } catch {
                return error
            }
        }
        #expect(try outcome("len64-top-bit.bin") == .protocolViolation)
        #expect(try outcome("len64-huge.bin") == .messageTooBig)
        #expect(try outcome("ping-126.bin") == .protocolViolation)
        #expect(try outcome("close-one-byte.bin") == .protocolViolation)
        #expect(try outcome("text-surrogate-split.bin") == .invalidUTF8)
        #expect(try outcome("continuation-first.bin") == .protocolViolation)
    }
}
