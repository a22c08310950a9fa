import Session

/// `/accounts/{account}/devices`: adding, reading, changing and removing an account's devices;
/// a device's PIN, profile, capabilities and signals.
extension AccountService {
    func addDeviceRoutes(to router: inout Router<AccountService>) {
        router.add("GET", "/accounts/{account}/devices") { s, call throws(Problem) in
            try s.onAccount(call) { hosted throws(Problem) in .encoded(200, DeviceListReport(try AccountReport(hosted).devices)) }
        }
        router.add("POST", "/accounts/{account}/devices", body: Body.NewDevice.self) { s, call, body throws(Problem) in
            let spec = try DeviceSpec(body)
            return try s.onAccount(call) { hosted throws(Problem) in
                // A device with a PIN is approved on an enrolled device (as a new phone is): the one
                // named, else the session's default.
                try session { () throws(SessionError) in
                    try hosted.session.addDevice(spec.name, pin: spec.pin.map(Self.secret), maxPINAttempts: spec.maxPINAttempts,
                                                 approvedBy: spec.approvedBy, approverPerson: PersonRequest(pin: spec.approverPin),
                                                 profile: spec.profile, aaguid: spec.aaguid)
                }
                hosted.setPIN(spec.pin, device: spec.name)
                var answer = HTTPResponse.encoded(201, try Self.device(spec.name, in: hosted))
                answer.headers = [("Location", "/accounts/\(hosted.id)/devices/\(spec.name)")]
                return answer
            }
        }
        router.add("GET", "/accounts/{account}/devices/{device}") { s, call throws(Problem) in
            try s.onDevice(call) { hosted, device throws(Problem) in .encoded(200, try Self.device(device, in: hosted)) }
        }
        router.add("DELETE", "/accounts/{account}/devices/{device}") { s, call throws(Problem) in
            try s.onDevice(call) { hosted, device throws(Problem) in
                try session { () throws(SessionError) in try hosted.session.change(.remove, device: device) }
                // Nothing of it is left for a device added later under its name.
                hosted.setPIN(nil, device: device)
                hosted.people.clear(device: device)
                hosted.autofill.end(device: device)
                return .noContent
            }
        }
        let changes: [(String, DeviceChange)] = [("offline", .offline), ("online", .online), ("reset", .reset), ("unlock", .unlockBiometry),
                                                 ("unsupported", .passkeysSupported(false)), ("supported", .passkeysSupported(true))]
        for (verb, change) in changes {
            router.add("POST", "/accounts/{account}/devices/{device}/\(verb)", body: Body.NoMembers.self) { s, call, _ throws(Problem) in
                try s.onDevice(call) { hosted, device throws(Problem) in
                    try session { () throws(SessionError) in try hosted.session.change(change, device: device) }
                    if change == .reset { hosted.setPIN(nil, device: device) }
                    return .encoded(200, try Self.device(device, in: hosted))
                }
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/pin", body: Body.PINRequest.self) { s, call, body throws(Problem) in
            let pin = body.pin
            let current = body.currentPin, reset = body.reset ?? false
            let approver = body.approvedBy, approverPin = body.approverPin
            return try s.onDevice(call) { hosted, device throws(Problem) in
                // A device without a PIN (or resetting its biometry) is approved on an enrolled one: the
                // one named, else the session's default.
                let deleted = try session { () throws(SessionError) in
                    try hosted.session.enrollPIN(Self.secret(pin), device: device, person: PersonRequest(pin: current), reset: reset,
                                                 approvedBy: approver, approverPerson: PersonRequest(pin: approverPin))
                }
                hosted.setPIN(pin, device: device)
                return .encoded(200, PINReport(device: try Self.device(device, in: hosted), deletedPasskeys: deleted))
            }
        }
        router.add("PUT", "/accounts/{account}/devices/{device}/profile", body: Body.ProfileRequest.self) { s, call, body throws(Problem) in
            let profile = body.profile
            let aaguid = try body.aaguid.map { text throws(Problem) in try DeviceSpec.aaguid(text) }
            return try s.onDevice(call) { hosted, device throws(Problem) in
                try session { () throws(SessionError) in try hosted.session.setProfile(profile, aaguid: aaguid, device: device) }
                return .encoded(200, try Self.device(device, in: hosted))
            }
        }
        router.add("GET", "/accounts/{account}/devices/{device}/capabilities") { s, call throws(Problem) in
            try s.onDevice(call) { hosted, device throws(Problem) in
                .encoded(200, CapabilitiesReport(try session { () throws(SessionError) in try hosted.session.capabilities(device: device) }))
            }
        }
        let signals: [(String, Signal.Kind)] = [("unknownCredential", .unknownCredential), ("allAcceptedCredentials", .allAcceptedCredentials),
                                                ("currentUserDetails", .currentUserDetails)]
        for (name, kind) in signals {
            router.add("POST", "/accounts/{account}/devices/{device}/signals/\(name)", body: Body.SignalRequest.self) { s, call, body throws(Problem) in
                let options = body.options.bytes, origin = body.origin
                return try s.onDevice(call) { hosted, device throws(Problem) in
                    let effect = try session { () throws(SessionError) in
                        try hosted.session.signal(device: device, kind, optionsJSON: options, origin: origin)
                    }
                    let now = hosted.now
                    for c in effect.removed { hosted.events.emit(.credentialDeleted, CredentialEventData(device: device, c, time: now)) }
                    for c in effect.hidden + effect.restored + effect.updated {
                        hosted.events.emit(.credentialUpdated, CredentialEventData(device: device, c, time: now))
                    }
                    return .encoded(200, SignalReport(effect))
                }
            }
        }
    }

    /// Device `name` of `hosted` as every front end reports it.
    static func device(_ name: String, in hosted: HostedAccount) throws(Problem) -> DeviceReport {
        try session { () throws(SessionError) in try hosted.session.deviceReport(name) }
    }

    /// Runs `body` on the account the path names, alone.
    func onAccount(_ call: Router<AccountService>.Call, _ body: (HostedAccount) throws(Problem) -> HTTPResponse) throws(Problem) -> HTTPResponse {
        let hosted = try hosted(call.parameter("account"))
        return try hosted.serve { () throws(Problem) in try body(hosted).warning(hosted.session.takeWarnings()) }
    }

    /// Runs `body` on the account and device the path names (`404` when the device is not one of
    /// the account's).
    func onDevice(_ call: Router<AccountService>.Call, _ body: (HostedAccount, String) throws(Problem) -> HTTPResponse) throws(Problem) -> HTTPResponse {
        let device = call.parameter("device")
        return try onAccount(call) { hosted throws(Problem) in
            guard hosted.session.deviceNames.contains(device) else {
                throw Problem.notFound("account \(JSONText.shown(hosted.id)) has no device \(JSONText.shown(device))")
            }
            return try body(hosted, device)
        }
    }
}

/// A new PIN: the device, and how many passkeys a reset of its biometry key deleted.
struct PINReport: Encodable {
    let device: DeviceReport
    let deletedPasskeys: Int
}
