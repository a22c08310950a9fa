import Foundation
import Keychain
import Scenarios
import Session
import Testing
import VirtualAuthenticator

/// The command line's defaults: an RP named as its ID (`authctl` without one), ES256 then RS256,
/// a discoverable credential, credProps asked, 16 random bytes of user id and 32 of challenge.
@Test func theCreationBuilderWritesTheCommandLinesDefaults() throws {
    var draws = [Int]()
    let json = CreationOptionsBuilder().json { count in
        draws.append(count)
        return [UInt8](repeating: UInt8(count), count: count)
    }
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
    #expect(draws == [16, 32])
    #expect((object["rp"] as? [String: String]) == ["name": "authctl"])
    #expect((object["pubKeyCredParams"] as? [[String: Any]])?.compactMap { $0["alg"] as? Int } == [-7, -257])
    #expect((object["extensions"] as? [String: Bool]) == ["credProps": true])
    #expect(object["timeout"] == nil)
    let user = try #require(object["user"] as? [String: String])
    #expect(user["id"] == Base64URL.encode([UInt8](repeating: 16, count: 16)) && user["name"] == "user" && user["displayName"] == "user")
    // What is given is not drawn.
    draws = []
    _ = RequestOptionsBuilder(challenge: [1, 2, 3]).json { draws.append($0); return [] }
    #expect(draws.isEmpty)
}

/// Built options draw nothing from the account's seeded stream: a sign-in with built options
/// (one that fails, writing nothing) before a registration leaves the registration's credential
/// id as it was; the seeded challenge stream repeats run after run.
@Test func builtOptionsLeaveTheAccountsSeededStreamAlone() throws {
    func registration(signFirst: Bool) throws -> (id: [UInt8], json: String) {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { ScenarioRunner.removeWorkspace(directory) }
        var passphrase = Array("p".utf8)
        let account = try Account.create(at: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                         biometricPIN: nil, random: .seeded(9))
        let session = Session(account: account, builtOptions: .seeded(9))
        let caller = CallerContext(origin: "https://example.com")
        if signFirst {
            #expect(throws: SessionError.self) { try session.sign(SignRequest(caller: caller, options: .built(RequestOptionsBuilder()))) }
        }
        let made = try session.register(RegisterRequest(caller: caller, options: .built(CreationOptionsBuilder(userId: [7]))))
        return (made.credential.id, made.json)
    }
    let plain = try registration(signFirst: false), again = try registration(signFirst: false)
    let afterSign = try registration(signFirst: true)
    #expect(plain.id == again.id && plain.id == afterSign.id)
    // The challenge is the stream's: the same in both runs without the sign-in, the next one after it.
    let challenge = { (json: String) in
        ((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any]).flatMap { ($0["response"] as? [String: Any])?["clientDataJSON"] as? String }
    }
    #expect(challenge(plain.json) == challenge(again.json) && challenge(plain.json) != challenge(afterSign.json))
}
