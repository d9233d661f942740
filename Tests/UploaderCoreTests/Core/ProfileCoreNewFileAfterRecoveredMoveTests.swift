import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderCore

/// A claim that finished a move into retry/ cut after the file's outbox name went, and found a
/// new file under that name: the new file is claimed in its turn, as if the watcher had seen it
/// again (it may have arrived before the process started, with no event to come).
@Suite("A new file under the name of a move recovery finished is claimed on its own")
struct ProfileCoreNewFileAfterRecoveredMoveTests {
    let a = RelativePath("a.bin")

    @Test func theNewFileIsClaimedOnceTheOldOnesMoveIsFinished() {
        var p = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600)
        let start = p.send(.recovered(files: [QueuedFile(a)], retries: [], ignoredDirectories: []))
        #expect(start.claims == [a])
        #expect(p.send(.claimed(a, .finishedByRecovery(retry: nil, anotherFileUnderName: true))).claims == [a])
    }

    @Test func aMoveFinishedAloneLeavesNothingToClaim() {
        var p = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600)
        p.send(.recovered(files: [QueuedFile(a)], retries: [], ignoredDirectories: []))
        #expect(p.send(.claimed(a, .finishedByRecovery(retry: nil))).claims.isEmpty)
    }

    /// The old file waits in retry/ under the same name: the new one is claimed once the old one's
    /// move back has ended (a claim beside that move could take the record it links into the outbox).
    @Test func withTheOldFileDueUnderTheSameNameTheNewOneWaitsForItsMoveBack() {
        var p = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600)
        p.send(.recovered(files: [QueuedFile(a)], retries: [], ignoredDirectories: []))
        let due = p.now.wall.addingTimeInterval(60)
        #expect(p.send(.claimed(a, .finishedByRecovery(retry: RetryEntry(path: a, due: due), anotherFileUnderName: true))).claims.isEmpty)
        #expect(p.advanceToNextDeadline().moveBacks == [a])
        let a2 = RelativePath("a.2.bin")
        #expect(Set(p.send(.movedBack(a, to: QueuedFile(a2))).claims) == [a, a2])
    }
}
