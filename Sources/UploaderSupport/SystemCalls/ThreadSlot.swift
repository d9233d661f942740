@preconcurrency import Glibc

/// One word each thread holds for itself (a `pthread_key_t`): what a thread carries with no lock,
/// read on hot paths — the planted-bug switch, a worker's seat on its board.
package struct ThreadSlot: Sendable {
    private let key: pthread_key_t

    /// `ended` runs with the thread's value when a thread that set one ends (nil: nothing to release).
    package init(_ purpose: String, ended: (@convention(c) (UnsafeMutableRawPointer?) -> Void)? = nil) {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, ended) == 0, "no thread-specific key left for \(purpose)")
        self.key = key
    }

    /// The calling thread's value (nil until it sets one).
    package var value: UnsafeMutableRawPointer? {
        get { pthread_getspecific(key) }
        nonmutating set { pthread_setspecific(key, newValue) }
    }
}
