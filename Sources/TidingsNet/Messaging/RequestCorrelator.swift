/// Matches the responses of a message-based protocol to the requests waiting for them.
///
/// Guarantees:
/// - Every request gets an ID that no pending request holds (IDs increase, wrap at the end of the
///   range and skip held ones).
/// - Each request ends exactly once: with its response, a timeout on the injected clock,
///   ``MessagingError/connectionLost`` from ``failAll(_:)`` or a failed send, or
///   ``MessagingError/cancelled`` when its task is cancelled. Its entry and timer go with it, so a
///   response arriving later is not matched (``resolve(_:with:)`` returns false).
///
/// It knows no wire format: the caller builds and sends the message for an ID, and hands every
/// inbound response to ``resolve(_:with:)`` (or ``deliver(_:)`` for a ``CorrelatedResponse``).
///
/// For example:
/// ```swift
/// let requests = RequestCorrelator<Reply>(clock: ContinuousClock())
/// let outcome = await requests.request(timeout: .seconds(10)) { id in
///     try await socket.send(Request(id: id.description, type: "ping").encoded())
/// }
/// // on the read loop:
/// requests.resolve(RequestID(wire: reply.id)!, with: reply)
/// ```
public final class RequestCorrelator<Response: Sendable>: Sendable {
    private let waits: OneShotWaits<Result<Response, MessagingError>>

    /// Creates a correlator.
    ///
    /// - Parameters:
    ///   - clock: Runs every request timeout.
    ///   - ids: The IDs to issue, in order, wrapping at the end.
    public init(clock: any Clock<Duration>, ids: ClosedRange<UInt64> = 1...UInt64.max) {
        self.waits = OneShotWaits(clock: clock, keys: ids)
    }

    /// How many requests are waiting for a response.
    public var pendingCount: Int { waits.count }

    /// Sends one request and waits for its response, at most `timeout` on the clock.
    ///
    /// `send` runs on the caller's actor with the request's ID before the wait starts; a response
    /// that arrives while it is still running is kept. If `send` throws a ``MessagingError`` the
    /// request fails with it; any other error fails it with ``MessagingError/connectionLost``.
    public func request(
        timeout: Duration, isolation: isolated (any Actor)? = #isolation,
        send: (RequestID) async throws -> Void
    ) async -> Result<Response, MessagingError> {
        guard let key = waits.reserve() else {
            return .failure(MessagingError.tooManyPending.with(detail: "every request ID is pending"))
        }
        waits.expire(
            key, after: timeout, with: .failure(MessagingError.timeout.with(detail: "no answer in \(timeout)")))
        do {
            try await send(RequestID(key))
        } catch let error as MessagingError {
            waits.finish(key, with: .failure(error))
        } catch {
            waits.finish(key, with: .failure(MessagingError.connectionLost.with(detail: "send failed")))
        }
        return await waits.wait(key, cancelled: .failure(MessagingError.cancelled))
    }

    /// Hands a response to the request with `id`.
    ///
    /// - Returns: false when no request with that ID is waiting (it timed out, failed, was
    ///   cancelled, or was never issued): the response is to be ignored.
    @discardableResult
    public func resolve(_ id: RequestID, with response: Response) -> Bool {
        waits.finish(id.rawValue, with: .success(response))
    }

    /// Fails every pending request with `error`, e.g. ``MessagingError/connectionLost`` when the
    /// connection ends.
    public func failAll(_ error: MessagingError) {
        waits.finishAll(with: .failure(error))
    }
}

/// An inbound message that may answer a request: the request ID it echoes, or nil for a notification.
public protocol CorrelatedResponse: Sendable {
    /// The request ID as the message carries it (text or a number's decimal digits); nil when the
    /// message answers no request.
    var correlationID: String? { get }
}

/// What ``RequestCorrelator/deliver(_:)`` did with an inbound message.
public enum CorrelatedDelivery: Sendable, Equatable {
    /// It answered a waiting request.
    case resolved
    /// It carries an ID no request is waiting for (late, unknown or not ours): ignore it.
    case unmatched
    /// It carries no ID: a notification for the caller to apply.
    case notification
}

extension RequestCorrelator where Response: CorrelatedResponse {
    /// Hands an inbound message to the request it answers, if any.
    public func deliver(_ message: Response) -> CorrelatedDelivery {
        guard let text = message.correlationID else { return .notification }
        guard let id = RequestID(wire: text) else { return .unmatched }
        return resolve(id, with: message) ? .resolved : .unmatched
    }
}
