/// A failed system call: which call, on what path, and the errno it returned.
///
/// One error type for every libc failure, so messages always say what and where
/// ("open outbox/a.txt: Permission denied (errno 13)") and callers can branch on `code`.
package struct SystemError: Error, CustomStringConvertible, Equatable {
    package let operation: String
    package let path: String?
    package let code: Errno
    /// A half-made file the failed call left behind, its removal refused too (the caller may try again).
    package var leftBehind: RelativePath?

    package init(_ operation: String, path: String? = nil, code: Errno = .current) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    package var reason: String { code.description }

    /// `Permission denied (errno 13)`: the errno text without the operation and path.
    package var reasonWithCode: String { "\(reason) (errno \(code.rawValue))" }

    package var description: String {
        let left = leftBehind.map { "; the half-made \($0.logSafe) could not be removed" } ?? ""
        if let path { return "\(operation) \(path): \(reasonWithCode)\(left)" }
        return "\(operation): \(reasonWithCode)\(left)"
    }

    package var isNotFound: Bool { code == .noEntry }

    /// `error` (a call's failure that left the half-made `name` behind) once `remove` has tried to
    /// remove it: saying so when that removal is refused too, so the caller can note it and try
    /// again later. Every file layer throws `SystemError`; anything else becomes one on `path`.
    package static func afterRemoving(_ name: RelativePath, failed error: any Error, operation: String, path: String,
                                      _ remove: () throws -> Void) -> SystemError {
        var failure = error as? SystemError ?? SystemError(operation, path: path, code: .io)
        do {
            try remove()
        } catch let gone as SystemError where gone.isNotFound {
            // Nothing left to remove.
        } catch {
            failure.leftBehind = name
        }
        return failure
    }
}

/// Runs a libc call, retrying on EINTR; returns the result or throws `SystemError`.
@discardableResult
package func retryingEINTR<T: BinaryInteger>(
    _ operation: String, path: String? = nil, _ call: () -> T
) throws -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = Errno.current
        if code == .interrupted { continue }
        throw SystemError(operation, path: path, code: code)
    }
}
