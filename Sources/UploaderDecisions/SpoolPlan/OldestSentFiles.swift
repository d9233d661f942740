import UploaderValues

/// The `capacity` oldest files seen on a walk of sent/, for `keep_sent_bytes`: a bounded max-heap
/// (the newest of those kept on top, so a file older than it takes its place), so a walk of a
/// million files holds `capacity` of them, not a million.
package struct OldestSentFiles: Sendable {
    /// One file in sent/: its manifest's mtime (when it was recorded as sent), its manifest's
    /// path, and the bytes it and its manifest take.
    package struct Candidate: Equatable, Sendable {
        package var mtimeNanos: Int64
        package var manifest: RelativePath
        package var bytes: Int64

        package init(mtimeNanos: Int64, manifest: RelativePath, bytes: Int64) {
            self.mtimeNanos = mtimeNanos
            self.manifest = manifest
            self.bytes = bytes
        }

        /// Older first; ties by path, so the order is the same on every pass.
        static func isOlder(_ a: Candidate, than b: Candidate) -> Bool {
            a.mtimeNanos != b.mtimeNanos ? a.mtimeNanos < b.mtimeNanos : a.manifest < b.manifest
        }
    }

    package let capacity: Int
    private var heap: [Candidate] = []
    /// Some file was left out because `capacity` older ones were kept.
    package private(set) var overflowed = false

    package init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    package mutating func offer(_ candidate: Candidate) {
        if heap.count < capacity {
            heap.append(candidate)
            siftUp(heap.count - 1)
        } else {
            overflowed = true
            guard Candidate.isOlder(candidate, than: heap[0]) else { return }
            heap[0] = candidate
            siftDown(0)
        }
    }

    /// The files kept, oldest first.
    package func oldestFirst() -> [Candidate] { heap.sorted(by: Candidate.isOlder) }

    /// The newer of two places goes up: the root is the newest kept.
    private func newer(_ i: Int, _ j: Int) -> Bool { Candidate.isOlder(heap[j], than: heap[i]) }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard newer(child, parent) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var top = parent
            for child in [2 * parent + 1, 2 * parent + 2] where child < heap.count && newer(child, top) { top = child }
            guard top != parent else { return }
            heap.swapAt(parent, top)
            parent = top
        }
    }
}
