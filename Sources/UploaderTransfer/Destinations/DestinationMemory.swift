import Foundation
import UploaderSupport

/// What a profile's destination protocols learn and keep for the process's life: a reload hands
/// it to the new runner, which passes it to `DestinationFactory` without looking inside.
package final class DestinationMemory: Sendable {
    /// The WebDAV collections known to exist (plain PUTs).
    package let collections = KnownCollections()

    package init() {}
}
