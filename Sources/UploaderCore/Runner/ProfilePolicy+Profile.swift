import Foundation
import UploaderConfig
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
    }
}
