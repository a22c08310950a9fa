#!/usr/bin/env bash
# The main job, start to finish: set up, build, then create a throw-away vault, register a passkey
# for https://example.com, sign in with it, and check the signature with the openssl command line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

authctl=.build/debug/authctl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export AUTHCTL_VAULT="$work/vault" AUTHCTL_PASSPHRASE="demo passphrase" AUTHCTL_PIN="1234"
b64url_decode() { python3 -c 'import base64,sys; s=sys.argv[1]; sys.stdout.buffer.write(base64.urlsafe_b64decode(s+"="*(-len(s)%4)))' "$1"; }
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$1" "$2"; }

echo "== authctl init (a vault in $AUTHCTL_VAULT, biometric PIN 1234)"
$authctl init

# The label names what the default profile sends, as authctl itself reports it.
profile=$($authctl --json profiles | python3 -c 'import json,sys; p=next(p for p in json.load(sys.stdin) if p["isDefault"]); print(p["name"], "profile, attestation", repr(p["attestation"]))')
echo; echo "== authctl register: a passkey for alice at example.com ($profile)"
$authctl register --origin https://example.com --rp-id example.com --user-name alice \
  --attestation direct --user-verification required > "$work/registration.json"
python3 -m json.tool "$work/registration.json"

echo; echo "== authctl list"
$authctl list

echo; echo "== authctl sign: sign in to example.com with that passkey"
$authctl sign --origin https://example.com --rp-id example.com --user-verification required > "$work/assertion.json"
python3 -m json.tool "$work/assertion.json"

echo; echo "== an independent check: openssl verifies the assertion signature"
b64url_decode "$(field "$work/registration.json" '["response"]["publicKey"]')" > "$work/key.der"
openssl pkey -pubin -inform DER -in "$work/key.der" -out "$work/key.pem"
b64url_decode "$(field "$work/assertion.json" '["response"]["authenticatorData"]')" > "$work/signed"
b64url_decode "$(field "$work/assertion.json" '["response"]["clientDataJSON"]')" | openssl dgst -sha256 -binary >> "$work/signed"
b64url_decode "$(field "$work/assertion.json" '["response"]["signature"]')" > "$work/sig"
openssl dgst -sha256 -verify "$work/key.pem" -signature "$work/sig" "$work/signed"

echo; echo "== a wrong biometric PIN is refused (exit code 11, error 'failed')"
set +e
AUTHCTL_PIN=0000 $authctl sign --origin https://example.com --user-verification required
echo "exit code: $?"
