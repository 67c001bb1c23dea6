import Foundation
import Testing

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct EngineIOPacketCodecTests {
    @Test func textPacketsRoundTripThroughWebSocketFrames() throws {
        for kind in EngineIOPacket.Kind.allCases {
            let packet = EngineIOPacket(kind, .text("probe é 🎉"))
            let frame = packet.frame()
            #expect(frame == .text("\(kind.rawValue)probe é 🎉"))
            #expect(try EngineIOPacket.decode(frame) == packet)
        }
    }

    @Test func binaryMessagesAreRawInV4AndTypePrefixedInV3() throws {
        let packet = EngineIOPacket.message([0, 1, 255])
        #expect(packet.frame(version: .v4) == .binary([0, 1, 255]))
        #expect(packet.frame(version: .v3) == .binary([4, 0, 1, 255]))
        #expect(try EngineIOPacket.decode(.binary([4, 0, 1, 255]), version: .v3) == packet)
        #expect(try EngineIOPacket.decode(.binary([0, 1, 255]), version: .v4) == packet)
    }

    @Test func malformedPacketsAreTypedErrors() {
        #expect(throws: EngineIOError.malformedPacket) { try EngineIOPacket.decode(text: "") }
        #expect(throws: EngineIOError.malformedPacket) { try EngineIOPacket.decode(text: "7") }
        #expect(throws: EngineIOError.malformedPacket) { try EngineIOPacket.decode(text: "x") }
        #expect(throws: EngineIOError.malformedPacket) { try EngineIOPacket.decode(text: "/4") }
        #expect(throws: EngineIOError.malformedPacket) { try EngineIOPacket.decode(.binary([]), version: .v3) }
        #expect(throws: EngineIOError.malformedPacket) { try EngineIOPacket.decode(.binary([9]), version: .v3) }
    }

    @Test func aCombiningMarkAfterTheTypeStaysInTheBody() throws {
        let packet = try EngineIOPacket.decode(text: "4\u{301}x")
        #expect(packet.kind == .message)
        #expect(packet.text == "\u{301}x")
    }

    @Test func v4PayloadsSeparatePacketsWithRecordSeparator() throws {
        let packets: [EngineIOPacket] = [.message("hello"), .message([1, 2, 3]), EngineIOPacket(.ping)]
        let body = EngineIOPayload.encode(packets)
        #expect(body == Array("4hello\u{1E}bAQID\u{1E}2".utf8))
        #expect(try EngineIOPayload.decode(body) == packets)
    }

    @Test func v3PayloadsCountLengthsInUTF16Units() throws {
        let packets: [EngineIOPacket] = [.message("é🎉"), .message([1, 2, 3]), EngineIOPacket(.pong)]
        let body = EngineIOPayload.encode(packets, version: .v3)
        // "4é🎉" is 4 UTF-16 units: the digit, é, and a surrogate pair.
        #expect(String(decoding: body, as: UTF8.self) == "4:4é🎉6:b4AQID1:3")
        #expect(try EngineIOPayload.decode(body, version: .v3) == packets)
    }

    @Test func malformedPayloadsAreTypedErrors() {
        let cases: [(String, EngineIOVersion)] = [
            ("", .v4), ("4a\u{1E}", .v4), ("b!!!", .v4), ("\u{1E}", .v4),
            ("", .v3), ("5:4abc", .v3), ("x:4", .v3), ("0:", .v3), ("3", .v3), ("2:b9", .v3),
            ("99999999999:4", .v3), ("4:b4!!", .v3),
        ]
        for (body, version) in cases {
            #expect(throws: EngineIOError.self, "\(body)") {
                try EngineIOPayload.decode(Array(body.utf8), version: version)
            }
        }
    }

    @Test func decodingRefusesMoreThanTheLimit() throws {
        let body = EngineIOPayload.encode(Array(repeating: .message("x"), count: 17))
        #expect(throws: EngineIOError.tooManyPackets) {
            try EngineIOPayload.decode(body, maximumPackets: EngineIOPayload.maximumPacketsPerPost)
        }
        #expect(try EngineIOPayload.decode(body).count == 17)
    }

    @Test func handshakeParsesTheServersParameters() throws {
        let handshake = try EngineIOHandshake(
            json:
                #"{"sid":"abc","upgrades":["websocket"],"pingTimeout":20000,"pingInterval":25000,"maxPayload":1000000}"#
        )
        #expect(handshake.sid == "abc")
        #expect(handshake.upgrades == ["websocket"])
        #expect(handshake.pingInterval == .seconds(25))
        #expect(handshake.pingTimeout == .seconds(20))
        #expect(handshake.maxPayload == 1_000_000)
    }

    @Test func handshakeWithoutRequiredFieldsIsRefused() {
        for json in [
            "", "[]", #"{"sid":""}"#, #"{"sid":"a","pingInterval":1}"#, #"{"sid":1,"pingInterval":1,"pingTimeout":1}"#,
        ] {
            #expect(throws: EngineIOError.malformedHandshake, "\(json)") { try EngineIOHandshake(json: json) }
        }
    }
}
