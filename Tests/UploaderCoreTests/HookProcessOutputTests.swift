import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderCore

/// A hook's output and its exit are seen by one thread: the output is kept, the exit ends the
/// wait whether the pipe closed before it or is still held open by a process the hook left behind.
@Suite struct HookProcessOutputTests {
    private func hook(_ script: String, timeout: TimeInterval = 20) -> (HookProcess, HookOutput) {
        let output = HookOutput()
        var process = HookProcess(command: "/bin/sh", arguments: [Array("-c".utf8), Array(script.utf8)], environment: [],
                                  workingDirectory: "/", timeout: timeout)
        process.output = output
        return (process, output)
    }

    @Test func theOutputIsKeptAndTheExitStatusSeen() {
        let (process, output) = hook("echo out; echo err >&2; exit 3")
        #expect(process.run(clock: SystemClock()) == .exited(3))
        #expect(output.text == "out\nerr")
    }

    @Test func aHookThatClosesItsOutputAndGoesOnIsWaitedForToItsExit() {
        let (process, output) = hook("echo before; exec >&- 2>&-; sleep 0.3; exit 4")
        #expect(process.run(clock: SystemClock()) == .exited(4))
        #expect(output.text == "before")
    }

    @Test func aProcessLeftHoldingThePipeDoesNotHoldTheHooksEndUp() {
        let clock = SystemClock()
        let started = clock.monotonic
        let (process, output) = hook("echo mine; sleep 30 & exit 0")
        #expect(process.run(clock: clock) == .exited(0))
        #expect(clock.monotonic - started < 10, "the run ended about a second after the hook's exit, not with the sleep")
        #expect(output.text == "mine")
    }

    @Test func aHookPastItsTimeoutIsKilled() {
        let clock = SystemClock()
        let started = clock.monotonic
        let (process, _) = hook("echo going; sleep 30", timeout: 0.5)
        #expect(process.run(clock: clock) == .timedOut)
        #expect(clock.monotonic - started < 10)
    }
}
