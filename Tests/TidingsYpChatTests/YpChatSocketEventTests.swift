import Testing
import TidingsCore
import TidingsYpChat

/// Decoding of every server event of the plan, leniently.
@Suite(.timeLimit(.minutes(1))) struct YpChatSocketEventTests {
    func event(_ name: String, _ json: String?) throws -> YpChatSocketEvent {
        YpChatSocketEvent(name: name, arguments: try json.map { [try JSONValue(parsing: $0)] } ?? [])
    }

    @Test func usersDecodeWithAndWithoutOptionalFields() throws {
        #expect(
            try event(
                "userList",
                #"[{"userName":"anna","gender":"w","age":"31","country":"DE"},{"userName":"bob"},{"age":3}]"#)
                == .userList([
                    YpChatUser(userName: "anna", gender: "w", age: 31, country: "DE"), YpChatUser(userName: "bob"),
                ]))
        #expect(
            try event("searchResults", #"{"users":[{"name":"cem","age":40}]}"#)
                == .searchResults([YpChatUser(userName: "cem", age: 40)]))
        #expect(try event("loginSuccess", #"{"userName":"anna"}"#) == .loginSuccess(YpChatUser(userName: "anna")))
        #expect(try event("loginSuccess", #""anna""#) == .loginSuccess(YpChatUser(userName: "anna")))
        #expect(try event("loginSuccess", "{}") == .malformed("loginSuccess"))
    }

    @Test func messagesTextAndImage() throws {
        #expect(
            try event(
                "message", #"{"fromUserName":"bob","toUserName":"anna","message":"hi","messageId":"m1","timestamp":5}"#)
                == .message(
                    YpChatMessage(messageId: "m1", fromUserName: "bob", toUserName: "anna", text: "hi", timestamp: "5"))
        )
        #expect(
            try event("message", #"{"from":"bob","isImage":true,"imageUrl":"/uploads/1","message":""}"#)
                == .message(YpChatMessage(fromUserName: "bob", text: "", isImage: true, imageUrl: "/uploads/1")))
        #expect(try event("message", #"{"message":"no sender"}"#) == .malformed("message"))
        #expect(try event("messageSent", #"{"messageId":42}"#) == .messageSent(messageId: "42"))
        #expect(try event("messageSent", nil) == .malformed("messageSent"))
    }

    @Test func conversationsAndLists() throws {
        #expect(
            try event("conversation", #"{"withUserName":"bob","messages":[{"from":"bob","message":"a"},{"bad":1}]}"#)
                == .conversation(withUserName: "bob", messages: [YpChatMessage(fromUserName: "bob", text: "a")]))
        #expect(try event("conversation", #"{"messages":[]}"#) == .malformed("conversation"))
        #expect(
            try event("inboxResults", #"[{"userName":"bob","lastMessage":"a","unreadCount":2},"cem"]"#)
                == .inboxResults([
                    YpChatConversationSummary(userName: "bob", lastMessage: "a", unreadCount: 2),
                    YpChatConversationSummary(userName: "cem"),
                ]))
        #expect(try event("historyResults", "[]") == .historyResults([]))
        // Not a list: malformed, so a bad payload never empties a list on screen.
        #expect(try event("historyResults", "{}") == .malformed("historyResults"))
        #expect(try event("userList", "5") == .malformed("userList"))
        #expect(try event("searchResults", #""x""#) == .malformed("searchResults"))
        #expect(try event("inboxResults", nil) == .malformed("inboxResults"))
        #expect(try event("unreadChats", "3") == .unreadChats(3))
        #expect(try event("unreadChats", #"{"count":1}"#) == .unreadChats(1))
        #expect(try event("unreadChats", #"{"count":"x"}"#) == .malformed("unreadChats"))
    }

    @Test func blocksCommandsErrorsAndUnknown() throws {
        #expect(try event("userBlocked", #"{"userName":"bob"}"#) == .userBlocked("bob"))
        #expect(try event("userUnblocked", #""bob""#) == .userUnblocked("bob"))
        #expect(try event("commandResult", #"{"result":"ok"}"#) == .commandResult("ok"))
        #expect(
            try event("commandTable", #"{"columns":["a","b"],"rows":[["x",1],[true]]}"#)
                == .commandTable(YpChatCommandTable(columns: ["a", "b"], rows: [["x", "1"], ["true", ""]])))
        #expect(try event("commandTable", #"{"rows":[]}"#) == .malformed("commandTable"))
        #expect(try event("error", #"{"message":"nope"}"#) == .error("nope"))
        #expect(try event("error", #""plain""#) == .error("plain"))
        #expect(try event("connected", #"{"socketId":"s1"}"#) == .connected(socketId: "s1"))
        #expect(try event("connected", nil) == .connected(socketId: nil))
        #expect(try event("somethingNew", #"{"x":1}"#) == .unknown("somethingNew"))
    }
}
