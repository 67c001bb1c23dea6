import Foundation
import TidingsCore
import TidingsYpChat

/// The server events the first byte chooses from (and one no client knows).
let eventNames = [
    "connected", "loginSuccess", "userList", "message", "messageSent", "conversation", "searchResults",
    "historyResults", "inboxResults", "unreadChats", "userBlocked", "userUnblocked", "commandResult",
    "commandTable", "error", "serverNotice",
]

/// A logged-in state with an open conversation, a pending message and a waiting console, so every
/// branch of the reducer has something to change.
let chatting: ChatState = {
    var state = ChatState()
    state = ChatState.reduce(state, .socket(.loginSuccess(YpChatUser(userName: "anna"))))
    state = ChatState.reduce(state, .action(.openConversation("bob")))
    state = ChatState.reduce(
        state, .action(.send(ChatOutgoingMessage(messageId: "m-1", toUserName: "bob", text: "hallo"))))
    return ChatState.reduce(state, .action(.command("/help", messageId: "c-1")))
}()

/// Feeds arbitrary bytes to everything that reads a YpChat payload from the server: a socket event
/// (the first byte picks its name, the rest is its JSON arguments) mapped and reduced into a chat
/// state, and every REST body's decoder. An unknown or malformed event must leave the state as it
/// was; nothing may trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let name = eventNames[Int(data[0]) % eventNames.count]
    let body = Data(bytes: data + 1, count: count - 1)
    if let json = try? JSONValue(parsing: body) {
        // The high bit reads a JSON array as the argument list (as Socket.IO delivers it).
        let arguments: [JSONValue] = if data[0] & 0x80 != 0, let items = json.arrayValue { items } else { [json] }
        let event = YpChatSocketEvent(name: name, arguments: arguments)
        let next = ChatState.reduce(chatting, .socket(event))
        switch event {
        case .unknown, .malformed:
            if next != chatting { fatalError("\(event) changed the state") }
        default: break
        }
        _ = ChatState.reduce(next, .tick)
    }
    let decoder = JSONDecoder()
    _ = try? decoder.decode(SessionDto.self, from: body)
    _ = try? decoder.decode([FeedbackDto].self, from: body)
    _ = try? decoder.decode(FeedbackAdminStatusDto.self, from: body)
    _ = try? decoder.decode([PartnerLinkDto].self, from: body)
    _ = try? decoder.decode(UploadImageResponse.self, from: body)
    _ = try? CountriesResponse(json: body)
    return 0
}
