extension OpenMatesClient {
    /// Registers work to run at the start of ``logout()`` (and so of `force_logout`), before the store is
    /// erased: ``OpenMatesPrefetcher/attach(to:)`` cancels prefetch there, so no page fetched for the old
    /// session can be stored after the erase.
    func addLogoutObserver(_ observer: @escaping @Sendable () async -> Void) {
        logoutObservers.append(observer)
    }
}
