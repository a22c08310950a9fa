import Foundation

/// What the phone holds besides its passkeys and remembers between requests. Not Apple API.
@MainActor
final class HostState {
    /// The AutoFill-assisted request whose passkeys the QuickType bar offers now.
    var autoFill: AutoFillFlow?
}
