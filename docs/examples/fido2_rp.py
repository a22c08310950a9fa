"""A small relying party over HTTP, written with python-fido2's Fido2Server: accounts with a
secret, passkeys registered to them, and a username-first sign-in — an RP on another library than
docs/examples/rp_server.py (py_webauthn's), for `authctl audit` (docs/audit.md).

    python3 docs/examples/fido2_rp.py [--port 8766] [--origin https://fido2.example]
                                                       # prints "listening on http://127.0.0.1:PORT"

The origin is https://fido2.example, its host fido2.example the RP ID (--origin: another). Every
endpoint takes and returns JSON; the cookie `sid` names the session.

    POST /api/users                  {"name", "secret"}  -> {"name"}            (creates the user, signs in; 409 if taken)
    POST /api/session                {"name", "secret"}  -> {"name"}            (signs in by secret)
    GET  /api/me                                         -> {"name"}            (401 when not signed in)
    POST /api/webauthn/register/options                  -> {"options": {"publicKey": creation options}}  (signed in)
    POST /api/webauthn/register/verify   response        -> {"status": "ok"}
    POST /api/webauthn/login/options {"name"}            -> {"options": {"publicKey": request options}}
    POST /api/webauthn/login/verify      response        -> {"status": "ok", "name"}  (signs in)

A verify takes the authenticator's response (RegistrationResponseJSON / AuthenticationResponseJSON)
as the whole body. Each options call leaves one pending ceremony in the session, which the next
verify of the same ceremony uses up, refused or not. A refusal is 400 (401 not signed in, 409 a
name taken) with {"status": "failed", "error"}.

What Fido2Server leaves to its caller, this RP does: it keeps the state register_begin and
authenticate_begin return server-side and uses it once; it gives authenticate_complete only the
named user's credentials; it checks a response's userHandle is that user's, and checks and stores
the signature counter (authenticate_complete looks at neither); it refuses a credential another
user has registered; and it takes its own origin only, where Fido2Server's default takes any
subdomain of the RP ID and any port.
"""
import argparse
import hashlib
import hmac
import json
import secrets
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from fido2.server import Fido2Server
from fido2.webauthn import (AuthenticationResponse, PublicKeyCredentialRpEntity, PublicKeyCredentialUserEntity,
                            RegistrationResponse, UserVerificationRequirement)

ORIGIN = "https://fido2.example"
MAX_BODY = 1 << 20
COOKIE = "sid"


class Failed(Exception):
    """A request the RP refuses: its HTTP status and the error it names."""

    def __init__(self, status: int, error: str):
        super().__init__(error)
        self.status = status


def hash_secret(secret: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, 10_000)


class Accounts:
    """Users, their credentials and the sessions, behind one lock (requests are served on threads)."""

    def __init__(self):
        # name -> {"id": user handle, "salt", "hash", "credentials": {credential id: {"data", "count"}}}
        self.users = {}
        # sid -> {"name": signed-in user or None, "pending": {"ceremony", "state", "name"}}
        self.sessions = {}
        self.lock = threading.Lock()

    def owner_of(self, credential_id: bytes):
        return next((name for name, user in self.users.items() if credential_id in user["credentials"]), None)


def library(call, *args):
    """Fido2Server's (and its parsers') refusals are exceptions of many kinds: each is a 400."""
    try:
        return call(*args)
    except Exception as error:
        raise Failed(400, str(error) or type(error).__name__)


class Handler(BaseHTTPRequestHandler):
    accounts: Accounts
    server_: Fido2Server

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
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and value in self.accounts.sessions:
                return value, self.accounts.sessions[value]
        return None, None

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

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        if path != "/api/me":
            return self.reply(404, {"status": "failed", "error": f"no page {path}"})
        with self.accounts.lock:
            _, session = self.session()
            if not session or not session["name"]:
                return self.reply(401, {"status": "failed", "error": "not signed in"})
            return self.reply(200, {"name": session["name"]})

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        route = ROUTES.get(path)
        if route is None:
            return self.reply(404, {"status": "failed", "error": f"no endpoint {path}"})
        try:
            body = self.body()
            with self.accounts.lock:
                sid, session = self.session()
                status, out, new_sid = route(self, body, sid, session)
        except Failed as failed:
            status, out, new_sid = failed.status, {"status": "failed", "error": str(failed)}, None
        except Exception as error:  # a fault of this RP's own, said as one
            status, out, new_sid = 500, {"status": "failed", "error": f"internal error: {type(error).__name__}"}, None
        self.reply(status, out, new_sid)

    # Accounts

    def sign_in(self, name: str, old_sid: str | None):
        """A fresh session for `name`; the one the browser had (and its pending ceremony) is gone."""
        self.accounts.sessions.pop(old_sid, None)
        sid = secrets.token_urlsafe(24)
        self.accounts.sessions[sid] = {"name": name, "pending": None}
        return sid

    def create_user(self, body, sid, session):
        name, secret = body.get("name"), body.get("secret")
        if not isinstance(name, str) or not 1 <= len(name) <= 64 or not name.isprintable() \
                or not isinstance(secret, str) or not secret:
            raise Failed(400, "a user takes a name (1 to 64 printable characters) and a secret")
        if name in self.accounts.users:
            raise Failed(409, f"the name {name} is taken")
        salt = secrets.token_bytes(16)
        self.accounts.users[name] = {"id": secrets.token_bytes(16), "salt": salt, "hash": hash_secret(secret, salt),
                                     "credentials": {}}
        return 200, {"name": name}, self.sign_in(name, sid)

    def password_session(self, body, sid, session):
        name, secret = body.get("name"), body.get("secret")
        user = self.accounts.users.get(name) if isinstance(name, str) else None
        if not user or not isinstance(secret, str) or not hmac.compare_digest(hash_secret(secret, user["salt"]), user["hash"]):
            raise Failed(401, "wrong name or secret")
        return 200, {"name": name}, self.sign_in(name, sid)

    # Registration

    def register_options(self, body, sid, session):
        if not session or not session["name"]:
            raise Failed(401, "not signed in")
        name = session["name"]
        user = self.accounts.users[name]
        options, state = self.server_.register_begin(
            PublicKeyCredentialUserEntity(name=name, id=user["id"], display_name=name),
            [c["data"] for c in user["credentials"].values()],
            user_verification=UserVerificationRequirement.REQUIRED)
        session["pending"] = {"ceremony": "register", "state": state, "name": name}
        return 200, {"options": dict(options)}, None

    def register_verify(self, body, sid, session):
        pending = take_pending(session, "register")
        if pending["name"] != session["name"]:
            raise Failed(400, "the registration was begun by another user")
        auth_data = library(self.server_.register_complete, pending["state"], body)
        credential = auth_data.credential_data
        owner = self.accounts.owner_of(credential.credential_id)
        if owner is not None:
            raise Failed(400, "this credential is registered already")
        self.accounts.users[session["name"]]["credentials"][credential.credential_id] = {
            "data": credential, "count": auth_data.counter}
        return 200, {"status": "ok"}, None

    # Sign-in, username first

    def login_options(self, body, sid, session):
        name = body.get("name")
        user = self.accounts.users.get(name) if isinstance(name, str) else None
        if user is None:
            raise Failed(400, "no such user")
        # A user without a passkey gets options too (an empty allow list): whether one has a passkey
        # is not told here, and the verify takes none but the user's.
        options, state = self.server_.authenticate_begin(
            [c["data"] for c in user["credentials"].values()], user_verification=UserVerificationRequirement.PREFERRED)
        if session is None:  # a browser not signed in keeps its ceremony in a session of its own
            sid = secrets.token_urlsafe(24)
            session = self.accounts.sessions[sid] = {"name": None, "pending": None}
        session["pending"] = {"ceremony": "login", "state": state, "name": name}
        return 200, {"options": dict(options)}, sid

    def login_verify(self, body, sid, session):
        pending = take_pending(session, "login")
        name = pending["name"]
        stored = self.accounts.users[name]["credentials"]
        response = library(AuthenticationResponse.from_dict, body)
        # Only the named user's credentials: another user's passkey is an "Unknown credential ID".
        credential = library(self.server_.authenticate_complete, pending["state"], [c["data"] for c in stored.values()],
                             response)
        # §7.2 step 6: a userHandle, when there is one, is the user's (authenticate_complete does not
        # look at it).
        handle = response.response.user_handle
        if handle is not None and handle != self.accounts.users[name]["id"]:
            raise Failed(400, f"the userHandle is not {name}'s")
        # §7.2 step 22: a count that does not go up (when either is non-zero) is a cloned authenticator's.
        entry = stored[credential.credential_id]
        count = response.response.authenticator_data.counter
        if (count or entry["count"]) and count <= entry["count"]:
            raise Failed(400, "the signature counter did not increase: a cloned authenticator?")
        entry["count"] = count
        return 200, {"status": "ok", "name": name}, self.sign_in(name, sid)


def take_pending(session, ceremony: str) -> dict:
    """The ceremony the last options call began, used up whatever the verify's outcome; a verify
    without one, or after another ceremony's options, is refused."""
    pending = session["pending"] if session else None
    if session:
        session["pending"] = None
    if not pending or pending["ceremony"] != ceremony:
        raise Failed(400, f"no {ceremony} in progress: ask for options first")
    return pending


ROUTES = {
    "/api/users": Handler.create_user,
    "/api/session": Handler.password_session,
    "/api/webauthn/register/options": Handler.register_options,
    "/api/webauthn/register/verify": Handler.register_verify,
    "/api/webauthn/login/options": Handler.login_options,
    "/api/webauthn/login/verify": Handler.login_verify,
}


def serve(port: int = 0, origin: str = ORIGIN) -> ThreadingHTTPServer:
    """The RP on 127.0.0.1:`port`, for pages at `origin` (its host the RP ID)."""
    rp_id = urllib.parse.urlsplit(origin).hostname
    # Fido2Server's own origin check (fido2.rpid.verify_rp_id) takes any https origin on the RP ID
    # or a subdomain of it, on any port: this RP's pages have one origin, and only it is taken.
    fido2 = Fido2Server(PublicKeyCredentialRpEntity(name="fido2 example", id=rp_id), verify_origin=lambda o: o == origin)
    handler = type("Fido2Handler", (Handler,), {"accounts": Accounts(), "server_": fido2})
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--origin", default=ORIGIN, help="the origin the RP's pages have (its host is the RP ID)")
    arguments = parser.parse_args()
    server = serve(arguments.port, arguments.origin)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
