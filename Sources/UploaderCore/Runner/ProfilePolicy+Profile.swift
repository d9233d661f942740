import Foundation
import UploaderConfig
import UploaderSpool
import UploaderDecisions

/// A profile's config as the settings the core decides with: made here, on the runner's side,
/// because `UploaderConfig` reads files and the core's target may not depend on it.
extension ProfilePolicy {
    package init(profile: Profile, mode: Mode, timeZone: TimeZone = .current) {
        self.init(mode: mode, concurrency: profile.concurrency, claimAhead: max(16, profile.concurrency),
                  maxAttempts: profile.maxAttempts, backoff: profile.backoff, maxBackoff: profile.maxBackoff)
        order = profile.order
        windows = profile.uploadWindows
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
