"""A small relying party over HTTP, written with py_webauthn, in the shape of the FIDO Alliance's
FIDO2 server conformance test API — an RP in another shape than docs/examples/rp_server.py, for
`authctl audit --preset fido-conformance` (docs/audit.md).

    python3 docs/examples/conformance_rp.py [--port 8767] [--origin https://localhost]
                                                       # prints "listening on http://127.0.0.1:PORT"

The origin is https://localhost, its host localhost the RP ID (--origin: another). Every endpoint
takes and returns JSON; the cookie `session` keeps the ceremony under way between its options and
its result. There is no password, login or account page: a user comes into being when
/attestation/options first names it.

    POST /attestation/options  ServerPublicKeyCredentialCreationOptionsRequest
                               {"username", "displayName", "authenticatorSelection", "attestation"}
                               -> {"status": "ok", "errorMessage": "", ...creation options}
    POST /attestation/result   ServerPublicKeyCredential (the response itself)  -> {"status": "ok", "errorMessage": ""}
    POST /assertion/options    {"username", "userVerification"}  -> {"status": "ok", "errorMessage": "", ...request options}
    POST /assertion/result     ServerPublicKeyCredential                        -> {"status": "ok", "errorMessage": ""}

A refusal is {"status": "failed", "errorMessage"}: 400 for what py_webauthn's docstrings say a
verify raises (InvalidRegistrationResponse, InvalidAuthenticationResponse) and for what this RP
refuses itself, 500 for any other exception, as a web framework answers one it was not told of.

The glue is what py_webauthn's examples show and no more: the options from
generate_registration_options / generate_authentication_options (the user's passkeys excluded,
and allowed), the challenge kept in the session and used once, verify_registration_response and
verify_authentication_response given the expected challenge, origin and RP ID and
require_user_verification when the request asked for `required`, the credential's public key and
sign count stored and the count updated. The credential is looked up among the named user's.
"""
import argparse
import json
import secrets
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from webauthn import (base64url_to_bytes, generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse
from webauthn.helpers.structs import (AttestationConveyancePreference, AuthenticatorAttachment, AuthenticatorSelectionCriteria,
                                      PublicKeyCredentialDescriptor, ResidentKeyRequirement, UserVerificationRequirement)

ORIGIN = "https://localhost"
MAX_BODY = 1 << 20
COOKIE = "session"


class Failed(Exception):
    """A request the RP refuses: its HTTP status and the errorMessage it names."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Users:
    """Users, their credentials and the sessions, behind one lock (requests are served on threads)."""

    def __init__(self):
        # username -> {"id": user handle, "displayName", "credentials": {credential id: {"public_key", "sign_count"}}}
        self.users = {}
        # sid -> {"pending": {"ceremony", "username", "challenge", "uv"} or None}
        self.sessions = {}
        self.lock = threading.Lock()


def text(body: dict, name: str, default=None) -> str:
    value = body.get(name, default)
    if not isinstance(value, str) or not value:
        raise Failed(400, f"{name} is a non-empty string")
    return value


def choice(kind, value, name: str):
    """A WebAuthn enumeration's value from the request (py_webauthn's enum), or a 400."""
    try:
        return kind(value)
    except ValueError:
        raise Failed(400, f"{name} is not one of {[k.value for k in kind]}")


def selection(body: dict) -> AuthenticatorSelectionCriteria:
    criteria = body.get("authenticatorSelection") or {}
    if not isinstance(criteria, dict):
        raise Failed(400, "authenticatorSelection is an object")
    out = AuthenticatorSelectionCriteria(user_verification=choice(UserVerificationRequirement, criteria.get("userVerification", "preferred"),
                                                                  "authenticatorSelection.userVerification"))
    if "authenticatorAttachment" in criteria:
        out.authenticator_attachment = choice(AuthenticatorAttachment, criteria["authenticatorAttachment"], "authenticatorSelection.authenticatorAttachment")
    if "residentKey" in criteria:
        out.resident_key = choice(ResidentKeyRequirement, criteria["residentKey"], "authenticatorSelection.residentKey")
    if "requireResidentKey" in criteria:
        if not isinstance(criteria["requireResidentKey"], bool):
            raise Failed(400, "authenticatorSelection.requireResidentKey is true or false")
        out.require_resident_key = criteria["requireResidentKey"]
    return out


class Handler(BaseHTTPRequestHandler):
    users: Users
    origin: str
    rp_id: str

    def log_message(self, *args):  # quiet
        pass

    def reply(self, status: int, body: dict, sid: str | None = None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        if sid:
            self.send_header("Set-Cookie", f"{COOKIE}={sid}; Path=/; HttpOnly; SameSite=Strict")
        self.end_headers()
        self.wfile.write(data)

    def session(self):
        """The session the cookie names, or a new one (whose cookie the answer sets)."""
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and value in self.users.sessions:
                return value, self.users.sessions[value], False
        sid = secrets.token_urlsafe(16)
        self.users.sessions[sid] = {"pending": None}
        return sid, self.users.sessions[sid], True

    def body(self):
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise Failed(400, "Content-Length is not a number")
        if not 0 <= length <= MAX_BODY:
            raise Failed(400, f"a body is 0 to {MAX_BODY} bytes")
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, UnicodeDecodeError):
            raise Failed(400, "the body is not JSON")
        if not isinstance(body, dict):
            raise Failed(400, "the body is not a JSON object")
        return body

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        route = ROUTES.get(path)
        if route is None:
            return self.reply(404, {"status": "failed", "errorMessage": f"no endpoint {path}"})
        sid = None
        try:
            body = self.body()
            with self.users.lock:
                sid, session, new = self.session()
                answer = route(self, body, session)
            return self.reply(200, {"status": "ok", "errorMessage": "", **answer}, sid if new else None)
        except (Failed, InvalidRegistrationResponse, InvalidAuthenticationResponse) as error:
            # What the RP refuses, and what py_webauthn's docstrings say a verify raises.
            return self.reply(getattr(error, "status", 400), {"status": "failed", "errorMessage": str(error) or type(error).__name__})
        except Exception as error:  # anything else, as a framework answers an unhandled exception
            return self.reply(500, {"status": "failed", "errorMessage": f"{type(error).__name__}: {error}"})

    def attestation_options(self, body, session):
        username, display_name = text(body, "username"), text(body, "displayName")
        criteria = selection(body)
        attestation = choice(AttestationConveyancePreference, body.get("attestation", "none"), "attestation")
        user = self.users.users.setdefault(username, {"id": secrets.token_bytes(16), "displayName": display_name, "credentials": {}})
        options = generate_registration_options(
            rp_id=self.rp_id, rp_name="conformance example", user_id=user["id"], user_name=username, user_display_name=display_name,
            attestation=attestation, authenticator_selection=criteria,
            exclude_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in user["credentials"]])
        session["pending"] = {"ceremony": "attestation", "username": username, "challenge": options.challenge,
                              "uv": criteria.user_verification == UserVerificationRequirement.REQUIRED}
        return json.loads(options_to_json(options))

    def attestation_result(self, body, session):
        pending = take_pending(session, "attestation")
        verified = verify_registration_response(credential=body, expected_challenge=pending["challenge"], expected_origin=self.origin,
                                                expected_rp_id=self.rp_id, require_user_verification=pending["uv"])
        user = self.users.users[pending["username"]]
        user["credentials"][bytes_to_base64url(verified.credential_id)] = {"public_key": verified.credential_public_key,
                                                                             "sign_count": verified.sign_count}
        return {}

    def assertion_options(self, body, session):
        username = text(body, "username")
        uv = choice(UserVerificationRequirement, body.get("userVerification", "preferred"), "userVerification")
        user = self.users.users.get(username)
        if user is None:
            raise Failed(400, "User does not exist!")
        options = generate_authentication_options(
            rp_id=self.rp_id, user_verification=uv,
            allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in user["credentials"]])
        session["pending"] = {"ceremony": "assertion", "username": username, "challenge": options.challenge,
                              "uv": uv == UserVerificationRequirement.REQUIRED}
        return json.loads(options_to_json(options))

    def assertion_result(self, body, session):
        pending = take_pending(session, "assertion")
        stored = self.users.users[pending["username"]]["credentials"].get(body.get("id"))
        if stored is None:
            raise Failed(400, f"{pending['username']} has no such credential")
        verified = verify_authentication_response(credential=body, expected_challenge=pending["challenge"], expected_rp_id=self.rp_id,
                                                  expected_origin=self.origin, credential_public_key=stored["public_key"],
                                                  credential_current_sign_count=stored["sign_count"],
                                                  require_user_verification=pending["uv"])
        stored["sign_count"] = verified.new_sign_count
        return {}


def take_pending(session, ceremony: str) -> dict:
    """The ceremony the last options call began, used up whatever the result's outcome; a result
    without one, or after the other ceremony's options, is refused."""
    pending, session["pending"] = session["pending"], None
    if not pending or pending["ceremony"] != ceremony:
        raise Failed(400, f"no {ceremony} in progress: ask for options first")
    return pending


ROUTES = {
    "/attestation/options": Handler.attestation_options,
    "/attestation/result": Handler.attestation_result,
    "/assertion/options": Handler.assertion_options,
    "/assertion/result": Handler.assertion_result,
}


def serve(port: int = 0, origin: str = ORIGIN) -> ThreadingHTTPServer:
    """The RP on 127.0.0.1:`port`, for pages at `origin` (its host the RP ID)."""
    handler = type("ConformanceHandler", (Handler,), {"users": Users(), "origin": origin, "rp_id": urllib.parse.urlsplit(origin).hostname})
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--origin", default=ORIGIN, help="the origin the RP's pages have (its host is the RP ID)")
    arguments = parser.parse_args()
    server = serve(arguments.port, arguments.origin)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
