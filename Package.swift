// swift-tools-version:6.0
import PackageDescription

// The module map, every arrow pointing one way (docs/design.md):
//
//   authctl (CLI: parse, request, print) ──▶ Scenarios ──▶ Session (requests) ──▶ Keychain (the device) ──▶ VirtualAuthenticator, KeyVault, SyncStore
//   authctl ──▶ Server (`authctl serve`), Audit (`authctl audit`), Benchmarks (what `authctl bench` measures) ──▶ Session
//                                                                               VirtualAuthenticator ──▶ Curl
//
// The front ends (authctl, Server, Scenarios, Audit) depend on Session and their own modules alone
// (scripts/check_door.py holds them to it); Benchmarks measures below the door, on purpose.
//
// VirtualAuthenticator, KeyVault and SyncStore (the account store port) never import each other;
// KeyVault and SyncStore share POSIXFiles (file primitives), and all three, Keychain and Session
// share ByteOrder (big-endian integers): the two import nothing of ours. Each C library is imported
// by the one module that owns it. TestSupport (Tests/TestSupport) is the test targets' own.
// No unsafe flags, so that other packages can depend on this one. What users run is built with
// `swift build -c release --static-swift-stdlib` (scripts/build-release.sh), which links the Swift
// runtime and Foundation in: loading them as shared libraries took half of every command's start.
//
// The commit a binary was built from (`authctl --version`) comes from $AUTHCTL_COMMIT, which the
// build scripts set; only the one C file that holds it is rebuilt when it changes.
let commit = Context.environment["AUTHCTL_COMMIT"].flatMap { $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." } ? $0 : nil } ?? "unknown"

let package = Package(
    name: "authctl",
    // The libraries others depend on (docs/library.md): their `public` declarations are the
    // supported API, `package` ones are shared only inside this package (Tests/api holds each
    // module's public surface; scripts/check-api.sh holds them to it). Keychain re-exports
    // VirtualAuthenticator and KeyVault, whose types its signatures use; KeyVault and Curl are
    // not products of their own.
    products: [
        .executable(name: "authctl", targets: ["authctl"]),
        .library(name: "Keychain", targets: ["Keychain"]),
        .library(name: "VirtualAuthenticator", targets: ["VirtualAuthenticator"]),
        .library(name: "Scenarios", targets: ["Scenarios"]),
        .library(name: "Session", targets: ["Session"]),
        .library(name: "AuthenticationServices", targets: ["AuthenticationServices"]),
    ],
    targets: [
        // C behind a wall: each system library is imported only by the module that owns it.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCBOR", pkgConfig: "libcbor", providers: [.apt(["libcbor-dev"])]),
        .systemLibrary(name: "CPSL", pkgConfig: "libpsl", providers: [.apt(["libpsl-dev"])]),
        .systemLibrary(name: "CIDN2", pkgConfig: "libidn2", providers: [.apt(["libidn2-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // libcurl (libcurl4-openssl-dev), loaded with dlopen when first used: it links two dozen
        // libraries that every start would pay for otherwise.
        .target(name: "CCurl"),
        // libmicrohttpd (libmicrohttpd-dev), loaded with dlopen when `authctl serve` first starts:
        // linking it would load it and GnuTLS into every command.
        .target(name: "CMicroHTTPD"),
        // libpq (libpq5), loaded with dlopen when an account store on a PostgreSQL server is first
        // used, through prototypes of its own: no header needed to build, no library to run
        // without such a store.
        .target(name: "CPostgres"),
        // libauthctl-fido2.so, loaded with LD_PRELOAD into libfido2's tools and OpenSSH's
        // ssh-sk-helper: libfido2's device list and open, extended to authctl's security keys
        // (docs/ctap.md). libfido2's functions are found with dlsym at each call and its ABI is
        // declared in the target's own header, so building needs no libfido2 and the library links
        // none. SwiftPM compiles it; scripts/build-fido2-library.sh links its objects with the C
        // compiler (no product: a dynamic library product is linked by the Swift driver, which adds
        // the Swift runtime to every program the library would be preloaded into). Built with
        // _FORTIFY_SOURCE in release (it needs the optimizer): it runs inside other programs.
        .target(name: "CFIDO2Preload", cSettings: [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]),
        // The build's own facts (the commit), fixed when the binary is built.
        .target(name: "CBuildInfo", cSettings: [.define("AUTHCTL_COMMIT", to: "\"\(commit)\"")]),
        // Linux process controls Swift cannot call directly (prctl is variadic).
        .systemLibrary(name: "CProcess"),

        // Big-endian integers, the byte order of every layout authctl writes; imports nothing, so
        // that VirtualAuthenticator, KeyVault and SyncStore share it without importing each other.
        .target(name: "ByteOrder"),
        // libcurl behind a wall: URLs split as a URL parser splits them, and HTTP for scenarios.
        .target(name: "Curl", dependencies: ["CCurl"]),
        // WebAuthn client rules + CTAP2-level authenticator. Knows nothing of the vault.
        .target(name: "VirtualAuthenticator", dependencies: ["COpenSSL", "CCBOR", "CPSL", "CIDN2", "Curl", "ByteOrder"]),
        // POSIX file primitives (no links followed, owned regular files, exclusive creation,
        // fsync) that the vault and the store's directory share, each naming failures its own way.
        .target(name: "POSIXFiles"),
        // A Unix socket listening at a path, made over nothing or a stale socket alone, that the
        // HTTP server and the security key's transport share. Imports nothing of ours.
        .target(name: "POSIXSockets"),
        // The encrypted on-disk store. Knows nothing of WebAuthn.
        .target(name: "KeyVault", dependencies: ["CSodium", "POSIXFiles", "ByteOrder"]),
        // The account store port and its embedded directory implementation: what devices sync
        // through. Knows nothing of the vault or of WebAuthn (it holds sealed bytes).
        .target(name: "SyncStore", dependencies: ["POSIXFiles", "CPostgres", "ByteOrder"]),
        // The device: a vault-backed authenticator with its biometric sensor, as a library.
        .target(name: "Keychain", dependencies: ["VirtualAuthenticator", "KeyVault", "SyncStore", "CProcess", "ByteOrder"]),
        // The request layer every front end drives: typed requests and responses, the options
        // builders, the hybrid rule, and the user-facing error table.
        .target(name: "Session", dependencies: ["Keychain", "VirtualAuthenticator", "KeyVault", "SyncStore", "ByteOrder"]),
        // Apple's passkey API (ASAuthorizationController and its requests) for Linux, answered by a
        // device of an account through Session: an iOS app's passkey code compiles and runs here.
        // Curl fetches the app's associated domains' apple-app-site-association files.
        .target(name: "AuthenticationServices", dependencies: ["Session", "Curl"]),
        // Scenarios: scripted timelines of devices, sync and an RP, on a virtual clock.
        .target(name: "Scenarios", dependencies: ["Session", "Curl"]),
        // `authctl audit`: an RP's own endpoints driven with forged, replayed and downgraded
        // responses, and what it wrongly accepts.
        .target(name: "Audit", dependencies: ["Session", "Curl"]),
        // authctl as a security key: CTAP2 commands over CTAPHID on a UDP or Unix socket
        // (`authctl ctap serve`, docs/ctap.md), answered by a device of an account through Session.
        .target(name: "CTAP", dependencies: ["Session", "POSIXSockets"]),
        // `authctl serve`: the request layer over HTTP, with accounts of its own. Its contract
        // (openapi.json) and the page bridge (bridge.js) are files of their own, linted as such,
        // embedded in the code when it is built: an installed binary is one file, with no resource
        // bundle beside it for Bundle.module to find.
        .target(name: "Server", dependencies: ["CMicroHTTPD", "Session", "Audit", "POSIXSockets", "Curl"],
                resources: [.embedInCode("OpenAPI/openapi.json"), .embedInCode("Bridge/bridge.js")]),
        // What `authctl bench` measures, apart from the command line that parses and prints it.
        .target(name: "Benchmarks", dependencies: ["Session", "Keychain", "VirtualAuthenticator", "KeyVault", "SyncStore", "CTAP"]),
        // The command line: parse, request, print.
        .executableTarget(name: "authctl", dependencies: ["Session", "Scenarios", "Audit", "Server", "CTAP", "Benchmarks", "CBuildInfo"]),
        // The decoders as libFuzzer targets (built with -sanitize=fuzzer -DFUZZING; see
        // docs/fuzzing.md); built plainly, a replayer and seed writer.
        .executableTarget(name: "authctl-fuzz", dependencies: ["VirtualAuthenticator", "KeyVault", "CTAP", "Session", "ByteOrder"]),

        // What the test targets share: a fresh temporary directory per test.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "CurlTests", dependencies: ["Curl"]),
        .testTarget(name: "AuditTests", dependencies: ["Audit", "Session"]),
        // libcbor itself too: the encoder's output is checked against libcbor's own serializer.
        .testTarget(name: "VirtualAuthenticatorTests", dependencies: ["VirtualAuthenticator", "CCBOR", "TestSupport"]),
        .testTarget(name: "KeyVaultTests", dependencies: ["KeyVault", "TestSupport"]),
        .testTarget(name: "SyncStoreTests", dependencies: ["SyncStore", "TestSupport"]),
        .testTarget(name: "POSIXSocketsTests", dependencies: ["POSIXSockets", "TestSupport"]),
        .testTarget(name: "KeychainTests", dependencies: ["Keychain", "VirtualAuthenticator", "KeyVault", "SyncStore", "ByteOrder", "TestSupport"]),
        .testTarget(name: "ScenariosTests", dependencies: ["Scenarios", "Keychain", "TestSupport"]),
        // The request layer: the error table, the builders, the hybrid rule, and parity with scenarios.
        .testTarget(name: "SessionTests", dependencies: ["Session", "Scenarios", "Keychain", "VirtualAuthenticator"]),
        // The passkey API of iOS on a device of an account: ceremonies, bytes and errors.
        .testTarget(name: "AuthenticationServicesTests", dependencies: ["AuthenticationServices", "Session", "VirtualAuthenticator", "TestSupport"]),
        // `authctl serve`'s routes in-process.
        .testTarget(name: "ServerTests", dependencies: ["Server", "Session", "TestSupport"]),
        // The security key's CTAP2 commands and its CTAPHID framing, in-process.
        .testTarget(name: "CTAPTests", dependencies: ["CTAP", "Session", "TestSupport"]),
        // The command line's own parts: the man page writer and its roff escaping.
        .testTarget(name: "authctlTests", dependencies: ["authctl"]),
    ]
)
