import Keychain

extension Session {
    /// How long opening a vault waits while another process holds it, and what the front end says
    /// once when it starts waiting (the command line's `--wait` and its notice).
    public struct Waiting {
        public var limit: Duration
        public var notice: () -> Void

        public init(limit: Duration = Vault.Waiting.defaultLimit, notice: @escaping () -> Void = {}) {
            self.limit = limit
            self.notice = notice
        }

        var vault: Vault.Waiting { Vault.Waiting(limit: limit, notice: notice) }
    }

    /// Opens the account of the vault at `path` for a front end: `.write` for ceremonies and
    /// changes (writers take turns, waiting as `waiting` says), `.read` to look. A writer that
    /// reads the whole vault before it changes it (`vault compact`, `vault passwd`, `sync
    /// rebuild`) opens `verifyingFirst`: every frame is read and authenticated before opening
    /// syncs with the store, so a damaged vault fails having written nothing (a reader writes
    /// nothing, and opens as usual). What the store checks found on the way is in ``warnings``.
    /// On `clock` (a virtual one) the account's time is the clock's, as a scenario's is.
    public static func open(at path: String, passphrase: SecureBytes, access: Vault.Access = .write, verifyingFirst: Bool = false,
                            waiting: Waiting = Waiting(), people: any People = Nobody(), clock: VirtualClock? = nil) throws(SessionError) -> Session {
        let wallClock = clock?.wallClock ?? .live
        do {
            let account = verifyingFirst && access == .write
                ? try Account.openVerified(at: path, passphrase: passphrase, waiting: waiting.vault, clock: wallClock)
                : try Account.open(at: path, passphrase: passphrase, access: access, waiting: waiting.vault, clock: wallClock)
            return Session(account: account, clock: clock, people: people)
        } catch { throw SessionError(error) }
    }

    /// How a joining device is let into the account (docs/sync.md, "Joining from another machine").
    public enum JoinApproval {
        /// By the account's recovery secret, read when it is needed: after the new vault's place
        /// and PIN are checked.
        case recoverySecret(() throws(SessionError) -> String)
        /// By an enrolled device's approval (`authctl device approve CODE`): the request is posted,
        /// its code given to `shown` (which the person reads it from), and the approval waited for
        /// up to `timeout`, or until `stop` says the person gave up (the request is withdrawn).
        case approval(timeout: Duration, shown: (String) throws(SessionError) -> Void, stop: () -> Bool)
    }

    /// Makes the vault of device `name` at `path`, joined to the account on the store at `store`
    /// as `approval` says, and opens a session on it with `people`. What joining would refuse
    /// after the approval (a vault there, a directory not empty, a PIN too short) is refused
    /// before anything is asked or posted; a join that fails leaves no vault. On `clock` (a
    /// virtual one) the new device's time is the clock's.
    public static func join(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive, store: String, name: String,
                            pin: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts, approval: JoinApproval,
                            people: any People = Nobody(), clock: VirtualClock? = nil) throws(SessionError) -> Session {
        do { try Account.checkNewVault(at: path, pin: pin) } catch { throw SessionError(error) }
        let keys: JoinedKeys
        switch approval {
        case .recoverySecret(let read):
            let secret = try read()
            do { keys = try RecoverySecret.keys(storePath: store, secret: secret, name: name) } catch { throw SessionError(error) }
        case .approval(let timeout, let shown, let stop):
            let request: JoinRequest
            do { request = try JoinRequest(storePath: store, deviceName: name, timeout: timeout) } catch { throw SessionError(error) }
            try shown(request.code)
            do { keys = try request.waitForApproval(stop: stop) } catch { throw SessionError(error) }
        }
        do {
            let account = try Account.join(at: path, passphrase: passphrase, kdf: kdf, storePath: store, name: name, keys: keys, pin: pin,
                                           maxPINAttempts: maxPINAttempts, clock: clock?.wallClock ?? .live)
            return Session(account: account, clock: clock, people: people)
        } catch { throw SessionError(error) }
    }
}
