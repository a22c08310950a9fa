#!/usr/bin/env bash
# The banking flow of the seed guide, scripted: register a passkey, sign in, re-verify with Face ID
# (the biometric PIN) before a transfer, and lock biometry out with repeated wrong PINs.
# Needs: authctl (AUTHCTL, default: .build/debug/authctl) and python3 with py_webauthn (PYTHON).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
authctl=${AUTHCTL:-$here/../../.build/debug/authctl}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export AUTHCTL_VAULT="$work/vault" AUTHCTL_PASSPHRASE="phone passcode" AUTHCTL_PIN="2468"
bank() { "$python" "$here/bank_server.py" "$work/bank.json" "$@"; }
origin=https://yourbank.com

"$authctl" init --kdf min --max-pin-attempts 3

echo "1. Enrol a passkey (the bank requires Face ID)"
bank begin-register | "$authctl" register --origin $origin --options - | bank finish-register

echo "2. Sign in with the passkey"
bank begin-login | "$authctl" sign --origin $origin --options - | bank finish-login

echo "3. Re-verify for a transfer: Face ID required"
bank begin-transfer | "$authctl" sign --origin $origin --options - | bank finish-transfer

echo "4. The bank refuses a transfer whose response claims Face ID the phone never checked"
if bank begin-transfer | "$authctl" sign --origin $origin --options - --fault uv-claimed-without-check 2>/dev/null \
    | bank finish-transfer; then echo "unexpected: accepted"; exit 1; fi

echo "5. Someone else's face, three times: Face ID locks out"
for attempt in 1 2 3; do
  bank begin-transfer | AUTHCTL_PIN=1111 "$authctl" sign --origin $origin --options - > /dev/null \
    && { echo "unexpected: signed"; exit 1; } || echo "   attempt $attempt: exit $? (failed)"
done
set +e
bank begin-transfer | "$authctl" sign --origin $origin --options - > /dev/null
echo "   with the right PIN now: exit $? (biometryLockout)"
set -e

echo "6. The passcode (vault passphrase) unlocks biometry; the transfer goes through"
"$authctl" biometry unlock
bank begin-transfer | "$authctl" sign --origin $origin --options - | bank finish-transfer
