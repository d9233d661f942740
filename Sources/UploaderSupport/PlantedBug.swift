
/// A bug the simulator can switch on inside production code (`simulate --plant NAME`), at the
/// very place where such a regression would live, so that the plant check shows production's own
/// code is under the invariant that must catch it — not a stand-in the simulator wraps around it.
///
/// Off unless the simulator turns one on; the daemon and the CLI never do. The switch is per
/// thread: a schedule's world switches it on for its own thread, and the simulator's scheduler
/// hands it to every thread the schedule starts, so schedules with and without a plant can run
/// side by side in one process (the plant check runs its plants in parallel). Each site costs
/// one read of a thread-specific word (`ThreadSlot`).
package enum PlantedBug: UInt8, CaseIterable, Sendable {
    /// `ResponseHead` drops the `Retry-After` header of a 429 or 503.
    case retryAfterDropped = 1
    /// The owner's `DeadlineTimer` lets its first deadline pass without a tick.
    case timerMissesFirstDeadline = 2
    /// A running daemon's rescan (`ProfileExecutor.rescan`) tells the owner of none of the files it found.
    case rescanForgetsFound = 3
    /// `HookRunner` queues one run beside the one running, and drops (as if queued) any handed over past it.
    case hookQueueOfOne = 4
    /// The file layer's write loop takes a short write for the whole (`FileLayer.writeAll`).
    case shortWriteTakenWhole = 5
    /// The file layer skips the fsync of a file it creates whole (`FileLayer.createFile`): a
    /// manifest is renamed into place with its content not yet durable.
    case fileSyncSkipped = 6
    /// `DirectorySyncer` counts as covered every request made before its fsync ended, not only
    /// those made before it began.
    case groupCommitOvercounts = 7
    /// The file layer's readdir loop (`FileLayer.forEachEntry`) never hands over the last entry.
    case listingDropsLast = 8
    /// Retention enforces a tenth of `keep_sent` (`Retention`).
    case keepSentTenth = 9
    /// A record moved aside (`Spool.quarantineManifest`) has its old name removed without the
    /// fsyncs of `.quarantine/` that make its new name durable first.
    case quarantineUnsynced = 10
    /// The spool's plan interpreter (`DiskStepPerformer`) reports the unlink of a file's outbox
    /// name done and does nothing: the move's last step is skipped.
    case outboxNameKept = 11
    /// The plan interpreter reports a record's link into sent/ or retry/ made and makes nothing.
    case manifestDroppedInMove = 12
    /// The plan interpreter's unlink of a file's outbox name removes its new name in retry/ too:
    /// a move into retry/ turned into a delete.
    case moveDeletes = 13
    /// The config read as settings for the core (`ProfilePolicy(profile:mode:)`) gives one
    /// transfer slot fewer than `concurrency` (at least one).
    case slotShort = 14
    /// That reading gives one transfer slot more than `concurrency`.
    case slotExtra = 15
    /// That reading gives `max_attempts` + 2.
    case maxAttemptsPlusTwo = 16
    /// That reading gives `max_attempts` = 1.
    case maxAttemptsOne = 17
    /// That reading drops `upload_window`: uploads at any hour.
    case windowsDropped = 18
    /// That reading takes `order` for its opposite (oldest for newest, smallest for largest).
    case orderReversed = 19
    /// `Disposition.decide` takes a 5xx for a delivery.
    case serverErrorTakenForSent = 20
    /// A resumed S3 multipart upload reads the ListParts answer as listing no part (`S3MultipartUpload.resume`).
    case listPartsReadEmpty = 21
    /// A resumed tus upload reads the HEAD's `Upload-Offset` as 0 (`TusUpload.resume`).
    case headOffsetReadZero = 22
    /// The sweep of temporaries (`Recovery`) reports each removed and leaves it.
    case temporariesKept = 23
    /// A settle that puts a file back in the queue (`ProfileExecutor`) leaves its record as it
    /// was, its attempt still open, instead of rewriting it as `queued`.
    case requeueRecordSkipped = 24
    /// `SpoolLock` takes a lock another process holds as if it were free: a second daemon (or
    /// `run --once`) goes on beside the first.
    case spoolLockIgnored = 25
    /// `HookLedger` reads a hook whose run has ended as still due (`isDue`), and leaves its marker
    /// when the run ends: each start runs every hook again.
    case hookEndsUnread = 26
    /// `RemoteFilePublish` never clears an SFTP or FTP temporary name before a version takes it,
    /// and opens it to append: another version's bytes cut short there stay in front.
    case remoteTemporaryKept = 27

    /// The bug switched on for the calling thread, or nil.
    package static var active: PlantedBug? {
        PlantedBug(rawValue: UInt8(truncatingIfNeeded: UInt(bitPattern: slot.value)))
    }

    /// Whether this bug is switched on for the calling thread.
    @inline(__always)
    package var isActive: Bool { Self.active == self }

    /// Switches `bug` on (nil: none) for the calling thread and the threads it hands it to.
    package static func switchOn(_ bug: PlantedBug?) {
        slot.value = UnsafeMutableRawPointer(bitPattern: UInt(bug?.rawValue ?? 0))
    }

    /// The thread's own word that holds the switch.
    private static let slot = ThreadSlot("the planted-bug switch")
}
