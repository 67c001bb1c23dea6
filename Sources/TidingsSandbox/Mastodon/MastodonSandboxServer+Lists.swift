import Foundation
import TidingsCore

/// Hashtag and list timelines (`/api/v1/timelines/tag/:hashtag`, `/api/v1/timelines/list/:id`), paged like home
/// and public (`min_id`, `max_id`, `since_id`, `limit`, `Link`).
extension MastodonSandboxServer {
    /// A list of accounts its owner reads as a timeline of its own.
    struct List {
        var id: String
        var owner: String
        var title: String
        var members: Set<String>
    }

    /// Adds a list owned by `owner` with `members` and returns its ID; only its owner can read its timeline
    /// (anyone else gets 404, as on Mastodon).
    @discardableResult
    public func addList(owner: String, title: String, members: [String] = []) -> String {
        let id = nextID()
        lists.append(List(id: id, owner: owner, title: title, members: Set(members)))
        return id
    }

    /// Adds `member` to list `listID`; false when there is no such list.
    @discardableResult
    public func addToList(_ listID: String, member: String) -> Bool {
        guard let index = lists.firstIndex(where: { $0.id == listID }) else { return false }
        lists[index].members.insert(member)
        return true
    }

    /// Removes list `listID` (its timeline is then 404); false when there is no such list.
    @discardableResult
    public func removeList(_ listID: String) -> Bool {
        guard let index = lists.firstIndex(where: { $0.id == listID }) else { return false }
        lists.remove(at: index)
        return true
    }

    /// The public statuses (not boosts) that carry `#tag`, matched case-insensitively, newest first.
    func tagEntries(_ tag: String) -> [Status] {
        let wanted = tag.lowercased()
        return statuses.reversed().filter {
            !$0.deleted && $0.visibility == "public" && $0.reblogOf == nil
                && Self.hashtags(in: $0.content).contains(wanted)
        }
    }

    /// The statuses and boosts of the list's members that are not direct, newest first.
    func listEntries(_ list: List) -> [Status] {
        statuses.reversed().filter { !$0.deleted && list.members.contains($0.accountID) && $0.visibility != "direct" }
    }

    /// The hashtags of `content`, lower-cased: `#` followed by letters, digits and `_`.
    static func hashtags(in content: String) -> Set<String> {
        var tags: Set<String> = []
        var current: String?
        for character in content + " " {
            if character.isLetter || character.isNumber || character == "_" {
                current?.append(character)
            } else {
                if let tag = current, !tag.isEmpty { tags.insert(tag.lowercased()) }
                current = character == "#" ? "" : nil
            }
        }
        return tags
    }
}
