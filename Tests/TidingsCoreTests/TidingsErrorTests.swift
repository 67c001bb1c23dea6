import Testing
import TidingsCore

/// An error written the way every backend writes one: a hidden code, static members, context.
private struct SampleError: TidingsError {
    enum Code: String, Sendable { case refused, expired }
    let code: Code
    let token: String
    let attempt: Int

    var kind: TidingsErrorKind { TidingsErrorKind(code) }

    static let refused = SampleError(code: .refused, token: "", attempt: 0)
    static let expired = SampleError(code: .expired, token: "", attempt: 0)

    var description: String { "\(shortDescription) after \(attempt) attempts" }
}

@Suite(.timeLimit(.minutes(1))) struct TidingsErrorTests {
    @Test func equalityAndHashingCompareTheKindOnly() {
        // Every stored property would make a synthesized `==` compare context; the shared one must win.
        let first = SampleError(code: .refused, token: "a", attempt: 1)
        let second = SampleError(code: .refused, token: "b", attempt: 7)
        #expect(first == second)
        #expect(first == .refused)
        #expect(first != .expired)
        #expect(Set([first, second, .expired]).count == 2)

        #expect(CryptoError.invalidKeySize(24) == CryptoError.invalidKeySize(16))
        #expect(CryptoError.invalidKeySize(24) == .invalidKeySize)
        #expect(CryptoError.invalidKeySize(24) != .invalidNonceSize(24))
        #expect(StoreError.schemaTooNew(found: 9, known: 3) == .schemaTooNew)
        #expect(StoreError.schemaTooNew(found: 9, known: 3) != .busy)
    }

    @Test func catchMatchesAnyErrorByKind() {
        func fail() throws { throw CryptoError.invalidKey("not a PEM block") }
        var caught = false
        do {
            try fail()
        } catch CryptoError.invalidInput {
            Issue.record("matched another kind")
        } catch StoreError.misuse {
            Issue.record("matched another type")
        } catch CryptoError.invalidKey {
            caught = true
        } catch {
            Issue.record("not matched by kind: \(error)")
        }
        #expect(caught)
        do {
            try fail()
        } catch let error as CryptoError where error == .invalidKey {
            #expect(error.detail == "not a PEM block")
        } catch {
            Issue.record("not matched by comparison: \(error)")
        }

        #expect(CryptoError.invalidKey ~= CryptoError.invalidKey("x"))
        #expect(!(CryptoError.invalidKey ~= CryptoError.invalidInput("x")))
        #expect(!(SampleError.refused ~= CancellationError()))
        #expect(!(StoreError.busy ~= SampleError.refused))
    }

    @Test func aSwitchOverKindsNeedsADefaultSoANewKindBreaksNoCaller() {
        // Kinds are static members of a struct, not enum cases: a `switch` can only list the kinds it
        // handles and must have a `default`, where a kind added later lands. (Were they public enum cases,
        // this switch would have to be exhaustive and adding a case would stop it compiling.)
        func advice(_ error: any Error) -> String {
            switch error {
            case StoreError.busy: "retry later"
            case CryptoError.authenticationFailure, StoreError.tampered: "tampered"
            case SampleError.refused: "log in again"
            default: "report"
            }
        }
        #expect(advice(StoreError.busy) == "retry later")
        #expect(advice(CryptoError.authenticationFailure) == "tampered")
        #expect(advice(SampleError(code: .refused, token: "t", attempt: 2)) == "log in again")
        #expect(advice(SampleError.expired) == "report")
        #expect(advice(CancellationError()) == "report")
    }

    @Test func descriptionsNameTheKindAndKeepSecretsOut() {
        let error = SampleError(code: .expired, token: "s3cr3t-token", attempt: 3)
        #expect(error.shortDescription == "SampleError.expired")
        #expect(error.kind.name == "expired")
        #expect(error.description == "SampleError.expired after 3 attempts")
        #expect(!"\(error)".contains("s3cr3t"))

        #expect(CryptoError.invalidKeySize(24).description == "CryptoError.invalidKeySize(24 bytes)")
        #expect(CryptoError.authenticationFailure.description == "CryptoError.authenticationFailure")
        let store = StoreError.schemaTooNew(found: 9, known: 3)
        #expect(store.shortDescription == "StoreError.schemaTooNew")
        #expect(store.description.hasPrefix("StoreError.schemaTooNew: schema version 9"))
    }
}
