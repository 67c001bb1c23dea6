import Testing

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct WebSocketFrameCodecTests {
    private func decodeAll(_ bytes: [UInt8], role: WebSocketRole, limit: Int = 1 << 24) throws(WebSocketError)
        -> [WebSocketFrame]
    {
        var decoder = WebSocketFrameDecoder(role: role, maximumFrameSize: limit)
        decoder.append(bytes)
        var frames: [WebSocketFrame] = []
        while let frame = try decoder.nextFrame() { frames.append(frame) }
        return frames
    }

    @Test(arguments: [0, 1, 125, 126, 65_535, 65_536, 1 << 20])
    func framesRoundTripAtEveryLengthBoundary(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 13) }
        let frame = WebSocketFrame(opcode: .binary, payload: payload)
        let masked = WebSocketFrameEncoder(role: .client).encode(frame)
        let plain = WebSocketFrameEncoder(role: .server).encode(frame)
        #expect(try decodeAll(masked, role: .server) == [frame])
        #expect(try decodeAll(plain, role: .client) == [frame])
        // The header grows exactly at the 7-, 16- and 64-bit boundaries (RFC 6455 §5.2).
        let header = length <= 125 ? 2 : length <= 65_535 ? 4 : 10
        #expect(plain.count == header + length)
        #expect(masked.count == header + 4 + length)
        if length > 8 { #expect(Array(masked.suffix(length)) != payload) }
    }

    @Test func aKnownMaskedFrameFromTheRFCDecodes() throws {
        // RFC 6455 §5.7: a single-frame masked text message containing "Hello".
        let bytes: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        #expect(try decodeAll(bytes, role: .server) == [WebSocketFrame(opcode: .text, payload: Array("Hello".utf8))])
        #expect(
            WebSocketFrameEncoder.encode(
                WebSocketFrame(opcode: .text, payload: Array("Hello".utf8)), maskingKey: (0x37, 0xFA, 0x21, 0x3D))
                == bytes)
    }

    @Test func bytesArrivingOneAtATimeYieldTheSameFrames() throws {
        let frames = [
            WebSocketFrame(fin: false, opcode: .text, payload: Array("frag".utf8)),
            WebSocketFrame(opcode: .ping, payload: [1, 2]),
            WebSocketFrame(opcode: .continuation, payload: Array(repeating: 0x61, count: 70_000)),
        ]
        let bytes = frames.flatMap { WebSocketFrameEncoder(role: .server).encode($0) }
        var decoder = WebSocketFrameDecoder(role: .client)
        var decoded: [WebSocketFrame] = []
        for byte in bytes {
            decoder.append([byte])
            while let frame = try decoder.nextFrame() { decoded.append(frame) }
        }
        #expect(decoded == frames)
        #expect(decoder.bufferedByteCount == 0)
    }

    private func violation(_ bytes: [UInt8], role: WebSocketRole = .client, limit: Int = 1 << 24) -> WebSocketError? {
        do {
            _ = try decodeAll(bytes, role: role, limit: limit)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyFrameRuleViolationIsATypedErrorWithItsCloseCode() {
        let cases: [(String, [UInt8], WebSocketRole, WebSocketError)] = [
            ("RSV1 without extension", [0xC1, 0x00], .client, .protocolViolation),
            ("RSV3", [0x91, 0x00], .client, .protocolViolation),
            ("reserved opcode 3", [0x83, 0x00], .client, .protocolViolation),
            ("reserved control opcode 0xB", [0x8B, 0x00], .client, .protocolViolation),
            ("masked frame to a client", [0x81, 0x80, 1, 2, 3, 4], .client, .protocolViolation),
            ("unmasked frame to a server", [0x81, 0x00], .server, .protocolViolation),
            ("fragmented ping", [0x09, 0x00], .client, .protocolViolation),
            (
                "ping with 126-byte length", [0x89, 0x7E, 0x00, 0x7E] + Array(repeating: 0, count: 126), .client,
                .protocolViolation
            ),
            ("64-bit length with top bit", [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1], .client, .protocolViolation),
        ]
        for (name, bytes, role, kind) in cases {
            let error = violation(bytes, role: role)
            #expect(error == kind, "\(name)")
            #expect(error?.closeCode == .protocolError, "\(name)")
        }
    }

    @Test func aFrameAboveTheLimitFailsBeforeItsPayloadArrives() {
        // Only the header of a 2 MiB frame: the decoder must refuse it without waiting for the bytes.
        let error = violation([0x82, 0x7F, 0, 0, 0, 0, 0, 0x20, 0, 0], limit: 1 << 20)
        #expect(error == .messageTooBig)
        #expect(error?.closeCode == .messageTooBig)
    }

    @Test func closeFramesCarryCodeAndReasonAndRejectBadOnes() throws {
        let close = WebSocketFrame.close(code: .goingAway, reason: "maintenance")
        #expect(try close.closeStatus() == (WebSocketCloseCode.goingAway, "maintenance"))
        #expect(try WebSocketFrame(opcode: .close).closeStatus().code == .noStatusReceived)
        #expect(throws: WebSocketError.self) { try WebSocketFrame(opcode: .close, payload: [0x03]).closeStatus() }
        // 1005 and 1006 must never appear on the wire; 999 and 5000 are outside every range.
        for code: UInt16 in [999, 1004, 1005, 1006, 1015, 2999, 5000] {
            let frame = WebSocketFrame(opcode: .close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)])
            #expect(throws: WebSocketError.self, "\(code)") { try frame.closeStatus() }
        }
        let badReason = WebSocketFrame(opcode: .close, payload: [0x03, 0xE8, 0xFF])
        let badUTF8 = #expect(throws: WebSocketError.invalidUTF8) { try badReason.closeStatus() }
        #expect(badUTF8?.detail == "close reason is not valid UTF-8")
        // A long reason is cut on a character boundary to fit the 125-byte control-frame limit.
        let long = WebSocketFrame.close(code: .normalClosure, reason: String(repeating: "é", count: 100))
        #expect(long.payload.count <= 125)
        #expect(try long.closeStatus().reason == String(repeating: "é", count: 61))
    }

    @Test func framesQueuedIntoOneBufferGrowItGeometrically() throws {
        // A burst of small sends is encoded into one queue; growing it by one frame at a time would
        // copy the whole queue for every frame.
        var queue: [UInt8] = []
        var reallocations = 0
        var capacity = queue.capacity
        let frame = WebSocketFrame(opcode: .text, payload: Array("pipe 000000000000000000000000001".utf8))
        for _ in 0..<2_000 {
            WebSocketFrameEncoder.encode(frame, maskingKey: (1, 2, 3, 4), into: &queue)
            if queue.capacity != capacity {
                reallocations += 1
                capacity = queue.capacity
            }
        }
        #expect(queue.count == 2_000 * (frame.payload.count + 6))
        #expect(reallocations < 30)
        // Every frame is still whole and in order.
        var decoder = WebSocketFrameDecoder(role: .server)
        decoder.append(queue)
        var decoded = 0
        while let next = try decoder.nextFrame() {
            #expect(next.payload == frame.payload)
            decoded += 1
        }
        #expect(decoded == 2_000)
    }
}

@Suite(.timeLimit(.minutes(1))) struct WebSocketMessageAssemblerTests {
    @Test func fragmentsJoinIntoOneMessage() throws {
        var assembler = WebSocketMessageAssembler()
        #expect(try assembler.push(WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8))) == nil)
        #expect(assembler.isAssembling)
        #expect(try assembler.push(WebSocketFrame(fin: false, opcode: .continuation, payload: [])) == nil)
        #expect(try assembler.push(WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8))) == .text("Hello"))
        #expect(try assembler.push(WebSocketFrame(opcode: .binary, payload: [9])) == .binary([9]))
        #expect(try assembler.push(WebSocketFrame(opcode: .text, payload: [])) == .text(""))
    }

    @Test func aCharacterSplitAcrossFragmentsIsValid() throws {
        var assembler = WebSocketMessageAssembler()
        let euro = Array("€".utf8)  // E2 82 AC
        _ = try assembler.push(WebSocketFrame(fin: false, opcode: .text, payload: [euro[0]]))
        _ = try assembler.push(WebSocketFrame(fin: false, opcode: .continuation, payload: [euro[1]]))
        #expect(try assembler.push(WebSocketFrame(opcode: .continuation, payload: [euro[2]])) == .text("€"))
    }

    @Test func invalidUTF8FailsAtTheBadFragmentNotAtTheEnd() {
        var assembler = WebSocketMessageAssembler()
        let error = #expect(throws: WebSocketError.invalidUTF8) {
            // 0xED 0xA0 starts a UTF-16 surrogate, which UTF-8 forbids; the message is not finished yet.
            try assembler.push(WebSocketFrame(fin: false, opcode: .text, payload: [0x61, 0xED, 0xA0]))
        }
        #expect(error?.detail == "text message is not valid UTF-8")
        var truncated = WebSocketMessageAssembler()
        #expect(throws: WebSocketError.self) {
            try truncated.push(WebSocketFrame(opcode: .text, payload: [0xE2, 0x82]))
        }
    }

    @Test func fragmentationRulesAreEnforced() {
        var assembler = WebSocketMessageAssembler()
        #expect(throws: WebSocketError.self) {
            try assembler.push(WebSocketFrame(opcode: .continuation, payload: [1]))
        }
        var interleaved = WebSocketMessageAssembler()
        #expect(throws: WebSocketError.self) {
            _ = try interleaved.push(WebSocketFrame(fin: false, opcode: .binary, payload: [1]))
            _ = try interleaved.push(WebSocketFrame(opcode: .text, payload: [2]))
        }
    }

    @Test func aMessageAboveTheLimitIsRefusedWithCode1009() {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 10)
        #expect(throws: WebSocketError.self) {
            _ = try assembler.push(WebSocketFrame(fin: false, opcode: .binary, payload: Array(repeating: 0, count: 6)))
            _ = try assembler.push(WebSocketFrame(opcode: .continuation, payload: Array(repeating: 0, count: 5)))
        }
    }

    @Test func theValidatorAgreesWithTheStandardLibraryOnEdgeCases() {
        let samples: [[UInt8]] = [
            [0xC0, 0x80], [0xC2, 0x80], [0xE0, 0x80, 0x80], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
            [0xED, 0xA0, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0x80], Array("ok 😀".utf8),
        ]
        for sample in samples {
            var validator = UTF8Validator()
            let ours = validator.consume(sample) && validator.isComplete
            // The standard library repairs ill-formed UTF-8, so bytes survive decoding unchanged exactly when
            // they are valid (`String(validating:as:)` would say so directly, but needs macOS 15 / iOS 18).
            let theirs = String(decoding: sample, as: UTF8.self).utf8.elementsEqual(sample)
            #expect(ours == theirs, "\(sample)")
        }
    }
}
