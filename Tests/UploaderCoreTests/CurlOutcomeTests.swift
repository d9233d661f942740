import CCurl
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

@Suite("libcurl results map to transfer failures by code")
struct CurlOutcomeTests {
    @Test func resolveAndConnectFailuresAreUnreachable() {
        for code in [CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_PROXY] {
            #expect(CurlOutcome(code: code, connected: false, detail: "nope").failure == .unreachable("nope"))
        }
    }

    @Test func timeoutBeforeConnectingIsUnreachableAndAfterIsBroken() {
        #expect(CurlOutcome(code: CURLE_OPERATION_TIMEDOUT, connected: false, detail: "t").failure == .unreachable("t"))
        #expect(CurlOutcome(code: CURLE_OPERATION_TIMEDOUT, connected: true, detail: "t", bytesSent: 9).failure
                == .broken("t", bytesSent: 9))
    }

    @Test func errorsAfterTheExchangeBeganAreBrokenWithTheBytesSent() {
        for code in [CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE] {
            #expect(CurlOutcome(code: code, connected: true, detail: "reset", bytesSent: 42).failure
                    == .broken("reset", bytesSent: 42))
        }
    }

    @Test func certificateProblemsAreTLSWithAHumanMessage() {
        let failure = CurlOutcome(code: CURLE_PEER_FAILED_VERIFICATION, connected: true, detail: "self-signed certificate").failure
        #expect(failure == .tls("TLS certificate verification failed: self-signed certificate"))
        guard case .tls = CurlOutcome(code: CURLE_SSL_CONNECT_ERROR, connected: true).failure else {
            Issue.record("SSL_CONNECT_ERROR is not .tls"); return
        }
    }

    @Test func ourReadFailureIsLocalReadWhateverTheCode() {
        let outcome = CurlOutcome(code: CURLE_ABORTED_BY_CALLBACK, connected: true,
                                  readError: "read a.txt: Input/output error (errno 5)")
        #expect(outcome.failure == .localRead("read a.txt: Input/output error (errno 5)"))
    }

    @Test func abortWhenCancelledIsCancelledAndAStallIsBroken() {
        #expect(CurlOutcome(code: CURLE_ABORTED_BY_CALLBACK, connected: true, cancelled: true, bytesSent: 7).failure
                == .cancelled(bytesSent: 7, connected: true))
        #expect(CurlOutcome(code: CURLE_ABORTED_BY_CALLBACK, connected: true, stalled: true, detail: "stalled", bytesSent: 7).failure
                == .broken("stalled", bytesSent: 7))
    }

    @Test func cancelledSaysWhetherTheRequestHadReachedTheDestination() {
        // Our progress callback aborts with ABORTED_BY_CALLBACK, our read callback with READ_ERROR.
        for code in [CURLE_ABORTED_BY_CALLBACK, CURLE_READ_ERROR] {
            #expect(CurlOutcome(code: code, connected: false, cancelled: true).failure == .cancelled(bytesSent: 0, connected: false))
            #expect(CurlOutcome(code: code, connected: true, cancelled: true).failure == .cancelled(bytesSent: 0, connected: true))
            #expect(CurlOutcome(code: code, connected: true, cancelled: true, bytesSent: 5).failure
                    == .cancelled(bytesSent: 5, connected: true))
        }
        // A failure of its own that happens to come after a cancellation keeps its kind.
        #expect(CurlOutcome(code: CURLE_COULDNT_CONNECT, connected: false, cancelled: true, detail: "refused").failure
                == .unreachable("refused"))
    }

    @Test func aRefusedResendIsBrokenWithTheFirstRequestsBytes() {
        // The seek callback refuses the rewind (non-empty body) or the pre-request callback the second request.
        for code in [CURLE_SEND_FAIL_REWIND, CURLE_ABORTED_BY_CALLBACK] {
            #expect(CurlOutcome(code: code, connected: true, resendRefused: true, detail: "closed", bytesSent: 11).failure
                    == .broken("closed", bytesSent: 11))
        }
        // A rewind failure we did not cause stays a permanent `other`.
        #expect(CurlOutcome(code: CURLE_SEND_FAIL_REWIND, connected: true, detail: "rewind").failure == .other("rewind"))
    }

    @Test func anythingElseIsOther() {
        #expect(CurlOutcome(code: CURLE_UNSUPPORTED_PROTOCOL, connected: false, detail: "gopher?").failure == .other("gopher?"))
        #expect(CurlOutcome(code: CURLE_URL_MALFORMAT, connected: false, detail: "bad").failure == .other("bad"))
    }
}
