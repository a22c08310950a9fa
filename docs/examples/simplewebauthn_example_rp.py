"""A small relying party over HTTP, written with py_webauthn, in the shape of SimpleWebAuthn's
example server (MasterKale/SimpleWebAuthn, example/index.ts) — the RP most apps start from, for
`authctl audit --preset simplewebauthn-example` (docs/audit.md).

    python3 docs/examples/simplewebauthn_example_rp.py [--port 8000] [--origin http://localhost:8000]
                                                       # prints "listening on http://127.0.0.1:PORT"

The origin is http://localhost:8000 (the example's expectedOrigin without HTTPS), its host
localhost the RP ID (--origin: another). The cookie `connect.sid` (express-session's) keeps the
session: the challenge of the last options asked for, and the user they were asked for.

    GET  /generate-registration-options?username=NAME    -> creation options (the answer itself)
    POST /verify-registration      RegistrationResponseJSON (the response itself)   -> {"verified": true}
    GET  /generate-authentication-options?username=NAME  -> request options (the answer itself)
    POST /verify-authentication    AuthenticationResponseJSON                       -> {"verified": true}

A refusal is a 400 `{"error": message}`, as the example's: every exception a verify raises is
caught and answered so, as its `try { … } catch (error) { return res.status(400).send({ error:
error.message }) }` does.

The example has one user, hard-coded and taken as signed in ("the example server assumes the
following user has completed login"). An app built from it names the user; this one as apps that
turn it into a passwordless sign-up do: `?username=` on both GET begins, the user made on its first
registration begin, a sign-in begun for a name no user has refused (the example's "You need to
know the user by this point"), and the name kept in the session for the verify that follows.
Everything else is the example's, in py_webauthn's terms: rpName "SimpleWebAuthn Example", a
timeout of 60 s, attestation none, residentKey discouraged, userVerification preferred, ES256 and
RS256 offered, no user.id given (the library makes a random one), the user's passkeys excluded and
allowed, require_user_verification=False in both verifies, algorithms not narrowed at verify; the
credential's id, public key, counter and transports stored (a credential id this user has already
is not added again), the counter updated on a verified sign-in; the challenge cleared after a
verify that did not raise, not after one that did. A verified sign-in answers `{"verified": true}`
and makes no session — the example's shape has no signed-in page.
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
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.structs import (AttestationConveyancePreference, AuthenticatorSelectionCriteria, AuthenticatorTransport,
                                      PublicKeyCredentialDescriptor, ResidentKeyRequirement, UserVerificationRequirement)

ORIGIN = "http://localhost:8000"
MAX_BODY = 1 << 20
COOKIE = "connect.sid"


class Refused(Exception):
    """A request the RP answers with a 400 and `{"error": message}`."""


class Users:
    """Users, their credentials and the sessions, behind one lock (requests are served on threads)."""

    def __init__(self):
        # username -> {"credentials": [{"id", "public_key", "counter", "transports"}]}
        self.users = {}
        # sid -> {"current_challenge": bytes or None, "username": str or None}
        self.sessions = {}
        self.lock = threading.Lock()


def descriptors(user) -> list:
    return [PublicKeyCredentialDescriptor(id=base64url_to_bytes(c["id"]), transports=c["transports"]) for c in user["credentials"]]


def transports(body) -> list:
    """The response's transports, as stored: those py_webauthn knows (the example stores what it is sent)."""
    listed = (body.get("response") or {}).get("transports") or []
    known = {t.value for t in AuthenticatorTransport}
    return [AuthenticatorTransport(t) for t in listed if isinstance(t, str) and t in known] if isinstance(listed, list) else []


class Handler(BaseHTTPRequestHandler):
    users: Users
    origin: str
    rp_id: str

    def log_message(self, *args):  # quiet
        pass

    def reply(self, status: int, body: dict, sid: str | None = None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if sid:
            self.send_header("Set-Cookie", f"{COOKIE}={sid}; Path=/; Max-Age=86400; HttpOnly")
        self.end_headers()
        self.wfile.write(data)

    def session(self):
        """The session the cookie names, or a new one (whose cookie the answer sets: saveUninitialized)."""
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and value in self.users.sessions:
                return value, self.users.sessions[value], False
        sid = secrets.token_urlsafe(24)
        self.users.sessions[sid] = {"current_challenge": None, "username": None}
        return sid, self.users.sessions[sid], True

    def body(self):
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise Refused("Content-Length is not a number")
        if not 0 <= length <= MAX_BODY:
            raise Refused(f"a body is 0 to {MAX_BODY} bytes")
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, UnicodeDecodeError):
            raise Refused("the body is not JSON")
        if not isinstance(body, dict):
            raise Refused("the body is not a JSON object")
        return body

    def serve(self, routes, read_body: bool):
        url = urllib.parse.urlsplit(self.path)
        route = routes.get(url.path)
        if route is None:
            return self.reply(404, {"error": f"Cannot {self.command} {url.path}"})
        sid, new = None, False
        try:
            body = self.body() if read_body else None
            query = urllib.parse.parse_qs(url.query)
            with self.users.lock:
                sid, session, new = self.session()
                answer = route(self, query if body is None else body, session)
            return self.reply(200, answer, sid if new else None)
        except Refused as error:
            return self.reply(400, {"error": str(error)}, sid if new else None)

    def do_GET(self):
        self.serve(GET_ROUTES, read_body=False)

    def do_POST(self):
        self.serve(POST_ROUTES, read_body=True)

    def username(self, query) -> str:
        names = query.get("username") or [""]
        if len(names) != 1 or not names[0] or len(names[0]) > 256:
            raise Refused("username is one name of 1 to 256 characters")
        return names[0]

    def generate_registration_options(self, query, session):
        username = self.username(query)
        user = self.users.users.setdefault(username, {"credentials": []})
        options = generate_registration_options(
            rp_name="SimpleWebAuthn Example", rp_id=self.rp_id, user_name=username, timeout=60000,
            attestation=AttestationConveyancePreference.NONE, exclude_credentials=descriptors(user),
            authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.DISCOURAGED,
                                                                   user_verification=UserVerificationRequirement.PREFERRED),
            supported_pub_key_algs=[COSEAlgorithmIdentifier.ECDSA_SHA_256, COSEAlgorithmIdentifier.RSASSA_PKCS1_v1_5_SHA_256])
        # Remembered for the verify, as the example's req.session.currentChallenge.
        session["current_challenge"], session["username"] = options.challenge, username
        return json.loads(options_to_json(options))

    def verify_registration(self, body, session):
        user, expected_challenge = self.pending(session)
        try:
            verification = verify_registration_response(credential=body, expected_challenge=expected_challenge,
                                                        expected_origin=self.origin, expected_rp_id=self.rp_id,
                                                        require_user_verification=False)
        except Exception as error:  # the example's catch: any error is a 400
            raise Refused(str(error) or type(error).__name__)
        credential_id = bytes_to_base64url(verification.credential_id)
        if not any(c["id"] == credential_id for c in user["credentials"]):
            user["credentials"].append({"id": credential_id, "public_key": verification.credential_public_key,
                                        "counter": verification.sign_count, "transports": transports(body)})
        session["current_challenge"] = None
        return {"verified": True}

    def generate_authentication_options(self, query, session):
        username = self.username(query)
        user = self.users.users.get(username)
        if user is None:
            raise Refused(f"User {username} not found")
        options = generate_authentication_options(rp_id=self.rp_id, timeout=60000, allow_credentials=descriptors(user),
                                                  user_verification=UserVerificationRequirement.PREFERRED)
        session["current_challenge"], session["username"] = options.challenge, username
        return json.loads(options_to_json(options))

    def verify_authentication(self, body, session):
        user = self.users.users.get(session["username"]) or {"credentials": []}
        # "Query the DB" for a credential matching the response's id, among this user's.
        stored = next((c for c in user["credentials"] if c["id"] == body.get("id")), None)
        if stored is None:
            raise Refused("Authenticator is not registered with this site")
        _, expected_challenge = self.pending(session)
        try:
            verification = verify_authentication_response(credential=body, expected_challenge=expected_challenge,
                                                          expected_origin=self.origin, expected_rp_id=self.rp_id,
                                                          credential_public_key=stored["public_key"],
                                                          credential_current_sign_count=stored["counter"],
                                                          require_user_verification=False)
        except Exception as error:  # the example's catch: any error is a 400
            raise Refused(str(error) or type(error).__name__)
        stored["counter"] = verification.new_sign_count
        session["current_challenge"] = None
        return {"verified": True}

    def pending(self, session):
        """The user and challenge the session's last options call was for. The example passes
        `${expectedChallenge}` — "undefined" when none is kept, which no response's challenge
        matches; here that is said at once (an empty expected challenge would match an empty one)."""
        if session["current_challenge"] is None or session["username"] not in self.users.users:
            raise Refused("no challenge in this session: ask for options first")
        return self.users.users[session["username"]], session["current_challenge"]


GET_ROUTES = {
    "/generate-registration-options": Handler.generate_registration_options,
    "/generate-authentication-options": Handler.generate_authentication_options,
}
POST_ROUTES = {
    "/verify-registration": Handler.verify_registration,
    "/verify-authentication": Handler.verify_authentication,
}


def serve(port: int = 0, origin: str = ORIGIN) -> ThreadingHTTPServer:
    """The RP on 127.0.0.1:`port`, for pages at `origin` (its host the RP ID)."""
    handler = type("SimpleWebAuthnExampleHandler", (Handler,),
                   {"users": Users(), "origin": origin, "rp_id": urllib.parse.urlsplit(origin).hostname})
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--origin", default=ORIGIN, help="the origin the RP's pages have (its host is the RP ID)")
    arguments = parser.parse_args()
    server = serve(arguments.port, arguments.origin)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
