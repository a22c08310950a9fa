// Session's requests and responses are written in Keychain's vocabulary (`Account`, `Credential`,
// `CallerContext`, `PasskeySettings`, `SyncStatus`, …): `import Session` brings it, so a front end
// names every type of Session's signatures with that one import.
@_exported import Keychain
