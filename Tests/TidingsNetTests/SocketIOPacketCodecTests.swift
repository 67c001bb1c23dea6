import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct SocketIOPacketCodecTests {
    @Test func encodesEventsAcksAndConnects() {
        #expect(SocketIOPacket(.connect).encoded().text == "0")
        #expect(SocketIOPacket(.connect, data: ["token": "t"]).encoded().text == #"0{"token":"t"}"#)
        #expect(SocketIOPacket(.connect, namespace: "/admin").encoded().text == "0/admin,")
        #expect(SocketIOPacket.event("hi", [1, "x"]).encoded().text == #"2["hi",1,"x"]"#)
        #expect(SocketIOPacket.event("hi", [], namespace: "/chat", id: 7).encoded().text == #"2/chat,7["hi"]"#)
        #expect(SocketIOPacket(.ack, id: 12, data: [true]).encoded().text == "312[true]")
        #expect(SocketIOPacket(.disconnect).encoded().text == "1")
    }

    @Test func binaryArgumentsBecomePlaceholdersAndAttachments() throws {
        let (text, attachments) = SocketIOPacket.event("up", [.binary([1, 2]), ["nested": .binary([3])]], id: 4)
            .encoded()
        #expect(attachments.count == 2)
        #expect(text.hasPrefix("52-4["))
        let decoded = try SocketIOPacket.decode(text)
        #expect(decoded.kind == .binaryEvent)
        #expect(decoded.attachmentCount == 2)
        let whole = try decoded.reassembled(with: attachments)
        #expect(whole.kind == .event)
        #expect(whole.eventName == "up")
        #expect(attachments == [[1, 2], [3]])
        #expect(whole.arguments == [.binary([1, 2]), ["nested": .binary([3])]])
    }

    @Test func decodesEveryField() throws {
        let packet = try SocketIOPacket.decode(#"2/chat,42["msg",{"a":[1,2.5,null,true,"\u00e9\n"]}]"#)
        #expect(packet.kind == .event)
        #expect(packet.namespace == "/chat")
        #expect(packet.id == 42)
        #expect(packet.eventName == "msg")
        #expect(packet.arguments == [["a": [1, 2.5, nil, true, "é\n"]]])

        let ack = try SocketIOPacket.decode("337[]")
        #expect(ack.kind == .ack && ack.id == 37 && ack.arguments.isEmpty)
        let connected = try SocketIOPacket.decode(#"0{"sid":"x"}"#)
        #expect(connected.kind == .connect && connected.data?["sid"] == "x")
        let refused = try SocketIOPacket.decode(#"4/admin,{"message":"Not authorized"}"#)
        #expect(refused.kind == .connectError && refused.namespace == "/admin")
        #expect(try SocketIOPacket.decode("1/admin,").namespace == "/admin")
    }

    @Test func assemblerJoinsAttachmentsAndRejectsStrayOnes() throws {
        var assembler = SocketIOPacketAssembler()
        #expect(throws: SocketIOError.unexpectedAttachment) { try assembler.receive(binary: [1]) }
        #expect(try assembler.receive(text: #"61-3[{"_placeholder":true,"num":0}]"#) == nil)
        let packet = try assembler.receive(binary: [9, 9])
        #expect(packet?.kind == .ack)
        #expect(packet?.arguments == [.binary([9, 9])])
        #expect(packet?.id == 3)

        #expect(try assembler.receive(text: #"52-["a",{"_placeholder":true,"num":5}]"#) == nil)
        _ = try assembler.receive(binary: [1])
        #expect(throws: SocketIOError.malformedPacket) { try assembler.receive(binary: [2]) }
    }

    @Test func malformedPacketsAreTypedErrors() {
        let cases = [
            "", "7", "x", "2", "2[]", "2{}", "2[1", "3", "3{}", "1[]", "0[]", "4[1]", "5[\"a\"]", "5x-[\"a\"]",
            "5999999-[\"a\"]", "2/chat,[", "21234567890123456[\"a\"]", "2[\"a\"]x",
            "2" + String(repeating: "[", count: 300),
            "0\"\\ud800", "2[\"\\u12\"]",
        ]
        for text in cases {
            #expect(throws: SocketIOError.malformedPacket, "\(text.prefix(20))") { try SocketIOPacket.decode(text) }
        }
    }
}
