// swift-tools-version:6.0
import PackageDescription

// An iOS app's passkey code, built and run on Linux against the example bank
// (docs/examples/rp_server.py). On iOS `import AuthenticationServices` is Apple's framework; on
// Linux it is authctl's, answered by a device of an authctl account (docs/ios.md). The products
// are asked for on Linux alone, as an app's package would ask for them.
//
// ios-bank is the app with its flows; SeedShapes is a published guide's passkey code in its own
// shapes, built to show that its AuthenticationServices calls compile against the module, with
// what Linux lacks swapped for stand-ins (docs/ios.md, "What a team swaps").
let package = Package(
    name: "ios-bank",
    // Where Apple's framework is: the app's requests need iOS 18 (requestStyle .conditional; AutoFill
    // and preferImmediatelyAvailableCredentials are iOS 16). Linux ignores this.
    platforms: [.iOS(.v18), .macOS(.v15)],
    dependencies: [.package(name: "authctl", path: "../../..")],
    targets: [
        .executableTarget(name: "ios-bank", dependencies: [
            .product(name: "AuthenticationServices", package: "authctl", condition: .when(platforms: [.linux])),
            .product(name: "Session", package: "authctl", condition: .when(platforms: [.linux])),
        ]),
        // The app's own tests: its PasskeyCoordinator on a throw-away phone (docs/ios.md, "Quick start").
        .testTarget(name: "ios-bankTests", dependencies: [
            .target(name: "ios-bank"),
            .product(name: "AuthenticationServices", package: "authctl", condition: .when(platforms: [.linux])),
            .product(name: "Session", package: "authctl", condition: .when(platforms: [.linux])),
        ]),
        // Swift 5 language mode, as the guide's code is written: some of it is a data-race error in
        // Swift 6 mode on any platform (docs/ios.md).
        .target(name: "SeedShapes", dependencies: [
            .product(name: "AuthenticationServices", package: "authctl", condition: .when(platforms: [.linux])),
            .target(name: "CLibCrypto", condition: .when(platforms: [.linux])),
        ], swiftSettings: [.swiftLanguageMode(.v5)]),
        // CryptoKit's SHA256 on Linux: OpenSSL's libcrypto, which authctl links already.
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
    ]
)
