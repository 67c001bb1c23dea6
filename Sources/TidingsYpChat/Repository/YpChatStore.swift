import Foundation
import Observation

/// The `@MainActor`, Observation-based face of a ``YpChatRepository`` that SwiftUI views bind to:
/// `store.state` is observed like any `@Observable` property, and each action method forwards to
/// the repository.
///
/// Guarantees: ``state`` is only ever the repository's newest state (set on the main actor), so a
/// view never sees a state the reducer did not make; the action methods return the task running the
/// action, which a view may ignore and a test may await.
@MainActor @Observable
public final class YpChatStore {
    /// The newest state.
    public private(set) var state: ChatState
    /// The repository the actions go to.
    @ObservationIgnored public let repository: YpChatRepository
    @ObservationIgnored private var observer: Task<Void, Never>?

    /// A store over `repository`, starting from a fresh state until ``start()``.
    public init(repository: YpChatRepository) {
        self.repository = repository
        state = ChatState()
    }

    /// Follows the repository's states (call once, e.g. from the root view's `.task`).
    public func start() {
        guard observer == nil else { return }
        let repository = self.repository
        observer = Task { [weak self] in
            for await state in await repository.states() {
                guard let self else { return }
                self.state = state
            }
        }
    }

    /// Stops following the repository.
    public func stop() {
        observer?.cancel()
        observer = nil
    }

    /// Runs `action` on the repository.
    @discardableResult
    private func run(_ action: @escaping @Sendable (YpChatRepository) async -> Void) -> Task<Void, Never> {
        let repository = self.repository
        return Task { await action(repository) }
    }

    /// ``YpChatRepository/restoreSession()``.
    @discardableResult public func restoreSession() -> Task<Void, Never> { run { await $0.restoreSession() } }
    /// ``YpChatRepository/login(_:)``.
    @discardableResult public func login(_ profile: ChatProfile) -> Task<Void, Never> {
        run { await $0.login(profile) }
    }
    /// ``YpChatRepository/logout()``.
    @discardableResult public func logout() -> Task<Void, Never> { run { await $0.logout() } }
    /// ``YpChatRepository/openConversation(with:)``.
    @discardableResult public func openConversation(with userName: String) -> Task<Void, Never> {
        run { await $0.openConversation(with: userName) }
    }
    /// ``YpChatRepository/closeConversation()``.
    @discardableResult public func closeConversation() -> Task<Void, Never> { run { await $0.closeConversation() } }
    /// ``YpChatRepository/send(_:)``.
    @discardableResult public func send(_ text: String) -> Task<Void, Never> { run { await $0.send(text) } }
    /// ``YpChatRepository/sendImage(_:filename:contentType:)``.
    @discardableResult public func sendImage(_ data: Data, filename: String = "image.jpg") -> Task<Void, Never> {
        run { await $0.sendImage(data, filename: filename) }
    }
    /// ``YpChatRepository/search(_:)``.
    @discardableResult public func search(_ query: YpChatSearchQuery) -> Task<Void, Never> {
        run { await $0.search(query) }
    }
    /// ``YpChatRepository/requestInbox()``.
    @discardableResult public func requestInbox() -> Task<Void, Never> { run { await $0.requestInbox() } }
    /// ``YpChatRepository/requestHistory()``.
    @discardableResult public func requestHistory() -> Task<Void, Never> { run { await $0.requestHistory() } }
    /// ``YpChatRepository/block(_:)``.
    @discardableResult public func block(_ userName: String) -> Task<Void, Never> { run { await $0.block(userName) } }
    /// ``YpChatRepository/unblock(_:)``.
    @discardableResult public func unblock(_ userName: String) -> Task<Void, Never> {
        run { await $0.unblock(userName) }
    }
    /// ``YpChatRepository/loadFeedback()``.
    @discardableResult public func loadFeedback() -> Task<Void, Never> { run { await $0.loadFeedback() } }
    /// ``YpChatRepository/sendFeedback(_:)``.
    @discardableResult public func sendFeedback(_ feedback: FeedbackRequest) -> Task<Void, Never> {
        run { await $0.sendFeedback(feedback) }
    }
    /// ``YpChatRepository/adminLogin(password:)``; the password is handed on and not kept.
    @discardableResult public func adminLogin(password: String) -> Task<Void, Never> {
        run { await $0.adminLogin(password: password) }
    }
    /// ``YpChatRepository/adminLogout()``.
    @discardableResult public func adminLogout() -> Task<Void, Never> { run { await $0.adminLogout() } }
    /// ``YpChatRepository/deleteFeedback(id:)``.
    @discardableResult public func deleteFeedback(id: String) -> Task<Void, Never> {
        run { await $0.deleteFeedback(id: id) }
    }
    /// ``YpChatRepository/loadPartners()``.
    @discardableResult public func loadPartners() -> Task<Void, Never> { run { await $0.loadPartners() } }
    /// ``YpChatRepository/enterForeground()``.
    @discardableResult public func enterForeground() -> Task<Void, Never> { run { await $0.enterForeground() } }
    /// ``YpChatRepository/dismissError()``.
    @discardableResult public func dismissError() -> Task<Void, Never> { run { await $0.dismissError() } }
}
