import Foundation

/// A fresh directory for a test: made by mkdtemp(3) under the system's temporary directory
/// (`$TMPDIR`, else /tmp), so it is new and this user's alone (mode 0700), and removed with
/// everything in it when the value goes. A test suite that is a class keeps one as a property: it
/// goes after the suite's own `deinit`, which can first let go of what still uses it.
package final class TemporaryDirectory {
    package let path: String

    /// `prefix` starts the directory's name, to tell whose a directory left by a crash is.
    package init(_ prefix: String = "authctl-test") throws {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// `body` with the path of a fresh directory, removed when it returns.
package func withTemporaryDirectory<R>(_ prefix: String = "authctl-test", _ body: (String) throws -> R) throws -> R {
    let directory = try TemporaryDirectory(prefix)
    return try withExtendedLifetime(directory) { try body(directory.path) }
}
