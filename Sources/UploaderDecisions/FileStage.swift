import Foundation
import UploaderValues

/// Where one file of the outbox stands for its profile's owner: every file the owner knows has
/// exactly one of these (`FileStages`), so a file can be neither in two steps at once nor in a step
/// nothing counts. A file with no stage is not the owner's business now (filed, refused, gone).
/// Two bytes: a backlog of 100,000 files has an entry each.
package enum FileStage: Sendable, Equatable {
    /// In line for a claim (`PathQueue`, by `order`). `quiet`: back in line only because the
    /// watcher saw its name again while it was held, so finding it gone is no news.
    case waiting(quiet: Bool)
    /// Its attempt could not be recorded (disk full), or its claim was refused for now (a step the
    /// disk refused): back in line at a time kept beside, in `FileStages.delayed` (a `Double` here
    /// would make every file's entry twice as large).
    case delayed
    /// A claim runs ahead of a transfer slot (`claimAhead`).
    case claiming(quiet: Bool)
    /// A transfer slot is taken and its one job claims the file first (`claimAndUpload`).
    /// `trial`: the one file tried while our credentials are rejected.
    case claimingInSlot(quiet: Bool, trial: Bool)
    /// Claimed, waiting for a transfer slot (in `order` among the claimed).
    case ready
    /// Holds a transfer slot: its attempt is recorded and the request under way.
    case sending(trial: Bool)
    /// Being filed away or put back after its upload (or its failed claim). `recordOpen`: its
    /// record may still say `uploading` (not yet rewritten). `awaitingCredentials`: the destination
    /// refused our credentials for it; once settled it waits apart.
    case settling(recordOpen: Bool, awaitingCredentials: Bool)
    /// Refused for our credentials: queued on disk, out of line until the doubt is settled.
    case awaitingCredentials

    /// The stage without its data: what `docs/architecture.md` tabulates and the invariants count.
    package enum Kind: String, Sendable, CaseIterable {
        case waiting, delayed, claiming, claimingInSlot, ready, sending, settling, awaitingCredentials
    }

    package var kind: Kind {
        switch self {
        case .waiting: .waiting
        case .delayed: .delayed
        case .claiming: .claiming
        case .claimingInSlot: .claimingInSlot
        case .ready: .ready
        case .sending: .sending
        case .settling: .settling
        case .awaitingCredentials: .awaitingCredentials
        }
    }

    /// Whether the file holds a transfer slot (and so a record that may say `uploading`).
    var holdsSlot: Bool {
        switch self {
        case .claimingInSlot, .sending: true
        default: false
        }
    }

    /// Whether the owner holds the file at some step: the watcher seeing its name again is noted,
    /// not queued (waiting and delayed files are not held: they wait).
    var isHeld: Bool {
        switch self {
        case .waiting, .delayed: false
        case .claiming, .claimingInSlot, .ready, .sending, .settling, .awaitingCredentials: true
        }
    }

    /// The one file tried while our credentials are rejected.
    var isTrial: Bool {
        switch self {
        case .claimingInSlot(_, let trial), .sending(let trial): trial
        default: false
        }
    }

    /// The stages a file may go to from `kind` (nil: none, the owner lets it go; from nil: a file
    /// the owner did not know). A change of data within one kind is always allowed. Debug builds
    /// check every change against this, and `ArchitectureDocTests` checks the table in
    /// `docs/architecture.md` against it.
    package static func successors(of kind: Kind?) -> Set<Kind?> {
        switch kind {
        case nil: [.waiting]
        case .waiting?: [.claiming, .claimingInSlot, nil]
        case .delayed?: [.waiting, nil]
        case .claiming?: [.ready, .settling, .waiting, .delayed, nil]
        case .claimingInSlot?: [.sending, .settling, .waiting, .delayed, nil]
        case .ready?: [.sending, .waiting, nil]
        case .sending?: [.settling, .delayed, .waiting, nil]
        case .settling?: [.waiting, .awaitingCredentials, nil]
        case .awaitingCredentials?: [.waiting, nil]
        }
    }
}

/// Where one file in retry/ stands: the owner knows each one it schedules, under its retry/ path
/// (a name the outbox may hold at the same time, so these are kept apart from `FileStage`).
package enum RetryStage: Sendable, Equatable {
    /// Waits in retry/ until `due` (wall clock).
    case heldForRetry(due: Date)
    /// Its move back to the outbox runs; `dueAgain`: scheduled again meanwhile (a rescan or a claim
    /// found it in retry/), so a move back is asked for again at that time, once this one has ended.
    case movingBack(dueAgain: Date?)

    package enum Kind: String, Sendable, CaseIterable {
        case heldForRetry, movingBack
    }

    package var kind: Kind {
        switch self {
        case .heldForRetry: .heldForRetry
        case .movingBack: .movingBack
        }
    }

    /// As `FileStage.successors(of:)`, for files in retry/.
    package static func successors(of kind: Kind?) -> Set<Kind?> {
        switch kind {
        case nil: [.heldForRetry, .movingBack]
        case .heldForRetry?: [.movingBack]
        case .movingBack?: [.heldForRetry, nil]
        }
    }
}
