import Session

/// `/accounts/{account}/sync`: what is in flight per device, and the sync settings (delays, their
/// seed, BS before an upload lands).
extension AccountService {
    func addSyncRoutes(to router: inout Router<AccountService>) {
        router.add("GET", "/accounts/{account}/sync") { s, call throws(Problem) in
            try s.onAccount(call) { hosted throws(Problem) in
                .encoded(200, try session { () throws(SessionError) in try hosted.session.syncStatus() })
            }
        }
        router.add("PUT", "/accounts/{account}/sync", body: Body.SyncSettings.self) { s, call, body throws(Problem) in
            try s.onAccount(call) { hosted throws(Problem) in
                if let device = body.device, !hosted.session.deviceNames.contains(device) {
                    throw Problem.notFound("account \(JSONText.shown(hosted.id)) has no device \(JSONText.shown(device))")
                }
                try Self.applySync(body, to: hosted)
                return .encoded(200, try session { () throws(SessionError) in try hosted.session.syncStatus() })
            }
        }
    }
}
