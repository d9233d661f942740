import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderDecisions

/// A profile's config as the settings the core decides with: made here, on the runner's side,
/// because `UploaderConfig` reads files and the core's target may not depend on it.
extension ProfilePolicy {
    package init(profile: Profile, mode: Mode, timeZone: TimeZone = .current) {
        self.init(mode: mode, concurrency: Self.slots(profile.concurrency), claimAhead: max(16, profile.concurrency),
                  maxAttempts: Self.attempts(profile.maxAttempts), backoff: profile.backoff, maxBackoff: profile.maxBackoff)
        order = PlantedBug.orderReversed.isActive ? Self.opposite(profile.order) : profile.order
        windows = PlantedBug.windowsDropped.isActive ? UploadWindows() : profile.uploadWindows
        self.timeZone = timeZone
        interfaces = Set(profile.interfaces)
        // Only a daemon keeps time for these; `run --once` prunes sent/ once before it starts.
        guard mode == .daemon else { return }
        if profile.keepSent > 0 || profile.keepSentBytes > 0 {
            retention = RetentionPacing(every: Retention.interval(keep: profile.keepSent, keepBytes: profile.keepSentBytes),
                                        afterDelivered: profile.keepSentBytes > 0 ? profile.keepSentBytes / 10 : nil)
        }
        if profile.rescan > 0 { rescanEvery = profile.rescan }
    }
}

/// The simulator's planted misreadings of the config (`PlantedBug`), each where such a slip would be
/// made; off, each is the config's own value.
extension ProfilePolicy {
    private static func slots(_ concurrency: Int) -> Int {
        switch PlantedBug.active {
        case .slotShort?: max(1, concurrency - 1)
        case .slotExtra?: concurrency + 1
        default: concurrency
        }
    }

    private static func attempts(_ maxAttempts: Int) -> Int {
        switch PlantedBug.active {
        case .maxAttemptsPlusTwo?: maxAttempts + 2
        case .maxAttemptsOne?: 1
        default: maxAttempts
        }
    }

    private static func opposite(_ order: UploadOrder) -> UploadOrder {
        switch order {
        case .oldest: .newest
        case .newest: .oldest
        case .smallest: .largest
        case .largest: .smallest
        }
    }
}
