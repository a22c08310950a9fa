import Foundation
import Keychain
import Testing

@testable import Scenarios
import TestSupport

private func secret(_ text: String) -> SecureBytes {
    var bytes = Array(text.utf8)
    return SecureBytes(consuming: &bytes)
}

/// A vault someone keeps, made where a scenario's caller-supplied workspace puts its own.
private func keptVault(in workspace: String) throws -> String {
    let path = workspace + "/vault"
    let passphrase = secret("kept"), pin = secret("4321")
    let device = try Device.create(at: path, passphrase: passphrase, kdf: .min, biometricPIN: pin)
    let options = #"{"rp":{"id":"example.com","name":"E"},"user":{"id":"AQ","name":"u","displayName":"u"},"challenge":"AAAA","pubKeyCredParams":[{"type":"public-key","alg":-7}]}"#
    _ = try device.register(optionsJSON: Array(options.utf8), origin: "https://example.com", user: UserPolicy(pin: pin))
    return path
}

private func scenarioFile(_ text: String) -> String {
    let path = NSTemporaryDirectory() + "/scenario-\(UUID().uuidString).scn"
    #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
    return path
}

/// A workspace is the caller's empty directory: one that already holds something is refused before
/// anything runs, and a run never removes a vault it did not make — whatever `vault` there was,
/// a user's vault stays, every file of it.
@Test func aWorkspaceThatIsNotEmptyIsRefusedAndAVaultThereIsNeverRemoved() throws {
    let scratch = try TemporaryDirectory("workspace")
    let workspace = scratch.path
    let vault = try keptVault(in: workspace)
    let before = try FileManager.default.contentsOfDirectory(atPath: vault).sorted()
    let file = scenarioFile("device add phone pin 1111\nphone register user alice => ok\n")
    defer { try? FileManager.default.removeItem(atPath: file) }
    var options = ScenarioRunner.Options()
    options.environment = [:]
    options.workspace = workspace
    var refused: ScenarioError?
    do { _ = try ScenarioRunner.run(file: file, options: options) } catch { refused = error }
    #expect(refused?.message.contains("not empty") == true, "\(String(describing: refused))")
    #expect(try FileManager.default.contentsOfDirectory(atPath: vault).sorted() == before)
    let reopened = try Device.open(at: vault, passphrase: secret("kept"), access: .read)
    #expect(try reopened.credentials().count == 1)
}

/// An empty workspace is used, and the run's vault in it is removed afterwards, the directory left.
@Test func anEmptyWorkspaceKeepsOnlyItselfAfterTheRun() throws {
    let scratch = try TemporaryDirectory("workspace")
    let workspace = scratch.path
    let file = scenarioFile("device add phone pin 1111\nphone register user alice => ok\n")
    defer { try? FileManager.default.removeItem(atPath: file) }
    var options = ScenarioRunner.Options()
    options.environment = [:]
    options.workspace = workspace
    let report = try ScenarioRunner.run(file: file, options: options)
    #expect(report.passed, "\(report.failures)")
    #expect(FileManager.default.fileExists(atPath: workspace))
    #expect(try FileManager.default.contentsOfDirectory(atPath: workspace).isEmpty)
}

/// The run's vault is held (`Vault.Sharing.held`): its account is the only opener while the run
/// goes on — another account on it, reading or writing, is refused as busy at once and changes
/// nothing — and the run carries on after the refusals.
@Test func theRunsVaultIsHeldByTheRunAlone() throws {
    let scratch = try TemporaryDirectory("workspace")
    let workspace = scratch.path
    var options = ScenarioRunner.Options()
    options.environment = [:]
    options.workspace = workspace
    let runner = try ScenarioRunner(file: "held.scn", options: options)
    let parser = ScenarioParser(file: "held.scn", environment: [:])
    let first = try runner.run(parser.parse("device add phone pin 1111\nphone register user alice => ok\n"))
    #expect(first.passed, "\(first.failures)")
    let vault = workspace + "/vault"
    func contents() throws -> [String: Data] {
        var out = [String: Data]()
        for name in try FileManager.default.contentsOfDirectory(atPath: vault) {
            out[name] = try Data(contentsOf: URL(fileURLWithPath: vault + "/" + name))
        }
        return out
    }
    let before = try contents()
    for access in [Vault.Access.read, .write] {
        var refused: DeviceError?
        do { _ = try Account.open(at: vault, passphrase: secret("scenario"), access: access, waiting: Vault.Waiting(limit: .zero)) } catch {
            refused = error
        }
        #expect(refused?.code == .vaultBusy, "\(access): \(String(describing: refused))")
    }
    #expect(try contents() == before)
    let second = try runner.run(parser.parse("phone sign => ok\nphone holds => alice\n"))
    #expect(second.passed, "\(second.failures)")
}
