#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
@testable import Server

/// The watch over connections: the deadline for each request's head, and which connection makes
/// room past the limit — on a clock the test moves.
@Suite struct ConnectionWatchTests {
    /// The descriptors the watch closed, recorded rather than shut down.
    final class Closed: Sendable {
        let fds = Mutex([Int32]())
        func record(_ fd: Int32) { fds.withLock { $0.append(fd) } }
        var all: [Int32] { fds.withLock { $0 } }
    }

    func watch(limit: Int = 3, timeout: UInt64 = 1000) -> (ConnectionWatch, Closed) {
        let closed = Closed()
        return (ConnectionWatch(limit: limit, headerTimeout: timeout, close: { closed.record($0) }), closed)
    }

    @Test func pastTheLimitTheConnectionThatHasWaitedLongestForItsRequestMakesRoom() {
        let (watch, closed) = watch()
        let a = watch.opened(fd: 10, now: 100)
        _ = watch.opened(fd: 11, now: 50)
        _ = watch.opened(fd: 12, now: 200)
        #expect(closed.all.isEmpty)
        _ = watch.opened(fd: 13, now: 300)
        #expect(closed.all == [11])
        #expect(watch.open == 3)
        // A kept-alive connection waits for its next request from when its answer went.
        watch.progress(a, .requestRead, now: 310)
        watch.progress(a, .awaiting, now: 400)
        _ = watch.opened(fd: 14, now: 500)
        #expect(closed.all == [11, 12])
    }

    @Test func aConnectionBeingAnsweredIsNeverClosedToMakeRoomButOneSendingItsBodyIs() {
        let (watch, closed) = watch(limit: 2)
        let a = watch.opened(fd: 10, now: 0), b = watch.opened(fd: 11, now: 1)
        watch.progress(a, .requestRead, now: 5)
        watch.progress(b, .headRead, now: 6)
        _ = watch.opened(fd: 12, now: 10)
        #expect(closed.all == [11])  // its head came, its body still comes: it waits for its request
        watch.closed(b)
        #expect(watch.open == 2)
        let c = watch.connections.first { $0.value.fd == 12 }!.key
        watch.progress(c, .requestRead, now: 11)
        _ = watch.opened(fd: 13, now: 12)
        #expect(closed.all == [11, 13])  // every other is being answered: the newcomer is closed
        #expect(watch.open == 2)
    }

    @Test func ofTwoThatBeganAtOnceTheOneThatCameFirstMakesRoom() {
        let (watch, closed) = watch(limit: 2)
        _ = watch.opened(fd: 10, now: 7)
        _ = watch.opened(fd: 11, now: 7)
        _ = watch.opened(fd: 12, now: 7)
        #expect(closed.all == [10])
    }

    @Test func aConnectionAlreadyClosingIsNotCountedNorClosedAgain() {
        let (watch, closed) = watch(limit: 1)
        let a = watch.opened(fd: 10, now: 0)
        _ = watch.opened(fd: 11, now: 1)
        #expect(closed.all == [10])
        #expect(watch.connections[a]?.closing == true)
        _ = watch.opened(fd: 12, now: 2)
        #expect(closed.all == [10, 11])
        watch.closed(a)  // libmicrohttpd's closing notice for the one closed here
        #expect(watch.open == 1)
    }

    @Test func aHeadNotAllComeByTheDeadlineClosesItsConnection() {
        let (watch, closed) = watch(limit: 10, timeout: 1000)
        let a = watch.opened(fd: 10, now: 0)
        let b = watch.opened(fd: 11, now: 400)
        let c = watch.opened(fd: 12, now: 0)
        watch.progress(c, .headRead, now: 10)  // its head came: the deadline is met, however long its body takes
        #expect(watch.reap(now: 999) == 1049)  // a look every 50 ms at most
        #expect(closed.all.isEmpty)
        #expect(watch.reap(now: 1000) == 1400)
        #expect(closed.all == [10])
        #expect(watch.connections[a]?.closing == true)
        // A kept-alive connection's deadline counts from when it began to wait for its next request.
        watch.progress(b, .headRead, now: 500)
        watch.progress(b, .awaiting, now: 1300)
        #expect(watch.reap(now: 1400) == 2300)
        #expect(watch.reap(now: 2300) == 3300)
        #expect(closed.all == [10, 11])
        #expect(watch.reap(now: 5000) == 6000)
        #expect(closed.all == [10, 11])
    }

    @Test func theReaperLooksAtMostEvery50Milliseconds() {
        let (watch, _) = watch(limit: 10, timeout: 1000)
        _ = watch.opened(fd: 10, now: 0)
        #expect(watch.reap(now: 990) == 1040)
    }

    @Test func theReaperClosesARealConnectionsSocket() throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        let watch = ConnectionWatch(limit: 10, headerTimeout: 100)
        _ = watch.opened(fd: pair[0], now: ConnectionWatch.now())
        watch.startReaping()
        var byte: UInt8 = 0
        #expect(read(pair[1], &byte, 1) == 0)  // shut down: its peer reads the end
        watch.stopReaping()
    }
}
