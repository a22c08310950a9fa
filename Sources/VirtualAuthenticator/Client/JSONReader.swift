import Foundation

/// Reads one IDL dictionary of the options JSON the way a browser converts the page's object
/// (WebIDL §3.2.18, through ``WebIDL``), then decodes its base64url members as
/// `parseCreationOptionsFromJSON()` / `parseRequestOptionsFromJSON()` do (WebAuthn L3 §5.1.8,
/// §5.1.9). Every failure names the member it was reading (`options.user.id: ...`).
///
/// Order matters as in the browser: the whole conversion happens before any decoding, so a
/// TypeError (`badInput`) anywhere wins over an EncodingError (`encodingError`). A bad base64url
/// value is therefore only noted while converting, in the ``Decoding`` shared by the readers of one
/// document, and thrown by ``finish()`` once conversion is over.
package struct JSONReader {
    let object: [String: Any]
    let path: String
    let decoding: Decoding

    /// The first base64url failure of a document, thrown once its conversion is over; whether
    /// to refuse what Chromium accepts (``CallerContext/strict``), and the warnings for what was
    /// accepted that way.
    final class Decoding {
        var failure: AuthenticatorError?
        var strict = false
        var warnings = [String]()
    }

    init(object: [String: Any], path: String, decoding: Decoding = Decoding()) {
        self.object = object
        self.path = path
        self.decoding = decoding
    }

    /// Parses a JSON document whose top level must be an object.
    init(parsing bytes: [UInt8], path: String, strict: Bool = false) throws(AuthenticatorError) {
        let decoding = Decoding()
        decoding.strict = strict
        if let object = JSONInput.object(bytes) {
            self.init(object: object, path: path, decoding: decoding)
            return
        }
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "not valid JSON"
            // Foundation's words can quote the input (a number it cannot represent): cut as any echo.
            throw AuthenticatorError(.badInput, "\(path): malformed JSON (\(EchoedInput.words(detail)))")
        }
        guard let object = value as? [String: Any] else {
            throw AuthenticatorError(.badInput, "\(path): expected a JSON object at the top level")
        }
        self.init(object: object, path: path, decoding: decoding)
    }

    /// Whether the member is present. `null` is present: WebIDL converts every value but
    /// `undefined`, which JSON cannot write (`"rpId": null` is the RP ID `"null"`).
    func has(_ key: String) -> Bool { object[key] != nil }

    private func member(_ key: String) -> String { "\(path).\(key)" }

    private func required(_ key: String) throws(AuthenticatorError) -> Any {
        guard let value = object[key] else { throw WebIDL.missing(member(key)) }
        return value
    }

    /// Throws the first base64url failure of the document, once conversion is over.
    func finish() throws(AuthenticatorError) {
        if let failure = decoding.failure { throw failure }
    }

    // MARK: - DOMString, boolean, integers

    /// A `required DOMString` member.
    func string(_ key: String) throws(AuthenticatorError) -> String {
        WebIDL.domString(try required(key))
    }

    /// A `DOMString` member.
    func optionalString(_ key: String) -> String? {
        object[key].map(WebIDL.domString)
    }

    /// A `boolean` member (ToBoolean: never an error).
    func bool(_ key: String) -> Bool? {
        object[key].map(WebIDL.boolean)
    }

    /// An `unsigned long` member.
    func unsignedLong(_ key: String) -> UInt32? {
        object[key].map(WebIDL.unsignedLong)
    }

    /// A `required long` member (COSEAlgorithmIdentifier).
    func long(_ key: String) throws(AuthenticatorError) -> Int32 {
        WebIDL.long(try required(key))
    }

    // MARK: - Base64URLString

    /// A `required Base64URLString` member, decoded (an empty array stands in for a value that
    /// does not decode; ``finish()`` throws its EncodingError).
    func bytes(_ key: String) throws(AuthenticatorError) -> [UInt8] {
        decode(try string(key), at: self.member(key))
    }

    /// A `Base64URLString` member, decoded.
    func optionalBytes(_ key: String) -> [UInt8]? {
        optionalString(key).map { decode($0, at: self.member(key)) }
    }

    /// Whether to refuse what Chromium accepts with a warning (``CallerContext/strict``).
    var strict: Bool { decoding.strict }

    /// Notes what the browser accepts but the RP should not send: a warning, or with
    /// ``strict`` the error `refusal` (thrown once conversion is over, as the first failure).
    func accept(_ warning: String, unlessStrict refusal: @autoclosure () -> AuthenticatorError) throws(AuthenticatorError) {
        if strict { throw refusal() }
        decoding.warnings.append(warning)
    }

    /// The warnings of the document so far.
    var warnings: [String] { decoding.warnings }

    /// `text` decoded as base64url; a failure is noted for ``finish()``. A last character with
    /// non-zero unused bits is read as Chromium reads it (the canonical bytes) with a warning,
    /// unless ``strict``.
    func decode(_ text: String, at path: @autoclosure () -> String) -> [UInt8] {
        if let bytes = Base64URL.decodeStrict(text) { return bytes }
        if !strict, let bytes = Base64URL.decodeIgnoringTrailingBits(text) {
            decoding.warnings.append("\(path()): '\(Self.tail(text))' has non-zero trailing bits; read as '\(Self.tail(Base64URL.encode(bytes)))', "
                + "its canonical form, as the browser does (the RP should encode its bytes canonically)")
            return bytes
        }
        if decoding.failure == nil, Base64URL.decodeIgnoringTrailingBits(text) != nil {
            decoding.failure = AuthenticatorError(.encodingError,
                "\(path()): '\(Self.tail(text))' has non-zero trailing bits (refused with --strict) (EncodingError)")
        }
        if decoding.failure == nil {
            decoding.failure = AuthenticatorError(.encodingError,
                "\(path()): '\(EchoedInput.text(text))' is not unpadded base64url (A-Z a-z 0-9 - _ only) (EncodingError)")
        }
        return []
    }

    /// A base64url text short enough for a message: whole up to 64 characters, else its end
    /// (where a trailing-bits difference is).
    static func tail(_ text: String) -> String { text.count <= 64 ? text : "…" + text.suffix(60) }

    // MARK: - Dictionaries, sequences, records

    /// A `required` dictionary member.
    func reader(_ key: String) throws(AuthenticatorError) -> JSONReader {
        try dictionary(try required(key), path: member(key))
    }

    /// A dictionary member (`null` is the empty dictionary).
    func optionalReader(_ key: String) throws(AuthenticatorError) -> JSONReader? {
        guard let value = object[key] else { return nil }
        return try dictionary(value, path: member(key))
    }

    /// A `sequence<T>` member: its elements, `nil` when absent.
    func sequence(_ key: String) throws(AuthenticatorError) -> [Any]? {
        guard let value = object[key] else { return nil }
        return try WebIDL.sequence(value, path: member(key))
    }

    /// A `sequence<dictionary>` member: a reader per element (empty when absent).
    func readers(_ key: String) throws(AuthenticatorError) -> [JSONReader] {
        var out = [JSONReader]()
        for (i, element) in (try sequence(key) ?? []).enumerated() {
            out.append(try dictionary(element, path: "\(member(key))[\(i)]"))
        }
        return out
    }

    /// A `sequence<DOMString>` member (empty when absent).
    func strings(_ key: String) throws(AuthenticatorError) -> [String] {
        (try sequence(key) ?? []).map(WebIDL.domString)
    }

    /// A `record<DOMString, dictionary>` member: its keys with a reader each, `nil` when absent.
    func records(_ key: String) throws(AuthenticatorError) -> [(key: String, reader: JSONReader)]? {
        guard let value = object[key] else { return nil }
        var out = [(key: String, reader: JSONReader)]()
        for (name, element) in try WebIDL.record(value, path: member(key)) {
            out.append((name, try dictionary(element, path: "\(member(key))[\(name)]")))
        }
        return out
    }

    private func dictionary(_ value: Any, path: String) throws(AuthenticatorError) -> JSONReader {
        JSONReader(object: try WebIDL.dictionary(value, path: path), path: path, decoding: decoding)
    }
}
