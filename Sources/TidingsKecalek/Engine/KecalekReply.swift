import TidingsNet

/// A response frame as the request layer correlates it: the response and the size of its frame.
struct KecalekReply: CorrelatedResponse {
    let response: KecalekResponse
    let frameSize: Int

    /// The `request_id` the response echoes.
    var correlationID: String? { response.requestID }
}

extension KecalekError {
    /// The Kecalek kind of a request-layer failure, for the request `operation`.
    init(_ failure: MessagingError, operation: String) {
        let code: Code
        switch failure {
        case MessagingError.timeout: code = .timeout
        case MessagingError.notConnected: code = .notConnected
        case MessagingError.closed: code = .closed
        case MessagingError.cancelled: code = .cancelled
        default: code = .connectionLost
        }
        self.init(code, operation: operation, detail: failure.detail)
    }
}
