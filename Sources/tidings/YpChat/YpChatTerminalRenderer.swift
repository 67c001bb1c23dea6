import TidingsYpChat

/// What the terminal client prints when the state changes: one function from the previous and the new
/// ``ChatState`` to lines, so every change is printed once and nothing is printed twice.
///
/// Prefixes: `* ` status, `! ` error, `[from] ` or `[from → to] ` chat messages, `console> ` and
/// `console! ` the console, `| ` table rows.
struct YpChatTerminalRenderer {
    let language: YpChatLanguage

    func text(_ key: YpChatStringKey, _ arguments: String...) -> String {
        YpChatStrings.text(key, language: language, arguments: arguments)
    }

    /// The countdown as `mm:ss`.
    static func clock(_ seconds: Int) -> String {
        let minutes = String(seconds / 60)
        let rest = String(seconds % 60)
        return (minutes.count < 2 ? "0" + minutes : minutes) + ":" + (rest.count < 2 ? "0" + rest : rest)
    }

    /// The prompt of an interactive terminal: who, with whom, and the countdown.
    func prompt(_ state: ChatState) -> String {
        guard let user = state.currentUser else { return "> " }
        let partner = state.openConversation.map { " → " + $0 } ?? ""
        return "[\(user.userName)\(partner) \(Self.clock(state.timeoutRemaining))] > "
    }

    /// The lines for the change from `old` (nil: the first state) to `new`; `countdown` adds a line at
    /// each fifth minute and in the last minute (for a terminal without a prompt).
    func lines(from old: ChatState?, to new: ChatState, countdown: Bool) -> [String] {
        let old = old ?? ChatState()
        var out: [String] = []
        if old.connection != new.connection {
            switch new.connection {
            case .connected: out.append("* " + text(.connectionConnected))
            case .connecting: out.append("* " + text(.connectionConnecting))
            case .disconnected: out.append("* " + text(.connectionDisconnected))
            }
        }
        if old.currentUser?.userName != new.currentUser?.userName {
            out.append("* " + (new.currentUser.map { text(.loggedInAs, $0.userName) } ?? text(.loggedOut)))
        }
        if old.onlineUsers != new.onlineUsers, new.isLoggedIn {
            out.append("* " + text(.tabOnline) + ": " + new.onlineUsers.map(\.userName).joined(separator: ", "))
        }
        if old.openConversation != new.openConversation, let partner = new.openConversation {
            out.append("* " + text(.chatWith, partner))
        }
        out += messages(old, new)
        if old.unreadChatsCount != new.unreadChatsCount {
            out.append("* " + text(.unreadChats, String(new.unreadChatsCount)))
        }
        if old.loading.search, !new.loading.search {
            out.append("* " + text(.tabSearch) + ": " + list(new.searchResults.map(\.userName), empty: .emptySearch))
        }
        if old.loading.inbox, !new.loading.inbox {
            out.append("* " + text(.tabInbox) + ": " + summaries(new.inbox, empty: .emptyInbox))
        }
        if old.loading.history, !new.loading.history {
            out.append("* " + text(.tabHistory) + ": " + summaries(new.history, empty: .emptyHistory))
        }
        for user in new.blockedUsers.subtracting(old.blockedUsers).sorted() {
            out.append("* " + text(.userBlocked, user))
        }
        for user in old.blockedUsers.subtracting(new.blockedUsers).sorted() {
            out.append("* " + text(.userUnblocked, user))
        }
        if new.consoleLines.count > old.consoleLines.count, new.consoleLines.starts(with: old.consoleLines) {
            for line in new.consoleLines.dropFirst(old.consoleLines.count) {
                switch line {
                case .input: break
                case .output(let text): out.append("console> " + text)
                case .error(let text): out.append("console! " + text)
                }
            }
        }
        if old.commandTable != new.commandTable, let table = new.commandTable { out += Self.table(table) }
        if old.feedbackMessage != new.feedbackMessage, let message = new.feedbackMessage {
            out.append("* " + message.text(in: language))
        }
        if old.upload != new.upload, case .uploading = new.upload { out.append("* " + text(.uploadInProgress)) }
        if old.errorMessage != new.errorMessage, let error = new.errorMessage {
            out.append("! " + error.text(in: language))
        }
        if countdown, new.isLoggedIn, old.timeoutRemaining != new.timeoutRemaining, new.timeoutRemaining < 1_800,
            new.timeoutRemaining % 300 == 0 || (new.timeoutRemaining <= 60 && new.timeoutRemaining % 10 == 0)
        {
            out.append("* " + countdownText(new.timeoutRemaining))
        }
        return out
    }

    /// The countdown line's text.
    func countdownText(_ seconds: Int) -> String {
        let clock = Self.clock(seconds).split(separator: ":").map(String.init)
        return text(.timeoutCountdown, clock[0], clock[1])
    }

    private func messages(_ old: ChatState, _ new: ChatState) -> [String] {
        var out: [String] = []
        let before = Dictionary(old.conversationMessages.map { ($0.id, $0.status) }, uniquingKeysWith: { a, _ in a })
        for item in new.conversationMessages {
            let message = item.message
            let body = message.isImage ? "<\(message.imageUrl ?? "")>" : message.text
            let from =
                item.status == .received
                ? "[\(message.fromUserName)] " : "[\(message.fromUserName) → \(message.toUserName ?? "")] "
            switch (before[item.id], item.status) {
            case (nil, _): out.append(from + body)
            case (let previous?, .failed) where previous != .failed:
                out.append("! " + text(.messageFailed) + " " + body)
            default: break
            }
        }
        return out
    }

    private func list(_ names: [String], empty: YpChatStringKey) -> String {
        names.isEmpty ? text(empty) : names.joined(separator: ", ")
    }

    private func summaries(_ lines: [YpChatConversationSummary], empty: YpChatStringKey) -> String {
        list(
            lines.map { line in
                line.userName + (line.unreadCount > 0 ? " (\(line.unreadCount))" : "")
                    + (line.lastMessage.map { ": " + $0 } ?? "")
            }, empty: empty)
    }

    /// A table with padded columns: `| a   | b |`.
    static func table(_ table: YpChatCommandTable) -> [String] {
        let rows = [table.columns] + table.rows
        let widths = table.columns.indices.map { column in
            rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        return rows.map { row in
            "| "
                + widths.indices.map { column in
                    let cell = column < row.count ? row[column] : ""
                    return cell + String(repeating: " ", count: widths[column] - cell.count)
                }.joined(separator: " | ") + " |"
        }
    }
}
