import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Reading systemd's environment: NOTIFY_SOCKET forms and the watchdog interval.
@Suite struct SystemdNotifierTests {
    @Test func noNotifySocketMeansDisabledAndSendingIsANoOp() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(!notifier.send("READY=1"))
        #expect(notifier.watchdogInterval == nil)
    }

    @Test func pathAndAbstractSocketsAreAcceptedAndRelativeOnesAreNot() {
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/run/systemd/notify"]).isEnabled)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "@abstract"]).isEnabled)
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative/sock"]).isEnabled)
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": "@"]).isEnabled)
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 200)]).isEnabled)
    }

    @Test func watchdogPingsAtHalfTheIntervalOnlyForThisPid() {
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000"]).watchdogInterval == 15)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"]).watchdogInterval == 15)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "0"]).watchdogInterval == nil)
    }

    @Test func statusLineStaysOnOneLine() {
        #expect(SystemdNotifier.statusLine("a\nb\tc") == "STATUS=a b c")
    }
}
