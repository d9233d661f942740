import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Paths waiting to be claimed, each at most once, smallest rank first (ties by path): a
/// binary heap, so a backlog of 100,000 files costs O(log n) per file and never a full sort
/// before the first upload starts.
///
/// It also remembers the rank of each path it has handed out until told to `forget` it, so a
/// file put back (a pause let go of it, its upload was cut) waits in its place again.
package struct PathQueue: Sendable, Equatable {
    private struct Entry: Sendable, Comparable {
        var rank: Int64
        var path: RelativePath

        static func < (a: Entry, b: Entry) -> Bool { (a.rank, a.path) < (b.rank, b.path) }
    }

    private var heap: [Entry] = []
    private var members: Set<RelativePath> = []
    /// The rank of every path handed out and not yet forgotten (a waiting path's is in the
    /// heap: a backlog of 100,000 files keeps no second copy of theirs).
    private var ranks: [RelativePath: Int64] = [:]

    package init() {}

    package var count: Int { heap.count }
    package var isEmpty: Bool { heap.isEmpty }

    package func contains(_ path: RelativePath) -> Bool { members.contains(path) }

    /// The rank `path` last waited with, while it is handed out (held).
    package func rank(of path: RelativePath) -> Int64? { ranks[path] }

    /// Notes a newer rank for a path that is not waiting now (it is held), for when it is put back.
    package mutating func remember(_ path: RelativePath, rank: Int64) {
        if !members.contains(path) { ranks[path] = rank }
    }

    /// Adds `path` unless it is already waiting; with no `rank`, the one remembered for it (else 0).
    package mutating func add(_ path: RelativePath, rank: Int64? = nil) {
        guard members.insert(path).inserted else { return }
        let rank = rank ?? ranks[path] ?? 0
        ranks[path] = nil
        heap.append(Entry(rank: rank, path: path))
        siftUp(heap.count - 1)
    }

    /// Adds many at once (the start-up backlog): appended, then the heap rebuilt in O(n) when
    /// the batch outnumbers what waits already, instead of one sift per file.
    package mutating func add(_ batch: [(path: RelativePath, rank: Int64)]) {
        guard batch.count > heap.count else {
            for item in batch { add(item.path, rank: item.rank) }
            return
        }
        // Room for all at once: grown by doubling, the heap and the set would each hold two
        // buffers for a moment, the peak of a start-up with a backlog.
        heap.reserveCapacity(heap.count + batch.count)
        members.reserveCapacity(members.count + batch.count)
        for item in batch where members.insert(item.path).inserted {
            ranks[item.path] = nil
            heap.append(Entry(rank: item.rank, path: item.path))
        }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    package mutating func popFirst() -> RelativePath? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        members.remove(first.path)
        ranks[first.path] = first.rank
        return first.path
    }

    /// Drops the remembered rank of a path that is neither waiting nor held any more.
    package mutating func forget(_ path: RelativePath) { ranks[path] = nil }

    package mutating func removeAll() {
        heap = []
        members = []
        ranks = [:]
    }

    /// The waiting paths in the order they would start (sorts: for tests and traces only).
    package var paths: [RelativePath] { heap.sorted().map(\.path) }

    /// Paths with a remembered rank (held): lets tests see that nothing leaks.
    package var remembered: Int { ranks.count }

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

    package static func == (a: PathQueue, b: PathQueue) -> Bool { a.heap.sorted() == b.heap.sorted() && a.ranks == b.ranks }
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
