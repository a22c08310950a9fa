// swift-tools-version:6.0
import PackageDescription

// An iOS app's passkey sign-in, built and run on Linux against the example bank
// (docs/examples/rp_server.py). On iOS `import AuthenticationServices` is Apple's framework; on
// Linux it is authctl's, answered by a device of an authctl account (docs/ios.md). The products
// are asked for on Linux alone, as an app's package would ask for them.
let package = Package(
    name: "ios-bank",
    dependencies: [.package(name: "authctl", path: "../../..")],
    targets: [
        .executableTarget(name: "ios-bank", dependencies: [
            .product(name: "AuthenticationServices", package: "authctl", condition: .when(platforms: [.linux])),
            .product(name: "Session", package: "authctl", condition: .when(platforms: [.linux])),
        ]),
    ]
)
