import UploaderValues

/// The line of files waiting to be claimed, smallest rank first (ties by path): a binary heap,
/// so a backlog of 100,000 files costs O(log n) per file and never a full sort before the first
/// upload starts. An index of `FileStages`, which alone changes it: that a path is here at most
/// once, and with the rank its entry says, is the stage map's business (and invariant).
package struct PathQueue: Sendable, Equatable {
    private struct Entry: Sendable, Comparable {
        var rank: Int64
        var path: RelativePath

        static func < (a: Entry, b: Entry) -> Bool { (a.rank, a.path) < (b.rank, b.path) }
    }

    private var heap: [Entry] = []

    package init() {}

    package var count: Int { heap.count }
    package var isEmpty: Bool { heap.isEmpty }

    mutating func push(_ path: RelativePath, rank: Int64) {
        heap.append(Entry(rank: rank, path: path))
        siftUp(heap.count - 1)
    }

    /// Adds those of `files` that `admit` lets in (the start-up backlog), at most `count` of them:
    /// appended, then the heap rebuilt in O(n) when they outnumber what waits already, instead of
    /// one sift per file.
    mutating func push(_ files: [QueuedFile], count: Int, rank: (QueuedFile) -> Int64, admitting admit: (QueuedFile) -> Bool) {
        guard count > heap.count else {
            for file in files where admit(file) { push(file.path, rank: rank(file)) }
            return
        }
        // Room for all at once: grown by doubling, the heap would hold two buffers for a moment,
        // the peak of a start-up with a backlog.
        heap.reserveCapacity(heap.count + count)
        for file in files where admit(file) { heap.append(Entry(rank: rank(file), path: file.path)) }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    mutating func popFirst() -> (path: RelativePath, rank: Int64)? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return (first.path, first.rank)
    }

    /// Takes `path` out from anywhere in the line, returning its rank: a linear search, for a
    /// change no transition makes (a waiting file leaves at the head, or all leave at once).
    mutating func remove(_ path: RelativePath) -> Int64? {
        guard let index = heap.firstIndex(where: { $0.path == path }) else { return nil }
        let rank = heap[index].rank
        let last = heap.removeLast()
        guard index < heap.count else { return rank }
        heap[index] = last
        siftDown(index)
        siftUp(index)
        return rank
    }

    /// The waiting paths in the order they would start (sorts: for tests and traces only).
    package var paths: [RelativePath] { heap.sorted().map(\.path) }

    /// Every path in line with its rank, in heap order (for the invariants).
    var members: some Sequence<(path: RelativePath, rank: Int64)> { heap.lazy.map { ($0.path, $0.rank) } }

    /// The same paths with the same ranks, however the heap is laid out.
    package static func == (a: PathQueue, b: PathQueue) -> Bool { a.heap.sorted() == b.heap.sorted() }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child] < heap[parent] else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count && heap[left + 1] < heap[left] { smallest = left + 1 }
            guard heap[smallest] < heap[parent] else { return }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
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
