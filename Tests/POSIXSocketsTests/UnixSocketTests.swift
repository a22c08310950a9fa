#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import POSIXSockets

/// `serve --socket`'s and `ctap serve --socket`'s path: a socket is made over nothing or over a stale socket of this user's;
/// whatever else is planted there is refused and left as it is, a link never followed.
@Suite struct UnixSocketTests {
    /// The refusal's message, or nil when a socket was made (and then closed).
    func refusal(_ path: String, lockWait: Duration = UnixSocket.lockWait) -> String? {
        do {
            close(try UnixSocket.listen(at: path, lockWait: lockWait))
            return nil
        } catch {
            return error.message
        }
    }

    /// A socket bound at `path`, listened on or not, left open for the test's span (`close` it).
    func boundSocket(_ path: String, listening: Bool) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let address = try UnixSocket.address(path)
        let bound = withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        if listening { #expect(listen(fd, 1) == 0) }
        return fd
    }

    func kind(_ path: String) -> mode_t? {
        var found = stat()
        return lstat(path, &found) == 0 ? found.st_mode & S_IFMT : nil
    }

    @Test func overNothingTheSocketIsMadeMode600() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/s.sock"
            let fd = try UnixSocket.listen(at: path)
            defer { close(fd) }
            var found = stat()
            #expect(lstat(path, &found) == 0)
            #expect(found.st_mode & S_IFMT == S_IFSOCK)
            #expect(found.st_mode & 0o777 == 0o600)
        }
    }

    @Test func aPlantedFileOrDirectoryIsRefusedAndLeft() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/file"
            try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
            #expect(refusal(file) == "cannot listen on \(file): it exists and is not a socket (it is left as it is)")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep")
            let folder = directory + "/folder"
            #expect(mkdir(folder, 0o700) == 0)
            #expect(refusal(folder)?.hasSuffix("it exists and is not a socket (it is left as it is)") == true)
            #expect(kind(folder) == S_IFDIR)
        }
    }

    @Test func aLinkIsRefusedNotFollowedAndLeftWhereverItPoints() throws {
        try withTemporaryDirectory { directory in
            let target = directory + "/target", link = directory + "/link"
            try Data("keep".utf8).write(to: URL(fileURLWithPath: target))
            #expect(symlink(target, link) == 0)
            #expect(refusal(link)?.hasSuffix("it exists and is not a socket (it is left as it is)") == true)
            #expect(kind(link) == S_IFLNK)
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
            // To a stale socket, which would be replaced were the link followed.
            let stale = directory + "/stale.sock", toStale = directory + "/to-stale"
            close(try boundSocket(stale, listening: false))
            #expect(symlink(stale, toStale) == 0)
            #expect(refusal(toStale) != nil)
            #expect(kind(toStale) == S_IFLNK)
            #expect(kind(stale) == S_IFSOCK)
            // Pointing nowhere.
            let dangling = directory + "/dangling"
            #expect(symlink(directory + "/nothing", dangling) == 0)
            #expect(refusal(dangling) != nil)
            #expect(kind(dangling) == S_IFLNK)
            #expect(kind(directory + "/nothing") == nil)
        }
    }

    @Test func aSocketAServerListensOnIsRefusedAndLeft() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/live.sock"
            let live = try boundSocket(path, listening: true)
            defer { close(live) }
            #expect(refusal(path) == "cannot listen on \(path): a server listens there already")
            #expect(kind(path) == S_IFSOCK)
        }
    }

    @Test func aStaleSocketOfThisUsersIsReplacedAndAnotherUsersIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/stale.sock"
            close(try boundSocket(path, listening: false))
            #expect(refusal(path) == nil)
            #expect(kind(path) == S_IFSOCK)
            guard geteuid() == 0 else { return }  // only root can give a socket to another user
            let theirs = directory + "/theirs.sock"
            close(try boundSocket(theirs, listening: false))
            #expect(chown(theirs, 65534, 65534) == 0)
            #expect(refusal(theirs) == "cannot listen on \(theirs): it is another user's socket")
            #expect(kind(theirs) == S_IFSOCK)
        }
    }

    @Test func aDirectoryLockHeldByAnotherProcessIsWaitedForThenRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/s.sock"
            // Another open file description: flock then holds it against this process too.
            let held = open(directory, O_RDONLY | O_DIRECTORY)
            #expect(flock(held, LOCK_EX) == 0)
            let started = ContinuousClock.now
            #expect(refusal(path, lockWait: .seconds(1))
                == "cannot listen on \(path): another process has held the lock on its directory (flock) for 1 s")
            #expect(ContinuousClock.now - started >= .seconds(1))
            #expect(kind(path) == nil)
            close(held)
            #expect(refusal(path, lockWait: .seconds(1)) == nil)
        }
    }

    @Test func aPathTooLongOrWithANULIsRefused() {
        #expect(refusal("/" + String(repeating: "a", count: 108)) == "the socket path is longer than 107 bytes")
        #expect(refusal("/tmp/a\u{0}b") == "the socket path has a NUL byte")
    }

    @Test func theDirectoryLockedIsThePaths() {
        #expect(UnixSocket.parent(of: "/s.sock") == "/")
        #expect(UnixSocket.parent(of: "/run/user/0/s.sock") == "/run/user/0")
    }
}
