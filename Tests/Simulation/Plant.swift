import UploaderSupport

/// A bug the simulator can plant (`simulate --plant NAME`), to show that the invariant it
/// targets catches it: each is a regression the code could really suffer, put into the simulated
/// world, into a thin wrapper around a seam the simulator injects (`PlantedFileSystem` around
/// the spool's file system, `SimTransport`), or — where the bug
/// would live in production code — switched on there (`PlantedBug`, `inProduction`).
package enum Plant: String, CaseIterable, Sendable {
    /// libcurl's silent re-send on a dead kept-alive connection (after a lost answer, or before a
    /// good one): a second request the daemon never recorded (`attemptsMatchRequests`, whose check of unrecorded requests counts those
    /// made since the last power cut, as a cut may undo a recorded attempt).
    case silentResend = "silent-resend"
    /// A refused connect reported as a reset mid-body, with the byte count of an earlier transfer
    /// left on the handle: an attempt counted that never reached the server (`attemptsMatchRequests`).
    case connectFailureAsReset = "connect-failure-as-reset"
    /// A move into retry/ turned into a delete: as production's plan interpreter unlinks the
    /// file's outbox name, its new name in retry/ goes with it (`noFileLost`).
    case moveDeletes = "move-deletes"
    /// A move's last step skipped: production's plan interpreter reports the unlink of the file's
    /// outbox name done and does nothing, so the file stays in the outbox as well (`noFileInTwoPlaces`).
    case outboxNameKept = "outbox-name-kept"
    /// A move that forgets the manifest: production's plan interpreter reports its link into sent/
    /// or retry/ made and makes nothing, then its outbox name is unlinked (`filesAndManifestsPaired`).
    case manifestDroppedInMove = "manifest-dropped-in-move"
    /// A short write taken for the whole: production's write loop (`FileLayer.writeAll`) returns
    /// after the first write(2) whatever it took, so a manifest written while the disk takes part
    /// of a write is renamed into place cut short (`manifestsParse`).
    case shortManifestWrite = "short-manifest-write"
    /// A lost fsync in production's file layer: `FileLayer.createFile` skips the file's fsync, so a
    /// manifest's temporary is renamed into place before its content is durable, and a power cut
    /// can leave the record empty (`manifestsParse`).
    case manifestFsyncSkipped = "manifest-fsync-skipped"
    /// A group-commit bookkeeping error in production's `DirectorySyncer`: an fsync that ends counts
    /// every request made so far as covered, those made while it ran too, so a caller whose change
    /// came after the fsync began is told it is durable when it is not (`syncMeansDurable`).
    case groupCommitOvercounts = "group-commit-overcounts"
    /// A cancelled upload whose connection is not closed: the job returns, but its request stays
    /// under way at the server, and the file's next upload runs beside it (`neverTwoUploadsAtOnce`).
    /// Jobs themselves run one at a time here, so this invariant sees only a request that outlives
    /// its job; two uploads of one file in two concurrent jobs wait for a concurrent simulator.
    case cancelLeavesRequest = "cancel-leaves-request"
    /// A 5xx taken for success by production's `Disposition.decide`: a file the server answered
    /// 503 without keeping the body is filed as sent (`sentOnlyWithExactBytes`).
    case successFor5xx = "5xx-as-success"
    /// File times read in local time, whose offset changes between two runs of the daemon (a
    /// daylight-saving change): each boot sees every mtime an hour later, takes its files for
    /// changed, and claims them afresh under new keys (`duplicatesShareKey`).
    case mtimeShiftsPerBoot = "mtime-shifts-per-boot"
    /// An off-by-one in production's reading of the config (`ProfilePolicy(profile:mode:)`): the
    /// core gets one transfer slot fewer than `concurrency` (`onlineMeansWorking`).
    case oneSlotShort = "one-slot-short"
    /// An off-by-one in production's readdir loop (`FileLayer.forEachEntry`): a listing's last
    /// entry is dropped, so a file only a scan finds (after a restart, an inotify overflow, a
    /// retry due) is never taken (`everyFileSettles`).
    case listingDropsLast = "listing-drops-last"
    /// The sweep of temporaries skipped: production's `Recovery` reports each `.upl-tmp-` name
    /// removed and leaves it, so what a crash or a failed write left stays (`noLeftoverTemporaries`).
    case temporariesKept = "temporaries-kept"
    /// A requeued file's record not rewritten (it stays in the outbox anyway): production's settle
    /// skips the write of its `queued` record, so the record keeps the attempt open while the
    /// file, claimed again, waits for a slot (`slotBeforeAttempt`).
    case requeueRecordSkipped = "requeue-record-skipped"
    /// An off-by-one in production's reading of the config: the core gets `max_attempts` + 2
    /// (`maxAttemptsRespected`).
    case maxAttemptsPlusTwo = "max-attempts-plus-two"
    /// An off-by-one in production's reading of the config: the core gets one transfer slot more
    /// than `concurrency` (`recordsWithinSlots`).
    case oneSlotExtra = "one-slot-extra"
    /// Production's response parser (`ResponseHead`) drops the `Retry-After` header of a 429 or
    /// 503, so the file comes back after its own short backoff instead (`noAttemptBeforeDue`).
    case retryAfterIgnored = "retry-after-ignored"
    /// The configured `max_attempts` misread as 1 by production's reading of the config: a file
    /// fails on its first retryable answer
    /// (`everyFileSettles`, which accepts `failed` only for a permanent error or attempts spent).
    case maxAttemptsOne = "max-attempts-one"
    /// An upload deaf to its cancel while its body is on the wire: at the end of the grace the
    /// core cancels it, and the stop waits until the body is through all the same (`shutdownWithinGrace`).
    case stopOutlastsGrace = "stop-outlasts-grace"
    /// The fsyncs of a move into `.quarantine/` skipped by production's `Spool.quarantineManifest`
    /// (the directory's entry in the spool's root, the record's in it): a power cut can lose a
    /// record moved aside (`quarantineKeepsRecords`).
    case quarantineUnsynced = "quarantine-unsynced"
    /// A ListParts answer misread as empty by production's resume (`S3MultipartUpload`): a resumed
    /// S3 multipart upload sends every part again, those the store acknowledged too (`s3PartsSentOnce`).
    case listPartsReadEmpty = "list-parts-read-empty"
    /// A HEAD's `Upload-Offset` misread as 0 by production's resume (`TusUpload`): a resumed tus
    /// upload sends from the start, below what the server reported (`tusOffsetForward`).
    case headOffsetReadZero = "head-offset-read-zero"
    /// An SFTP temporary name never cleared by production's `RemoteFilePublish`: no delete before
    /// a version takes it, and the upload opens it to append, writing after what it holds.
    /// Another version's bytes cut short there stay in front of the new version's rest, the size
    /// matches, and mixed bytes are renamed onto the final name (`sftpFinalNameWhole`).
    case sftpTemporaryKept = "sftp-temporary-kept"
    /// Production's hook queue (`HookRunner`) of one: a run handed over while another waits is
    /// dropped, so its hook never runs (until a restart, which the end of a schedule does not
    /// bring) (`hooksRunAtLeastOnce`).
    case hookJobsLost = "hook-jobs-lost"
    /// Production's hook ledger trusted without its manifests: a marker is never removed, and a
    /// run's end is not read back (`HookLedger.isDue`), so each start runs every hook again
    /// (`hooksNeverAfterFinished`).
    case hookRerunAfterFinish = "hook-rerun-after-finish"
    /// Production's reading of the config drops `upload_window`: uploads start while every window
    /// is closed (`uploadsWithinWindows`).
    case windowIgnored = "window-ignored"
    /// Production's `Retention` enforcing a tenth of `keep_sent`: delivered files leave sent/ too
    /// young (`sentRemovedOnlyAsAllowed`).
    case keepSentTenth = "keep-sent-tenth"
    /// `order` misread as its opposite by production's reading of the config (oldest as newest,
    /// smallest as largest): claimed files take their slots last first (`orderWithinSlots`).
    case orderReversed = "order-reversed"
    /// The owner's timer (production's `DeadlineTimer`) lets its first deadline pass without a
    /// tick: a retry, a probe, a window's edge or a stop's grace waits for some other event (`deadlinesKept`).
    case timerMissesFirstDeadline = "timer-misses-first-deadline"
    /// Production's rescan of a running daemon (an inotify overflow, `rescan`) forgets the files
    /// it found: one only a rescan finds is never taken (`everyFileSettles`).
    case rescanForgetsFound = "rescan-forgets-found"
    /// Production's spool lock takes a lock another process holds as if it were free: a second
    /// daemon or `run --once` goes on beside the first (`oneProcessPerSpool`).
    case spoolLockIgnored = "spool-lock-ignored"

    /// The invariant that must catch this plant.
    var target: Invariant {
        switch self {
        case .silentResend, .connectFailureAsReset: return .attemptsMatchRequests
        case .moveDeletes: return .noFileLost
        case .outboxNameKept: return .noFileInTwoPlaces
        case .manifestDroppedInMove: return .filesAndManifestsPaired
        case .shortManifestWrite, .manifestFsyncSkipped: return .manifestsParse
        case .groupCommitOvercounts: return .syncMeansDurable
        case .cancelLeavesRequest: return .neverTwoUploadsAtOnce
        case .successFor5xx: return .sentOnlyWithExactBytes
        case .mtimeShiftsPerBoot: return .duplicatesShareKey
        case .oneSlotShort: return .onlineMeansWorking
        case .listingDropsLast, .maxAttemptsOne, .rescanForgetsFound: return .everyFileSettles
        case .temporariesKept: return .noLeftoverTemporaries
        case .requeueRecordSkipped: return .slotBeforeAttempt
        case .maxAttemptsPlusTwo: return .maxAttemptsRespected
        case .oneSlotExtra: return .recordsWithinSlots
        case .retryAfterIgnored: return .noAttemptBeforeDue
        case .stopOutlastsGrace: return .shutdownWithinGrace
        case .quarantineUnsynced: return .quarantineKeepsRecords
        case .listPartsReadEmpty: return .s3PartsSentOnce
        case .headOffsetReadZero: return .tusOffsetForward
        case .sftpTemporaryKept: return .sftpFinalNameWhole
        case .hookJobsLost: return .hooksRunAtLeastOnce
        case .hookRerunAfterFinish: return .hooksNeverAfterFinished
        case .windowIgnored: return .uploadsWithinWindows
        case .keepSentTenth: return .sentRemovedOnlyAsAllowed
        case .orderReversed: return .orderWithinSlots
        case .timerMissesFirstDeadline: return .deadlinesKept
        case .spoolLockIgnored: return .oneProcessPerSpool
        }
    }

    /// The name of the invariant that must catch this plant, as reports print it.
    package var invariantName: String { target.rawValue }

    /// The bug switched on in production code for this plant, when it lives there.
    var inProduction: PlantedBug? {
        switch self {
        case .retryAfterIgnored: return .retryAfterDropped
        case .timerMissesFirstDeadline: return .timerMissesFirstDeadline
        case .rescanForgetsFound: return .rescanForgetsFound
        case .hookJobsLost: return .hookQueueOfOne
        case .shortManifestWrite: return .shortWriteTakenWhole
        case .manifestFsyncSkipped: return .fileSyncSkipped
        case .groupCommitOvercounts: return .groupCommitOvercounts
        case .listingDropsLast: return .listingDropsLast
        case .keepSentTenth: return .keepSentTenth
        case .quarantineUnsynced: return .quarantineUnsynced
        case .outboxNameKept: return .outboxNameKept
        case .manifestDroppedInMove: return .manifestDroppedInMove
        case .moveDeletes: return .moveDeletes
        case .oneSlotShort: return .slotShort
        case .oneSlotExtra: return .slotExtra
        case .maxAttemptsPlusTwo: return .maxAttemptsPlusTwo
        case .maxAttemptsOne: return .maxAttemptsOne
        case .windowIgnored: return .windowsDropped
        case .orderReversed: return .orderReversed
        case .successFor5xx: return .serverErrorTakenForSent
        case .listPartsReadEmpty: return .listPartsReadEmpty
        case .headOffsetReadZero: return .headOffsetReadZero
        case .temporariesKept: return .temporariesKept
        case .requeueRecordSkipped: return .requeueRecordSkipped
        case .spoolLockIgnored: return .spoolLockIgnored
        case .hookRerunAfterFinish: return .hookEndsUnread
        case .sftpTemporaryKept: return .remoteTemporaryKept
        default: return nil
        }
    }

    /// Whether the plant lives in the spool's file system (`PlantedFileSystem` wraps it).
    var wrapsFileSystem: Bool {
        switch self {
        case .mtimeShiftsPerBoot:
            return true
        case .temporariesKept, .requeueRecordSkipped, .moveDeletes, .outboxNameKept, .manifestDroppedInMove, .listingDropsLast, .quarantineUnsynced,
             .silentResend, .connectFailureAsReset, .cancelLeavesRequest, .successFor5xx, .oneSlotShort, .maxAttemptsPlusTwo, .oneSlotExtra,
             .retryAfterIgnored, .maxAttemptsOne, .stopOutlastsGrace, .listPartsReadEmpty, .headOffsetReadZero, .sftpTemporaryKept, .hookJobsLost,
             .windowIgnored, .keepSentTenth, .orderReversed, .timerMissesFirstDeadline, .rescanForgetsFound,
             .shortManifestWrite, .manifestFsyncSkipped, .groupCommitOvercounts, .spoolLockIgnored, .hookRerunAfterFinish:
            return false
        }
    }

    /// The plant named `name`, or the one-line error that lists the names.
    package static func parse(_ name: String) -> Result<Plant, PlantNameError> {
        Plant(rawValue: name).map { .success($0) } ?? .failure(PlantNameError(name: name))
    }
}

/// An unknown `--plant` name.
package struct PlantNameError: Error, CustomStringConvertible {
    package var name: String
    package var description: String {
        "unknown plant '\(name)'; plants: \(Plant.allCases.map(\.rawValue).joined(separator: ", "))"
    }
}

extension PlantedBug {
    /// `body` run with no bug switched on for this thread (the switch put back after): what the
    /// code makes of the world without the plant, for the checks to judge by.
    static func withNone<T>(_ body: () -> T) -> T {
        let on = active
        switchOn(nil)
        defer { switchOn(on) }
        return body()
    }
}
