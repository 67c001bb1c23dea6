import Foundation
import TidingsCore
import TidingsSandboxKit

/// The filters API: keyword filters per account, served as v2 (`GET /api/v2/filters`) or, on the v1-only
/// variants, as v1 (`GET /api/v1/filters`, one phrase per keyword); a change streams `filters_changed` to the
/// account, as Mastodon does. Nextcloud Social has no filters API (404 for both).
///
/// Timelines apply them as Mastodon 4 does: a status of the home or public timeline that one of the viewer's
/// filters of that context matches (a keyword in its content, case-insensitively) lists it in its `filtered`
/// (`FilterResult`: the filter, `keyword_matches`), whatever the action; the client shows `warn` matches
/// behind a warning and drops `hide` ones. (The variant's `hiddenKeyword` is another thing: rows the server
/// itself drops after paging, like mutes and blocks.)
extension MastodonSandboxServer {
    /// A keyword filter of one account.
    struct Filter {
        var id: String
        var accountID: String
        var title: String
        var keywords: [String]
        var context: [String]
        var action: String
    }

    /// Adds a keyword filter for `accountID` and tells its open streams `filters_changed`; returns its ID.
    @discardableResult
    public func addFilter(
        for accountID: String, title: String, keywords: [String], context: [String] = ["home"],
        action: String = "hide"
    ) -> String {
        let id = nextID()
        filters.append(
            Filter(id: id, accountID: accountID, title: title, keywords: keywords, context: context, action: action))
        stream("filters_changed", payload: { _ in "" }, to: [accountID])
        return id
    }

    /// Removes filter `id` and tells its account's open streams `filters_changed`; false when there is none.
    @discardableResult
    public func removeFilter(_ id: String) -> Bool {
        guard let index = filters.firstIndex(where: { $0.id == id }) else { return false }
        let accountID = filters.remove(at: index).accountID
        stream("filters_changed", payload: { _ in "" }, to: [accountID])
        return true
    }

    func filtersResponse(_ route: String, viewer: String) -> SandboxHTTPResponse {
        let mine = filters.filter { $0.accountID == viewer }
        let context = { (filter: Filter) in JSONValue.array(filter.context.map { .string($0) }) }
        if route == "/api/v2/filters" {
            guard variant.hasVersion2 else { return error(404, "Not found") }
            return .json(
                JSONValue.array(
                    mine.map { filter in
                        [
                            "id": .string(filter.id), "title": .string(filter.title), "context": context(filter),
                            "filter_action": .string(filter.action), "expires_at": .null,
                            "keywords": .array(
                                filter.keywords.enumerated().map { index, keyword in
                                    [
                                        "id": .string("\(filter.id)-\(index)"), "keyword": .string(keyword),
                                        "whole_word": false,
                                    ]
                                }),
                            "statuses": [],
                        ]
                    }))
        }
        guard !variant.nextcloudSocial else { return error(404, "Not found") }
        // v1 has one phrase per filter: each keyword is served as its own filter.
        return .json(
            JSONValue.array(
                mine.flatMap { filter in
                    filter.keywords.enumerated().map { index, keyword in
                        [
                            "id": .string(index == 0 ? filter.id : "\(filter.id)-\(index)"),
                            "phrase": .string(keyword), "context": context(filter), "whole_word": false,
                            "irreversible": .bool(filter.action == "hide"), "expires_at": .null,
                        ]
                    }
                }))
    }

    /// The `FilterResult`s of `status` for `viewer`'s filters of `context` whose keywords its content holds.
    func filterResults(_ status: Status, viewer: String, context: String) -> [JSONValue] {
        let content = status.content.lowercased()
        return filters.filter { $0.accountID == viewer && $0.context.contains(context) }.compactMap { filter in
            let matches = filter.keywords.filter { content.contains($0.lowercased()) }
            guard !matches.isEmpty else { return nil }
            let context = JSONValue.array(filter.context.map { .string($0) })
            return [
                "filter": [
                    "id": .string(filter.id), "title": .string(filter.title), "context": context,
                    "filter_action": .string(filter.action), "expires_at": .null,
                ],
                "keyword_matches": .array(matches.map { .string($0) }), "status_matches": .null,
            ]
        }
    }
}
