/// `authctl help`.
enum HelpCommand {
    static let version = "0.1.0"

    static func run() {
        Output.data("""
        authctl \(version) — a software platform authenticator (passkeys) for RP developers

        usage: authctl [--json] COMMAND [OPTIONS]

          init      create a vault and enroll the biometric PIN  [--kdf min|interactive|moderate|sensitive] [--no-biometry]
                    [--max-pin-attempts N]
          register  create a passkey: --origin URL [--options FILE|-] or [--rp-id ID --user-name N --user-id B64URL
                    --display-name N --challenge B64URL --attestation none|direct --user-verification V --exclude ID...]
                    [--device-bound] [--sign-counter]
          sign      sign in: --origin URL [--options FILE|-] or [--rp-id ID --challenge B64URL --allow ID...
                    --user-verification V]  [--credential ID | --user NAME]
          list      list passkeys  [--rp-id ID]   (with --json: JSON for scripts)
          delete    delete a passkey: authctl delete CREDENTIAL_ID
          biometry  status | unlock | enroll [--new-pin-file F] [--reset]
          faults    list what --fault NAME can break
          vault     info | check | compact | passwd [--new-passphrase-file F] [--kdf LEVEL]
          bench     vault [--sizes 10,1000,100000] [--runs N]   (build with -c release)

        register and sign also take: --user-action approve|cancel|timeout|wrong-pin  --instant-timeout  --fault NAME

        vault options (every command):
          --vault DIR             default $AUTHCTL_VAULT, else $XDG_DATA_HOME/authctl, else ~/.local/share/authctl
          --passphrase-file F     default $AUTHCTL_PASSPHRASE, else a prompt on a terminal
          --pin-file F            the biometric PIN; default $AUTHCTL_PIN, else a prompt on a terminal

        --json   errors as a JSON object on stderr (name, DOMException, Apple code, CTAP2 status, exit code)
        Responses go to stdout as one line of JSON; everything else goes to stderr. See docs/cli.md.
        """)
    }
}
