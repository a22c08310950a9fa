import Foundation
import SyncStore
import Testing

/// ``PostgresStore`` passes the contract every account store must pass, against a live server:
/// each check in a database of its own on the shared private cluster, "taken away" by refusing
/// the database's connections and ending those it has (a server that goes away mid-session).
@Test(arguments: AccountStoreContract.Check.allCases)
func postgresStorePassesTheContract(_ check: AccountStoreContract.Check) throws {
    let cluster = PrivateCluster.shared
    let database = "contract_" + check.rawValue.lowercased()
    try cluster.sql("DROP DATABASE IF EXISTS \(database)")
    try cluster.sql("CREATE DATABASE \(database)")
    let address = try PostgresAddress(cluster.address(database))
    let contract = AccountStoreContract(
        connect: { try PostgresStore(address: address) },
        takeAway: {
            try cluster.sql("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
            try cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)'")
        },
        bringBack: { try cluster.sql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true") })
    try contract.run(check)
}

/// Accounts of one database are apart: each has its own sequences, metadata and snapshot, and
/// a reader creates nothing — an account that does not exist is `unavailable` to it.
@Test func accountsInOneDatabaseAreApart() throws {
    let cluster = PrivateCluster.shared
    try cluster.sql("DROP DATABASE IF EXISTS apart")
    try cluster.sql("CREATE DATABASE apart")
    let alice = try PostgresStore(address: PostgresAddress(cluster.address("apart", account: "alice")))
    let bob = try PostgresStore(address: PostgresAddress(cluster.address("apart", account: "bob")))
    #expect(try alice.append([AccountStoreContract.object("x")]) == [1])
    #expect(try bob.append([AccountStoreContract.object("x"), AccountStoreContract.object("y")]) == [1, 2])
    try alice.setMetadata("devices", [1], expecting: 0)
    #expect(try bob.metadata(["devices"]).isEmpty)
    try bob.compact(through: 2, snapshot: [AccountStoreContract.object("snap")])
    #expect(try alice.snapshot() == nil && alice.extent() == StoreExtent(snapshot: 0, head: 1))
    expectKind(.unavailable) { _ = try PostgresStore(address: PostgresAddress(cluster.address("apart", account: "carol")), create: false) }
    expectKind(.unavailable) { _ = try PostgresStore(address: PostgresAddress(cluster.address("no_such_database"))) }
}

/// A server that stops is `unavailable` to a client that was connected, and the same client
/// works again — with everything the store held — once the server is back; a client waiting for
/// a change is woken by another client's append.
@Test func aServerThatRestartsIsUnavailableThenServesAgain() throws {
    let cluster = try PrivateCluster()
    defer { cluster.destroy() }
    let address = try PostgresAddress(cluster.address())
    let store = try PostgresStore(address: address)
    _ = try store.append([AccountStoreContract.object("before")])
    try cluster.stop()
    expectKind(.unavailable) { _ = try store.extent() }
    expectKind(.unavailable) { _ = try PostgresStore(address: address) }
    try cluster.start()
    #expect(try store.append([AccountStoreContract.object("after")]) == [2])
    #expect(try store.changes(after: 0, limit: 10).changes.map(\.sequence) == [1, 2])
    // LISTEN/NOTIFY wakes a waiting client; nothing wakes it when nothing changes. (Its own
    // append notified it too: read that first.)
    #expect(try store.waitForChange(timeout: .milliseconds(1)) == true)
    #expect(try store.waitForChange(timeout: .milliseconds(50)) == false)
    let other = try PostgresStore(address: address)
    let woken = Failures()
    let waiter = Thread { if (try? store.waitForChange(timeout: .seconds(60))) == true { woken.add("woken") } }
    waiter.start()
    Thread.sleep(forTimeInterval: 0.2)  // lets the waiter reach poll(); a late start still finds the notification queued
    _ = try other.append([AccountStoreContract.object("wake")])
    let deadline = Date().addingTimeInterval(60)
    while woken.all.isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    #expect(woken.all == ["woken"])
}

/// An address is a PostgreSQL URI with an optional account after '#'; a password never shows
/// in what the store says.
@Test func aPostgresAddressNamesItsAccountAndHidesItsPassword() throws {
    let a = try PostgresAddress("postgresql://me:s3cret@db.example:5433/keys?sslmode=require#alice")
    #expect(a.account == "alice" && a.conninfo == "postgresql://me:s3cret@db.example:5433/keys?sslmode=require")
    #expect("\(a)" == "postgresql://me:***@db.example:5433/keys?…#alice")
    #expect(try PostgresAddress("postgres://db/keys").account == "default")
    #expect(PostgresAddress.redacted("postgresql://db/keys?user=me&password=hunter2&x=1") == "postgresql://db/keys?…")
    // libpq reads `pass%77ord` as `password`, and echoes a token it cannot parse: every
    // parameter's value, as given and decoded, is scrubbed from what it says.
    let b = try PostgresAddress("postgresql://me:s3cret%21@db/keys?pass%77ord=x%7A9&password=hunter2")
    #expect(b.scrub("bad token \"x%7A9\", \"xz9\", hunter2, s3cret!, s3cret%21") == "bad token \"***\", \"***\", ***, ***, ***")
    #expect(PostgresAddress.redacted("postgresql://db/" + String(repeating: "a", count: 5000)).count == 201)
    #expect(try PostgresAddress("postgresql://db/keys?zz").scrub("missing key/value separator \"=\" in URI query parameter: \"zz\"")
            == "missing key/value separator \"=\" in URI query parameter: \"***\"")
    expectKind(.invalid) { _ = try PostgresAddress("/var/lib/store") }
    expectKind(.invalid) { _ = try PostgresAddress("postgresql://db/keys#Not An Account") }
    expectKind(.invalid) { _ = try PostgresAddress("postgresql://db/keys\n#x") }
}

/// Scrubbing hides a value only where it stands as a word of its own, and leaves the values of
/// parameters that are never secret (a port, a mode): libpq's words stay readable.
@Test func aScrubbedMessageHidesEverySecretValueAndNoOtherWord() throws {
    let address = try PostgresAddress("postgresql://me:rt@db:5432/keys?sslmode=require&password=ion&options=-c%20x&pass%77ord=abc&oops")
    #expect(address.scrub("connection to server at \"db\", port 5432 failed: rt, ion, abc, -c x, oops; sslmode require; transport")
            == "connection to server at \"db\", port 5432 failed: ***, ***, ***, ***, ***; sslmode require; transport")
    #expect(address.scrub("«rt» „ion“ (abc) rt.") == "«***» „***“ (***) ***.")
}

/// A password written into an address, which a process's arguments show to every user of the
/// machine, in any of the places libpq reads one from.
@Test func anAddressSaysWhetherItCarriesAPassword() {
    for address in ["postgresql://me:pw@db/keys#alice", "postgresql://me@db/keys?password=x", "postgres://db/keys?pass%77ord=x",
                    "postgresql://db/keys?sslpassword=x", "postgresql://db/keys?dbname=host%3Ddb%20password%3Dx"] {
        #expect(PostgresAddress.carriesPassword(address), "\(address)")
    }
    for address in ["postgresql://me@db:5432/keys?sslmode=require#alice", "postgresql://me:@db/keys", "postgresql://db/keys?password=",
                    "postgresql://db/keys?passfile=/home/me/.pgpass"] {
        #expect(!PostgresAddress.carriesPassword(address), "\(address)")
    }
}
