import Foundation
import TidingsCore
import TidingsMastodon

extension NotificationCandidate {
    /// A candidate from a v2 group as the engine stored it (the group with its sample accounts and status); nil
    /// for a kind the policy never raises or a group without its newest notification's ID.
    ///
    /// - Parameters:
    ///   - stored: the stored group.
    ///   - account: the account it belongs to (the raised set's key).
    ///   - origin: the path it came by.
    ///   - readerID: the signed-in account's own ID, which tells a reply from a mention.
    ///   - followed: the IDs of the accounts the reader follows.
    public init?(
        _ stored: MastodonGroupPayload, account: String, origin: NotificationOrigin, readerID: ServerID? = nil,
        followed: Set<ServerID> = []
    ) {
        let group = stored.group
        guard let newest = group.mostRecentNotificationID ?? group.pageMaxID else { return nil }
        let status = stored.status
        let isReply = readerID != nil && status?.inReplyToAccountID == readerID
        guard let category = NotificationCategory(type: group.type, isReplyToReader: isReply) else { return nil }
        let actor = group.sampleAccountIDs.first.flatMap { id in stored.accounts.first { $0.id == id } }
        self.init(
            account: account, serverID: newest, category: category, origin: origin, groupKey: group.groupKey,
            groupCount: group.notificationsCount,
            author: actor.map { NotificationAuthor($0, isFollowed: followed.contains($0.id)) },
            statusID: status?.id, statusHTML: status?.content ?? "", spoilerText: status?.spoilerText ?? "",
            visibility: status?.visibility, conversationID: status?.inReplyToID ?? status?.id)
        oldestMemberID = group.pageMinID
    }
}
