import Foundation
import Testing

@testable import tidings

/// `tidings demo --only openmates`: a phased sync, a cold start from disk, a hydration on open, an offline
/// session replayed and an offline prefetch pass, on a virtual clock.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesDemoTests {
    @Test func theOpenMatesPartShowsSyncColdStartHydrationAnOfflineSessionReplayedAndAPrefetch() async throws {
        let first = await Runner(root: tidingsRoot, environment: [:]).capture(["demo", "--only", "openmates"])
        #expect(first.status == 0, "\(first.standardError)")
        let output = first.standardOutput
        for line in [
            "store: 15 chats; 10 with their messages, 5 metadata-only (phase 1b fills at most 10 parents).",
            "Relaunch, before the network: 15 chats and the messages of the first 5 from disk (0 frames sent).",
            "Open chat-013 (metadata only): loading (0 messages shown, not final)",
            "chat_content_batch_response arrived: loaded, 3 messages.",
            "chat-005 first in the list: yes",
            "queued store_message on chat-000 (encrypted_chat_metadata)",
            "queued ask_ai on chat-000 (chat_message_added)",
            "queued hide on chat-002 (encrypted_chat_metadata)", "queued pin on chat-005 (update_chat)",
            "store_message on chat-000: acknowledged", "ask_ai on chat-000: acknowledged",
            "hide on chat-002: acknowledged", "pin on chat-005: failed, update_chat refused (3 tries); undone",
            "queue empty: yes; chat-005 pinned: no (the server's value); "
                + "server applied: store_message:chat-000:demo-offline-1, hide:chat-002; AI asked: chat-000:demo-offline-1",
            "cursor 10 → 13; stored chat-010, chat-011; already stored chat-009",
            "cursor 13 → 15; stored chat-012; already stored chat-013", "cursor 15 → done; empty page",
            "finished: 3 chunks, 3 chats and 9 messages stored, 2 s apart on the virtual clock; cursor reset; "
                + "metadata-only chats left: 1.",
        ] {
            #expect(output.contains(line), "\(line)")
        }
    }
}
