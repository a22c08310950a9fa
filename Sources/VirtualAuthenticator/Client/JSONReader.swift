import Foundation

/// Typed, path-aware access to a parsed JSON object. Every failure is `badInput` and names the
/// member it was reading (`options.user.id: ...`), so a user can fix their input at once.
struct JSONReader {
    let object: [String: Any]
    let path: String

    init(object: [String: Any], path: String) {
        self.object = object
        self.path = path
    }

    /// Parses a JSON document whose top level must be an object.
    init(parsing bytes: [UInt8], path: String) throws(AuthenticatorError) {
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "not valid JSON"
            throw AuthenticatorError(.badInput, "\(path): malformed JSON (\(detail))")
        }
        guard let object = value as? [String: Any] else {
            throw AuthenticatorError(.badInput, "\(path): expected a JSON object at the top level")
        }
        self.init(object: object, path: path)
    }

    func has(_ key: String) -> Bool { object[key] != nil && !(object[key] is NSNull) }

    private func fail(_ key: String, _ expected: String) -> AuthenticatorError {
        AuthenticatorError(.badInput, "\(path).\(key): expected \(expected)")
    }

    func string(_ key: String) throws(AuthenticatorError) -> String {
        guard let s = object[key] as? String else {
            throw has(key) ? fail(key, "a string") : AuthenticatorError(.badInput, "\(path).\(key) is missing")
        }
        return s
    }

    func optionalString(_ key: String) throws(AuthenticatorError) -> String? {
        has(key) ? try string(key) : nil
    }

    func bytes(_ key: String) throws(AuthenticatorError) -> [UInt8] {
        guard let decoded = Base64URL.decode(try string(key)) else { throw fail(key, "base64url") }
        return decoded
    }

    func bool(_ key: String) throws(AuthenticatorError) -> Bool? {
        guard has(key) else { return nil }
        guard let n = object[key] as? NSNumber, Self.isBoolean(n) else { throw fail(key, "true or false") }
        return n.boolValue
    }

    func int(_ key: String) throws(AuthenticatorError) -> Int? {
        guard has(key) else { return nil }
        guard let n = object[key] as? NSNumber, !Self.isBoolean(n),
              let value = Int(exactly: n.doubleValue) else { throw fail(key, "an integer") }
        return value
    }

    /// JSON `true`/`false` come back as NSNumber with the `c` (char) type code; numbers never do.
    private static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    func reader(_ key: String) throws(AuthenticatorError) -> JSONReader {
        guard let o = object[key] as? [String: Any] else {
            throw has(key) ? fail(key, "an object") : AuthenticatorError(.badInput, "\(path).\(key) is missing")
        }
        return JSONReader(object: o, path: "\(path).\(key)")
    }

    func optionalReader(_ key: String) throws(AuthenticatorError) -> JSONReader? {
        has(key) ? try reader(key) : nil
    }

    /// A required array of strings.
    func strings(_ key: String) throws(AuthenticatorError) -> [String] {
        guard has(key) else { throw AuthenticatorError(.badInput, "\(path).\(key) is missing") }
        guard let array = object[key] as? [Any] else { throw fail(key, "an array") }
        var out = [String]()
        for (i, element) in array.enumerated() {
            guard let s = element as? String else { throw fail("\(key)[\(i)]", "a string") }
            out.append(s)
        }
        return out
    }

    func readers(_ key: String) throws(AuthenticatorError) -> [JSONReader] {
        guard has(key) else { return [] }
        guard let array = object[key] as? [Any] else { throw fail(key, "an array") }
        var out = [JSONReader]()
        for (i, element) in array.enumerated() {
            guard let o = element as? [String: Any] else { throw fail("\(key)[\(i)]", "an object") }
            out.append(JSONReader(object: o, path: "\(path).\(key)[\(i)]"))
        }
        return out
    }
}
