"""A toy bank's WebAuthn endpoints, written with py_webauthn, for the banking example.

Each call is one HTTP endpoint's work; state (challenges, the registered passkey) lives in a JSON
file, as a real server keeps it in a session store and a database.

    python3 bank_server.py STATE begin-register            -> creation options JSON
    python3 bank_server.py STATE finish-register  < resp   -> "registered"
    python3 bank_server.py STATE begin-login               -> request options JSON (discoverable)
    python3 bank_server.py STATE finish-login     < resp   -> "welcome …"
    python3 bank_server.py STATE begin-transfer            -> request options JSON, UV required
    python3 bank_server.py STATE finish-transfer  < resp   -> "transfer approved"
Exit status 1 with the library's message when the server refuses.
"""
import base64
import json
import pathlib
import sys

from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, ResidentKeyRequirement,
                                      UserVerificationRequirement)

RP_ID, ORIGIN = "yourbank.com", "https://yourbank.com"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def main(state_path: str, step: str) -> str:
    # A finish step reads the browser's response first: in a shell pipeline it runs alongside the
    # begin step, whose state is only complete once the response has come through.
    body = sys.stdin.read() if step.startswith("finish") else ""
    path = pathlib.Path(state_path)
    state = json.loads(path.read_text()) if path.exists() else {}
    if step == "begin-register":
        options = generate_registration_options(
            rp_id=RP_ID, rp_name="Your Bank", user_name="budi@yourbank.com", user_id=b"customer-0042",
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.REQUIRED))
        state["challenge"] = b64(options.challenge)
        out = options_to_json(options)
    elif step == "finish-register":
        verified = verify_registration_response(credential=body, expected_challenge=unb64(state["challenge"]),
                                                expected_rp_id=RP_ID, expected_origin=ORIGIN, require_user_verification=True)
        state["credential"] = {"id": b64(verified.credential_id), "key": b64(verified.credential_public_key),
                               "count": verified.sign_count}
        out = "registered"
    elif step in ("begin-login", "begin-transfer"):
        # Login is discoverable and lets the phone decide; a transfer insists on Face ID.
        uv = UserVerificationRequirement.REQUIRED if step == "begin-transfer" else UserVerificationRequirement.PREFERRED
        options = generate_authentication_options(rp_id=RP_ID, user_verification=uv)
        state["challenge"], state["uv"] = b64(options.challenge), uv.value
        out = options_to_json(options)
    elif step in ("finish-login", "finish-transfer"):
        credential = state["credential"]
        verified = verify_authentication_response(
            credential=body, expected_challenge=unb64(state["challenge"]), expected_rp_id=RP_ID,
            expected_origin=ORIGIN, credential_public_key=unb64(credential["key"]),
            credential_current_sign_count=credential["count"], require_user_verification=state["uv"] == "required")
        credential["count"] = verified.new_sign_count
        out = "welcome, budi" if step == "finish-login" else "transfer approved (user verified)"
    else:
        raise SystemExit(f"unknown step {step}")
    path.write_text(json.dumps(state))
    return out


if __name__ == "__main__":
    try:
        print(main(sys.argv[1], sys.argv[2]))
    except Exception as error:  # the server's refusal, as an HTTP 4xx would carry it
        print(f"bank refused: {error}", file=sys.stderr)
        sys.exit(1)
