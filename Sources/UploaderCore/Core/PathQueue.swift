import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Paths waiting to be claimed, first in first out, each at most once.
package struct PathQueue: Sendable, Equatable {
    private var items: [RelativePath] = []
    private var head = 0
    private var members: Set<RelativePath> = []

    package init() {}

    package var count: Int { items.count - head }
    package var isEmpty: Bool { head >= items.count }

    package func contains(_ path: RelativePath) -> Bool { members.contains(path) }

    /// Adds `path` unless it is already waiting; `front` puts it next in line.
    package mutating func add(_ path: RelativePath, front: Bool = false) {
        guard members.insert(path).inserted else { return }
        if front {
            compact()
            items.insert(path, at: 0)
        } else {
            items.append(path)
        }
    }

    package mutating func popFirst() -> RelativePath? {
        guard head < items.count else { return nil }
        let path = items[head]
        head += 1
        if head > 1024 && head * 2 > items.count { compact() }
        members.remove(path)
        return path
    }

    package mutating func removeAll() {
        items = []
        head = 0
        members = []
    }

    /// The waiting paths in order.
    package var paths: ArraySlice<RelativePath> { items[head...] }

    private mutating func compact() {
        if head > 0 {
            items.removeFirst(head)
            head = 0
        }
    }

    package static func == (a: PathQueue, b: PathQueue) -> Bool { a.paths.elementsEqual(b.paths) }
}

/// A small seeded generator (SplitMix64) kept in the state, so backoff jitter is part of
/// the transition's value and a run replays exactly from its seed.
package struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
