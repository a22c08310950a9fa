// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "authctl",
    products: [
        .executable(name: "authctl", targets: ["authctl"]),
        .library(name: "VirtualAuthenticator", targets: ["VirtualAuthenticator"]),
        .library(name: "KeyVault", targets: ["KeyVault"]),
    ],
    targets: [
        // C behind a wall: each system library is imported only by the module that owns it.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCBOR", pkgConfig: "libcbor", providers: [.apt(["libcbor-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),

        // WebAuthn client rules + CTAP2-level authenticator. Knows nothing of the vault.
        .target(name: "VirtualAuthenticator", dependencies: ["COpenSSL", "CCBOR"]),
        // The encrypted on-disk store. Knows nothing of WebAuthn.
        .target(name: "KeyVault", dependencies: ["CSodium"]),
        // The command line: joins the two through a store adapter.
        .executableTarget(name: "authctl", dependencies: ["VirtualAuthenticator", "KeyVault"]),
        // The decoders as libFuzzer targets (built with -sanitize=fuzzer -DFUZZING; see
        // docs/fuzzing.md); built plainly, a replayer and seed writer.
        .executableTarget(name: "authctl-fuzz", dependencies: ["VirtualAuthenticator", "KeyVault"]),

        .testTarget(name: "VirtualAuthenticatorTests", dependencies: ["VirtualAuthenticator"]),
        .testTarget(name: "KeyVaultTests", dependencies: ["KeyVault"]),
    ]
)
