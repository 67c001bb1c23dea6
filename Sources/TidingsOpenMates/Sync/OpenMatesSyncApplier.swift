import TidingsCore

/// Turns server events into store changes under the sync rules (``OpenMatesSyncRules``); pure, so every rule
/// is tested event by event with no store and no network.
///
/// Guarantees:
/// - Phase 1 stores the last chat's and the recent chats' metadata, suggestions and daily inspirations;
///   its `messages: null` keeps local content.
/// - Phase 1b stores content for at most ``phase1bParentCap`` parent chats (sub-chats do not count); more
///   are reported (``OpenMatesSyncSignal/overCap(_:)``) and stay metadata-only. A phase 1b that arrives before
///   this sync's phase 1 and phase 2 and would exceed the cap with chats the store does not know yet (parent or
///   sub-chat is unknown) is held until phase 1 or phase 2 says which they are (or the sync completes, when
///   the unknown ones count as parents), so sub-chats never take parents' places.
/// - Phase 2, phase 3's metadata and load-more pages store metadata only and never clear content.
/// - Phase 3 batches apply once per batch number per sync; duplicates are ignored.
/// - Thin cache-warming events change nothing and complete nothing.
/// - Deletions come from `chat_deleted`, `initial_sync_response.chat_ids_to_delete`, and a content answer
///   matched to its request that leaves a requested chat out (``chatsMissing(from:requested:)``); a chat
///   missing from a phase is never deleted. A sync whose phase 2 reports a `total_chat_count` below the stored
///   chats ends with ``OpenMatesSyncSignal/verifyChats(chatIDs:serverTotal:)`` naming the stored chats no
///   phase named, so the engine can ask for them and learn which are gone.
///
/// For example:
/// ```swift
/// var applier = OpenMatesSyncApplier()
/// let plan = applier.plan(event, view: try store.localView())
/// try store.apply(plan.changes)
/// ```
public struct OpenMatesSyncApplier: Sendable {
    /// The most parent chats phase 1b fills with content.
    public static let phase1bParentCap = 10

    private var seenBatches: Set<Int> = []
    /// Chats a real phase event of the current sync named: the ones it accounted for.
    private var namedThisSync: Set<String> = []
    /// Phase 2's `total_chat_count` in the current sync.
    private var totalThisSync: Int?
    /// Phase 1 or phase 2 of the current sync arrived: chats' parents are known from here on.
    private var metadataThisSync = false
    /// Phase 1b events held until the metadata tells parents from sub-chats, in arrival order.
    private var heldContentPhases: [OpenMatesContentPhase] = []

    /// A fresh applier.
    public init() {}

    /// Starts a new phased sync: phase 3 batch numbers may repeat from here on, and nothing is accounted for.
    public mutating func startSync() {
        seenBatches.removeAll()
        namedThisSync.removeAll()
        totalThisSync = nil
        metadataThisSync = false
        heldContentPhases.removeAll()
    }

    /// The chats of `requested` that `answer` shows the server no longer has: no versions entry and no messages
    /// (the key missing, or an empty list as the public server sends), not named by `partial_error`. Empty when the
    /// answer cannot be this request's (it names a chat not requested) or when its `partial_error` names no chats
    /// (which ones failed is then unknown: the public server answers a chat it failed to read like a deleted one).
    public static func chatsMissing(from answer: OpenMatesContentBatchResponse, requested: [String]) -> [String] {
        let named = Set(answer.chats.map(\.chatID)).union(answer.failedChatIDs)
        guard named.union(answer.chatsWithoutContent).isSubset(of: requested) else { return [] }
        if answer.partialError != nil, answer.failedChatIDs.isEmpty { return [] }
        var seen: Set<String> = []
        return requested.filter { !named.contains($0) && seen.insert($0).inserted }
    }

    /// The changes and signals of `event` against `view`.
    public mutating func plan(_ event: OpenMatesServerEvent, view: OpenMatesLocalView) -> OpenMatesSyncPlan {
        plan(event, view: view, requestedContent: nil)
    }

    /// The changes and signals of `event` against `view`; `requestedContent` is the content request a
    /// `chat_content_batch_response` answers, when the engine can match it (one request in flight, nothing
    /// unanswered before it on the connection): requested chats the answer leaves out are deleted.
    public mutating func plan(
        _ event: OpenMatesServerEvent, view: OpenMatesLocalView, requestedContent: [String]?
    ) -> OpenMatesSyncPlan {
        var builder = PlanBuilder(view: view)
        switch event {
        case .phase1(let phase):
            guard !phase.isThin else {
                return OpenMatesSyncPlan(signals: [.thinEvent(type: "phase_1_last_chat_ready")])
            }
            if let chatID = phase.chatID { namedThisSync.insert(chatID) }
            if let details = phase.chatDetails { namedThisSync.insert(details.chatID) }
            namedThisSync.formUnion(phase.recentChats.map(\.chatID))
            if let details = phase.chatDetails { builder.metadata(details) }
            for record in phase.recentChats { builder.metadata(record) }
            if let chatID = phase.chatID, let messages = phase.messages {
                builder.content(
                    OpenMatesChatContent(chatID: chatID, messages: messages, messagesV: phase.chatDetails?.messagesV))
            }
            if !phase.suggestions.isEmpty { builder.plan.changes.append(.putSuggestions(phase.suggestions)) }
            if !phase.dailyInspirations.isEmpty {
                builder.plan.changes.append(.putDailyInspirations(phase.dailyInspirations))
            }
            builder.plan.signals.append(.phaseArrived("phase1"))
            metadataThisSync = true
            releaseHeldContent(&builder)
        case .phase1b(let phase):
            namedThisSync.formUnion(phase.chats.map(\.chatID))
            if !metadataThisSync, Self.capDependsOnUnknownChats(phase, view: builder.view) {
                heldContentPhases.append(phase)
            } else {
                Self.applyContentPhase(phase, &builder)
            }
            builder.plan.signals.append(.phaseArrived("phase1b"))
        case .phase2(let phase):
            guard !phase.isThin else {
                return OpenMatesSyncPlan(signals: [.thinEvent(type: "phase_2_last_20_chats_ready")])
            }
            for record in phase.chats { builder.metadata(record) }
            namedThisSync.formUnion(phase.chats.map(\.chatID))
            if let total = phase.totalChatCount {
                totalThisSync = total
                builder.plan.signals.append(.totalChatCount(total))
            }
            builder.plan.signals.append(.phaseArrived("phase2"))
            metadataThisSync = true
            releaseHeldContent(&builder)
        case .phase3Ready(let phase):
            guard !phase.isThin else {
                return OpenMatesSyncPlan(signals: [.thinEvent(type: "phase_3_last_100_chats_ready")])
            }
            for record in phase.chats { builder.metadata(record) }
            builder.plan.signals.append(.phaseArrived("phase3"))
        case .loadMoreChats(let page), .syncMetadataChats(let page):
            for record in page.chats { builder.metadata(record) }
        case .backgroundMessageSync(let batch):
            if let number = batch.batchNumber, !seenBatches.insert(number).inserted {
                return OpenMatesSyncPlan(signals: [.duplicateBatch(number)])
            }
            for content in batch.chats { builder.content(content) }
            if !batch.side.isEmpty { builder.plan.changes.append(.putSide(batch.side)) }
            builder.plan.signals.append(.batchApplied(number: batch.batchNumber, isLast: batch.isLastBatch))
        case .phasedSyncComplete(let phase):
            // No metadata came to tell held chats apart: the unknown ones count as parents.
            releaseHeldContent(&builder)
            builder.plan.signals.append(.syncComplete(phase: phase))
            // Fewer chats on the server than stored: some stored chat is gone. Only those no phase named can be.
            if let total = totalThisSync, total < view.chats.count {
                let unaccounted = view.chats.keys.filter { !namedThisSync.contains($0) }.sorted()
                if !unaccounted.isEmpty {
                    builder.plan.signals.append(.verifyChats(chatIDs: unaccounted, serverTotal: total))
                }
            }
        case .cachePrimed(let status):
            if status == "full_sync_ready" { builder.plan.signals.append(.requestFreshSync) }
        case .syncStatus(let status):
            builder.plan.signals.append(.cacheStatus(isPrimed: status.isPrimed, chatCount: status.chatCount))
        case .chatContentBatch(let answer):
            for content in answer.chats { builder.content(content) }
            if !answer.side.isEmpty { builder.plan.changes.append(.putSide(answer.side)) }
            let failed = Set(answer.failedChatIDs)
            let delivered = answer.chats.map(\.chatID).filter { !failed.contains($0) }
            if !delivered.isEmpty { builder.plan.signals.append(.hydrated(delivered)) }
            if let message = answer.partialError {
                builder.plan.signals.append(.hydrationFailed(chatIDs: answer.failedChatIDs, message: message))
            }
            if let requested = requestedContent {
                let missing = Self.chatsMissing(from: answer, requested: requested)
                for chatID in missing { builder.delete(chatID) }
                if !missing.isEmpty { builder.plan.signals.append(.chatsDeleted(missing)) }
            }
        case .initialSyncResponse(let initial):
            for chatID in initial.chatIDsToDelete { builder.delete(chatID) }
            if !initial.chatIDsToDelete.isEmpty { builder.plan.signals.append(.chatsDeleted(initial.chatIDsToDelete)) }
            for record in initial.chats { builder.metadata(record) }
            for content in initial.content { builder.content(content) }
        case .initialSyncError(let message): builder.plan.signals.append(.initialSyncFailed(message))
        case .offlineSyncComplete(let processed, let conflicts, let errors):
            builder.plan.signals.append(.offlineSyncReply(processed: processed, conflicts: conflicts, errors: errors))
        case .newChatMessage(let chatID, let message, let messagesV, let lastEdited):
            builder.append(
                OpenMatesSyncRules.newMessage(
                    chatID: chatID, message: message, messagesV: messagesV, lastEdited: lastEdited, view: builder.view))
        case .chatUpdate(let record): builder.metadata(record)
        case .messageDeleted(let chatID, let messageID, let messagesV):
            guard builder.view.chats[chatID] != nil else { break }
            if let messagesV { builder.metadata(OpenMatesChatRecord(chatID: chatID, messagesV: messagesV)) }
            builder.append([.deleteMessage(chatID: chatID, messageID: messageID)])
        case .chatDeleted(let chatID):
            builder.delete(chatID)
            builder.plan.signals.append(.chatsDeleted([chatID]))
        case .chatPinnedUpdated(let chatID, let pinned):
            guard builder.view.chats[chatID] != nil else { break }
            // In `raw` too, so the details keep what the server said while a pending pin outranks it.
            builder.metadata(OpenMatesChatRecord(chatID: chatID, pinned: pinned, raw: ["pinned": .bool(pinned)]))
        case .chatReadStatusUpdated(let chatID, let unread):
            guard builder.view.chats[chatID] != nil else { break }
            builder.metadata(OpenMatesChatRecord(chatID: chatID, unreadCount: unread))
        case .chatDraftUpdated(let chatID, let draft, let draftV):
            guard builder.view.chats[chatID] != nil, let draftV else { break }
            builder.metadata(
                OpenMatesChatRecord(
                    chatID: chatID, draftV: draftV, encryptedDraft: draft,
                    raw: draft == nil ? ["encrypted_draft_md": .null] : [:]))
        case .forceLogout(let reason): builder.plan.signals.append(.loggedOut(reason: reason))
        case .error(let message): builder.plan.signals.append(.serverError(message))
        case .ping, .pong, .malformed, .unknown, .actionReply: break
        }
        return builder.plan
    }

    /// Applies the held phase 1b events with what the view knows now.
    private mutating func releaseHeldContent(_ builder: inout PlanBuilder) {
        let held = heldContentPhases
        heldContentPhases.removeAll()
        for phase in held { Self.applyContentPhase(phase, &builder) }
    }

    /// Whether counting the chats the view does not know as parents would push `phase` over the cap: only then
    /// does knowing which are sub-chats change what is stored.
    private static func capDependsOnUnknownChats(_ phase: OpenMatesContentPhase, view: OpenMatesLocalView) -> Bool {
        let counted = phase.chats.filter { $0.messages != nil && !(view.chats[$0.chatID]?.isSub ?? false) }
        return counted.count > phase1bParentCap && counted.contains { view.chats[$0.chatID] == nil }
    }

    /// Stores phase 1b's content for at most ``phase1bParentCap`` parents (sub-chats do not count) and its side
    /// data; the parents over the cap are reported and stay metadata-only.
    private static func applyContentPhase(_ phase: OpenMatesContentPhase, _ builder: inout PlanBuilder) {
        var parents = 0
        var over: [String] = []
        for content in phase.chats {
            let isSub = builder.view.chats[content.chatID]?.isSub ?? false
            if !isSub, content.messages != nil {
                guard parents < phase1bParentCap else {
                    over.append(content.chatID)
                    continue
                }
                parents += 1
            }
            builder.content(content)
        }
        if !phase.side.isEmpty { builder.plan.changes.append(.putSide(phase.side)) }
        if !over.isEmpty { builder.plan.signals.append(.overCap(over)) }
    }
}

/// Accumulates a plan while keeping its own view current, so later records in one event see earlier ones.
private struct PlanBuilder {
    var view: OpenMatesLocalView
    var plan = OpenMatesSyncPlan()

    mutating func append(_ changes: [OpenMatesStoreChange]) {
        plan.changes += changes
        view.apply(changes)
    }

    mutating func metadata(_ record: OpenMatesChatRecord) {
        if let chat = OpenMatesSyncRules.merge(record, into: view.chats[record.chatID], view: view) {
            append([.upsertChat(chat)])
        }
    }

    mutating func content(_ content: OpenMatesChatContent) {
        append(OpenMatesSyncRules.content(content, view: view))
    }

    mutating func delete(_ chatID: String) {
        append([.deleteChat(chatID: chatID)])
    }
}
