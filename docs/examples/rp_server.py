"""A small relying party over HTTP, written with py_webauthn: a bank with passwords and passkeys,
for scenarios that drive a real RP (docs/scenarios.md, "RP in the loop") and, with its web front
end (docs/examples/bank/, served at /), for a real browser (docs/browser.md).

    python3 docs/examples/rp_server.py [--port 8765]      # prints "listening on http://127.0.0.1:PORT"
    python3 docs/examples/rp_server.py --origin https://yourbank.example:8443 --tls-cert C --tls-key K
    python3 docs/examples/rp_server.py --flaw not-bound-to-user [--flaw ...]   # a bank with known flaws

Its first user is budi (password "rahasia", user id "customer-0042"); others sign up, each with a
random 16-byte user id. Every endpoint takes and returns JSON; a session cookie says who is
signed in. The RP ID is yourbank.example, the origin https://yourbank.example (--origin: another,
such as the one a browser test's page has, port included; the RP ID is its host).

    POST /signup           {"username", "password"}  -> {"user"}                    (sets the session; 409 if taken)
    POST /password/login   {"username", "password"}  -> {"user", "offerPasskey"}   (sets the session)
    POST /upgrade/decline                            -> {"declined"}               (asks less often)
    POST /register/begin                             -> {"publicKey": creation options}  (signed in)
    POST /register/finish  {"credential": response}  -> {"verified", "passkeys"}
    POST /upgrade/begin                              -> {"publicKey": creation options, UV preferred}  (signed in)
    POST /upgrade/finish   {"credential": response}  -> {"verified", "passkeys"}   (UP and UV not required)
    POST /login/begin                                -> {"publicKey": request options}   (discoverable)
    POST /login/begin      {"username"}              -> {"publicKey": request options}   (that user's passkeys)
    POST /login/finish     {"credential": response}  -> {"verified", "user"}       (sets the session)
    POST /transfer/begin   {"amount"}                -> {"publicKey": request options, UV required}
    POST /transfer/finish  {"credential": response}  -> {"approved", "amount"}
    GET  /account                                    -> {"user", "password", "passkeys"}
    GET  /passkeys                                   -> {"passkeys": [{"id", "createdAt"}]}  (signed in)
    GET  /transfers                                  -> {"transfers": [{"amount", "credentialId", "approvedAt"}]}  (signed in)
    POST /passkeys/remove  {"id"}                    -> {"removed", "passkeys"}     (the bank forgets it)
    POST /logout                                     -> {"signedOut"}
    POST /reset                                      -> {"reset"}   (forgets every sign-up, passkey and session)
    GET  /, /bank.js, /style.css                     -> the web front end (docs/examples/bank/)
A finish endpoint also takes the response itself as the body, unwrapped. Each begin leaves one
challenge in the session, for its own finish only; a finish uses it up, refused or not.

Sign-in names its user in one of two ways. With {"username": U} at begin the options list U's
passkeys (a name with none, known or not, gets one imaginary id) and only a passkey of U signs in:
another user's is refused with "code": "notThisUsersPasskey". Without, the sign-in is
discoverable and the response's userHandle names the user: a response without one is refused
("code": "noUserHandle"), as is one whose userHandle is not the passkey's user's
("code": "userHandleMismatch"), in either form. A transfer takes only the signed-in user's passkeys.

The upgrade endpoints are for the automatic passkey upgrade (a conditional create; iOS 18's
requestStyle .conditional): the password manager makes the passkey right after a password sign-in
without asking the person, so its authenticator data has UP and UV clear (WebAuthn L3 §5.1.3: the
client sets requireUserPresence and requireUserVerification to false unless it asks). Its options
ask for user verification "preferred": one that requires it fails a browser's conditional create
(ConstraintError, §5.1.3) and is made with UV clear all the same on iOS 18.5 (Apple's forums,
thread 792710). Its finish checks neither flag (§7.1 checks UP only when mediation is not
conditional: py_webauthn's require_user_presence=False, SimpleWebAuthn's requireUserPresence:
false, made for this). A registration begun with /register/begin still needs both.

A refusal is HTTP 400 (401 when not signed in, 409 for a name taken at sign-up) with
{"error": message}; a sign-in with a passkey the bank does not know adds "code": "unknownCredential"
and its "credentialId" (the page then signals it). A registration of a passkey another user has is
refused ("code": "credentialInUse"), a response made in another site's frame ("code": "crossOrigin"),
and a sign-in whose BE is not the one its passkey registered with ("code": "backupEligibilityChanged").

--flaw NAME (repeatable; serve(flaws=...) in Python) re-creates one flaw found in a real RP, and
changes nothing else, for tools that look for such flaws (each is in FLAWS below):
    not-bound-to-user         sign-in by username takes any user's passkey and signs in as the named user
    challenge-not-consumed    a finish leaves the challenge in the session: a response replayed is accepted again
    origin-suffix-match       an origin whose host ends with the RP ID passes, whatever its scheme and port
    uv-not-enforced           registration and transfer ask for user verification but do not check the UV flag
    session-on-failed-verify  sign-in sets the session's user before verifying, and keeps it when verifying fails
    state-before-verify       sign-in stores the response's sign count before verifying it
    up-not-checked            registration does not check the UP flag (py_webauthn has no such switch for sign-in)
    cross-origin-allowed      a response made in a frame another site embeds (crossOrigin, topOrigin) is taken
    alg-not-checked           registration offers ES256 and RS256 but verifies a key of any algorithm py_webauthn knows
    backup-eligibility-not-compared  sign-in does not compare BE with the one the passkey registered with
    user-enumeration          a sign-in begun for a name no user has is 400 "unknownUser": who has an account is told
    user-handle-trusted       a discoverable sign-in signs in the user its userHandle names, the passkey's owner not compared

What py_webauthn 3.0.1 leaves to its caller, the bank does: it refuses a response made in a cross-origin
frame (WebAuthn L3 §7.1 step 10, §7.2 step 14: the bank is never embedded), verifies the credential key
against the algorithms its options offered (§7.1 step 19), refuses a credential id of more than 1,023
bytes (§7.1 step 24) and an attestation object with anything after its one CBOR item (cbor2 ignores
it), keeps each passkey's BE and refuses a sign-in whose BE differs (§7.2 step 19), and answers a
sign-in begun for a name with no passkey, known or not, with options that list one imaginary
credential id derived from the name (§14.6.2), so that a name tells nothing.
"""
import argparse
import base64
import binascii
import datetime
import hashlib
import hmac
import io
import json
import pathlib
import secrets
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cbor2
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor,
                                      ResidentKeyRequirement, UserVerificationRequirement)

RP_ID, ORIGIN = "yourbank.example", "https://yourbank.example"
MAX_OFFERS = 3  # the guide's AuthUpgradeManager: offer a passkey at most three times
MAX_BODY = 1 << 20
# The algorithms the bank offers, and the only ones it verifies (WebAuthn L3 §7.1 step 19).
ALGORITHMS = [COSEAlgorithmIdentifier.ECDSA_SHA_256, COSEAlgorithmIdentifier.RSASSA_PKCS1_v1_5_SHA_256]
MAX_CREDENTIAL_ID = 1023  # §7.1 step 24
FRONT_END = pathlib.Path(__file__).resolve().parent / "bank"
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/bank.js": ("bank.js", "text/javascript; charset=utf-8"),
          "/style.css": ("style.css", "text/css; charset=utf-8")}

# The flaws --flaw can switch on, each as a real RP had it.
FLAWS = {
    # StrongKey FIDO server CVE-2025-26788, java-webauthn-server CVE-2026-46419, Flask-Security
    # GHSA-f66q-9rf6-8795: the credential was looked up among every user's, not the named user's.
    "not-bound-to-user": "sign-in by username takes any user's passkey and signs in as the named user",
    # Discourse CVE-2025-53102 (sign-in); django-mfa2 CVE-2022-42731 (registration).
    "challenge-not-consumed": "a finish leaves the challenge in the session: a response replayed is accepted again",
    # lbuchs/WebAuthn 2.2.0 and web-auth CVE-2026-30964 compared the origin's host with the RP ID by suffix.
    "origin-suffix-match": "an origin whose host ends with the RP ID passes, whatever its scheme and port",
    # Spring Security CVE-2026-47841: UV asked for in the options, not required of the response.
    "uv-not-enforced": "registration and transfer ask for user verification but do not check the UV flag",
    # cedarjs PR #2545: a session was issued although the verification failed.
    "session-on-failed-verify": "sign-in sets the session's user before verifying, and keeps it when verifying fails",
    # Stored state moved by an unverified response: anyone can push a passkey's count past what its
    # authenticator will reach, and its real sign-ins are then refused as clones.
    "state-before-verify": "sign-in stores the response's sign count before verifying it",
    # CVE-2021-38299 (web-auth/webauthn-framework checked no UP flag in an assertion). py_webauthn
    # checks UP in every assertion with no switch (verify_authentication_response); only
    # verify_registration_response has require_user_presence, so only registration can have it.
    "up-not-checked": "registration does not check the UP flag (py_webauthn has no such switch for sign-in)",
    # lbuchs/WebAuthn #124, SimpleWebAuthn #815: clientDataJSON's crossOrigin and topOrigin not
    # looked at (py_webauthn reads crossOrigin and never compares it): the bank embedded in an
    # attacker's page signs its user in there.
    "cross-origin-allowed": "a response made in a frame another site embeds (crossOrigin, topOrigin) is taken",
    # The options narrowed (generate_registration_options' supported_pub_key_algs), the verification
    # not: verify_registration_response takes every algorithm py_webauthn knows unless told.
    "alg-not-checked": "registration offers ES256 and RS256 but verifies a key of any algorithm py_webauthn knows",
    # BE not kept at registration: a synced passkey's sign-in claims to be device-bound.
    "backup-eligibility-not-compared": "sign-in does not compare BE with the one the passkey registered with",
    # WebAuthn L3 §14.6.2: an unknown name answered with an error tells which names have accounts.
    "user-enumeration": "a sign-in begun for a name no user has is 400 \"unknownUser\": who has an account is told",
    # w3c/webauthn #753, the first-factor scenario WebAuthn L3 §7.2 step 6 answers: the user taken
    # from the response's userHandle (which no signature covers) and the signature verified with
    # the stored key of the credential the response names, whoever owns it — anyone with a passkey
    # of their own signs in as any user whose handle they know.
    "user-handle-trusted": "a discoverable sign-in signs in the user its userHandle names, the passkey's owner not compared",
}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Refusal(Exception):
    """A request the bank refuses: its HTTP status and JSON body."""

    def __init__(self, status: int, error: str, **extra):
        super().__init__(error)
        self.status, self.body = status, {"error": error, **extra}


class Bank:
    def __init__(self):
        self.secret = secrets.token_bytes(32)  # derives the imaginary credential ids (§14.6.2)
        self.users = {"budi": {"id": b"customer-0042", "password": "rahasia", "passkeys": {}, "declined": 0, "transfers": []}}
        # session id -> {"user", "pending": {"ceremony", "challenge", "uv", "up", "user", "amount"}}
        self.sessions = {}
        self.lock = threading.Lock()  # a name is taken once, whatever signs up at the same time

    def user_by_handle(self, handle: bytes):
        return next((name for name, u in self.users.items() if u["id"] == handle), None)

    def owner_of(self, credential_id: str):
        """The user whose passkey `credential_id` is (a credential id is one user's only)."""
        return next((name for name, u in self.users.items() if credential_id in u["passkeys"]), None)


def credential_of(body: dict) -> dict:
    """The response of a finish's body (wrapped as {"credential": …} or not), its shape checked
    as far as the bank reads it before py_webauthn does."""
    credential = body.get("credential", body)
    if not isinstance(credential, dict) or not isinstance(credential.get("id"), str) \
            or not isinstance(credential.get("response"), dict):
        raise Refusal(400, "not a credential: an object with an id and a response")
    return credential


def user_handle_of(credential: dict):
    """The response's userHandle as bytes; None when it has none (absent, null or empty)."""
    handle = credential["response"].get("userHandle")
    if handle is None or handle == "":
        return None
    if not isinstance(handle, str):
        raise Refusal(400, "userHandle is not a string")
    try:
        return unb64(handle)
    except (binascii.Error, ValueError):
        raise Refusal(400, "userHandle is not base64url")


def client_data_of(credential: dict) -> dict:
    """The response's clientDataJSON, parsed (py_webauthn parses it again and refuses what is not JSON)."""
    try:
        data = json.loads(unb64(credential["response"]["clientDataJSON"]))
    except Exception:
        raise Refusal(400, "clientDataJSON is not base64url JSON")
    if not isinstance(data, dict):
        raise Refusal(400, "clientDataJSON is not a JSON object")
    return data


def check_not_framed(credential: dict):
    """WebAuthn L3 §7.1 step 10, §7.2 step 14: the bank's pages are never embedded in another
    site's frame, so a response made in one (crossOrigin true, or a topOrigin) is refused."""
    data = client_data_of(credential)
    if data.get("crossOrigin") not in (None, False) or "topOrigin" in data:
        raise Refusal(400, f"the response was made in a frame of {data.get('topOrigin', 'another site')}", code="crossOrigin")


def check_one_cbor_item(credential: dict):
    """§7.1 step 12: the attestation object is one CBOR item; cbor2.loads, which py_webauthn uses,
    ignores whatever follows it."""
    try:
        data = unb64(credential["response"]["attestationObject"])
        stream = io.BytesIO(data)
        cbor2.CBORDecoder(stream).decode()
    except Exception:
        return  # py_webauthn refuses it as it is
    if stream.tell() != len(data):
        raise Refusal(400, f"{len(data) - stream.tell()} bytes after the attestation object")


class Handler(BaseHTTPRequestHandler):
    bank: Bank
    origin: str = ORIGIN
    rp_id: str = RP_ID
    flaws: frozenset = frozenset()

    def log_message(self, *args):  # quiet
        pass

    def reply(self, status: int, body: dict, cookie: str | None = None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if cookie:
            self.send_header("Set-Cookie", f"session={cookie}; Path=/; HttpOnly")
        self.end_headers()
        self.wfile.write(data)

    def session(self):
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "session" and value in self.bank.sessions:
                return value, self.bank.sessions[value]
        return None, None

    def do_GET(self):
        _, session = self.session()
        path = urllib.parse.urlsplit(self.path).path
        if path in STATIC and (FRONT_END / STATIC[path][0]).is_file():
            data = (FRONT_END / STATIC[path][0]).read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", STATIC[path][1])
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            return self.wfile.write(data)
        if path in ("/account", "/passkeys", "/transfers") and session and session.get("user"):
            user = self.bank.users[session["user"]]
            if path == "/transfers":
                return self.reply(200, {"transfers": user.get("transfers", [])})
            if path == "/passkeys":
                return self.reply(200, {"passkeys": [{"id": id, "createdAt": p["createdAt"]} for id, p in user["passkeys"].items()]})
            return self.reply(200, {"user": session["user"], "password": user["password"] is not None,
                                    "passkeys": len(user["passkeys"])})
        if path in ("/account", "/passkeys", "/transfers"):
            return self.reply(401, {"error": "not signed in"})
        return self.reply(404, {"error": f"no page {path}"})

    def do_POST(self):
        sid, session = self.session()
        try:
            status, out, cookie = self.route(self.body(), sid, session)
        except Refusal as refusal:
            status, out, cookie = refusal.status, refusal.body, None
        except Exception as error:  # py_webauthn's refusals
            status, out, cookie = 400, {"error": str(error)}, None
        self.reply(status, out, cookie)

    def body(self) -> dict:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise Refusal(400, "Content-Length is not a number")
        if not 0 <= length <= MAX_BODY:
            raise Refusal(400, f"a body is 0 to {MAX_BODY} bytes")
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, UnicodeDecodeError):
            raise Refusal(400, "the body is not JSON")
        if not isinstance(body, dict):
            raise Refusal(400, "the body is not a JSON object")
        return body

    def new_session(self, user: str) -> str:
        sid = secrets.token_urlsafe(16)
        self.bank.sessions[sid] = {"user": user}
        return sid

    def take_pending(self, session, ceremony: str) -> dict:
        """The challenge `ceremony`'s begin left in the session, used up (whatever the finish's
        outcome); a finish without one, or after another ceremony's begin, is refused."""
        if not session:
            raise Refusal(400, "no challenge: call begin first")
        if "challenge-not-consumed" in self.flaws:
            pending = session.get("pending")  # left for the next finish: a replay passes
        else:
            pending = session.pop("pending", None)
        if not pending or pending["ceremony"] != ceremony:
            raise Refusal(400, "no challenge: call begin first")
        return pending

    def expected_origin(self, credential: dict) -> str:
        """The origin the response must name: the bank's own. With origin-suffix-match, the one the
        response's clientDataJSON names when its host ends with the RP ID, any scheme, any port."""
        if "origin-suffix-match" not in self.flaws:
            return self.origin
        try:
            named = json.loads(unb64(credential["response"]["clientDataJSON"]))["origin"]
            host = urllib.parse.urlsplit(named).hostname
        except Exception:
            return self.origin  # py_webauthn refuses it as it is
        return named if host and host.endswith(self.rp_id) else self.origin

    def route(self, body, sid, session):
        bank = self.bank
        if self.path == "/reset":
            bank.__init__()
            return 200, {"reset": True}, None
        if self.path == "/signup":
            name, password = body.get("username"), body.get("password")
            if not isinstance(name, str) or not 1 <= len(name) <= 64 or not name.isprintable() \
                    or not isinstance(password, str) or not password:
                raise Refusal(400, "a sign-up takes a username (1 to 64 printable characters) and a password")
            with bank.lock:
                if name in bank.users:
                    raise Refusal(409, f"the username {name} is taken")
                bank.users[name] = {"id": secrets.token_bytes(16), "password": password, "passkeys": {}, "declined": 0, "transfers": []}
            return 200, {"user": name}, self.new_session(name)
        if self.path == "/password/login":
            user = bank.users.get(body.get("username"))
            if not user or user["password"] != body.get("password"):
                return 401, {"error": "wrong username or password"}, None
            offer = not user["passkeys"] and user["declined"] < MAX_OFFERS
            return 200, {"user": body["username"], "offerPasskey": offer}, self.new_session(body["username"])
        if self.path == "/login/begin":
            name = body.get("username")
            if name is not None and not isinstance(name, str):
                raise Refusal(400, "username is not a string")
            if name is not None and name not in bank.users and "user-enumeration" in self.flaws:
                raise Refusal(400, f"no user {name}", code="unknownUser")
            allow = None
            if name is not None:
                passkeys = bank.users[name]["passkeys"] if name in bank.users else {}
                # A name with no passkey, known or not, gets one imaginary id derived from it: the
                # same on every begin, and like a real one (§14.6.2).
                allow = [PublicKeyCredentialDescriptor(id=unb64(c)) for c in passkeys] or \
                    [PublicKeyCredentialDescriptor(id=hmac.new(bank.secret, name.encode(), hashlib.sha256).digest()[:16])]
            options = generate_authentication_options(rp_id=self.rp_id, user_verification=UserVerificationRequirement.PREFERRED,
                                                      allow_credentials=allow)
            sid = sid or secrets.token_urlsafe(16)
            bank.sessions.setdefault(sid, {})
            bank.sessions[sid]["pending"] = {"ceremony": "login", "challenge": options.challenge, "uv": False, "user": name}
            return 200, {"publicKey": json.loads(options_to_json(options))}, sid
        if self.path == "/login/finish":
            return self.finish_authentication(body, session, sid, login=True)
        if self.path == "/logout":
            bank.sessions.pop(sid, None)
            return 200, {"signedOut": True}, None
        if not session or not session.get("user"):
            return 401, {"error": "not signed in"}, None
        user = bank.users[session["user"]]
        if self.path == "/passkeys/remove":
            if user["passkeys"].pop(body.get("id"), None) is None:
                return 400, {"error": "no such passkey"}, None
            return 200, {"removed": body["id"], "passkeys": len(user["passkeys"])}, None
        if self.path == "/upgrade/decline":
            user["declined"] += 1
            return 200, {"declined": user["declined"]}, None
        if self.path in ("/register/begin", "/upgrade/begin"):
            # An upgrade is made without asking the person (UP and UV clear): it cannot require UV.
            upgrade = self.path == "/upgrade/begin"
            options = generate_registration_options(
                rp_id=self.rp_id, rp_name="Your Bank", user_name=session["user"], user_id=user["id"], supported_pub_key_algs=ALGORITHMS,
                exclude_credentials=[PublicKeyCredentialDescriptor(id=unb64(c)) for c in user["passkeys"]],
                authenticator_selection=AuthenticatorSelectionCriteria(
                    resident_key=ResidentKeyRequirement.REQUIRED,
                    user_verification=UserVerificationRequirement.PREFERRED if upgrade else UserVerificationRequirement.REQUIRED))
            session["pending"] = {"ceremony": "upgrade" if upgrade else "register", "challenge": options.challenge,
                                  "uv": not upgrade, "up": not upgrade, "user": session["user"]}
            return 200, {"publicKey": json.loads(options_to_json(options))}, None
        if self.path in ("/register/finish", "/upgrade/finish"):
            return self.finish_registration(body, session, "upgrade" if self.path == "/upgrade/finish" else "register")
        if self.path == "/transfer/begin":
            options = generate_authentication_options(rp_id=self.rp_id, user_verification=UserVerificationRequirement.REQUIRED,
                                                      allow_credentials=[PublicKeyCredentialDescriptor(id=unb64(c))
                                                                         for c in user["passkeys"]])
            session["pending"] = {"ceremony": "transfer", "challenge": options.challenge, "uv": True,
                                  "user": session["user"], "amount": body.get("amount")}
            return 200, {"publicKey": json.loads(options_to_json(options))}, None
        if self.path == "/transfer/finish":
            return self.finish_authentication(body, session, sid, login=False)
        return 404, {"error": f"no endpoint {self.path}"}, None

    def finish_registration(self, body, session, ceremony: str):
        pending = self.take_pending(session, ceremony)
        if pending["user"] != session["user"]:
            raise Refusal(400, "the registration was begun by another user")
        credential = credential_of(body)
        if "cross-origin-allowed" not in self.flaws:
            check_not_framed(credential)
        check_one_cbor_item(credential)
        verified = verify_registration_response(
            credential=credential, expected_challenge=pending["challenge"], expected_rp_id=self.rp_id,
            expected_origin=self.expected_origin(credential),
            require_user_verification=pending["uv"] and "uv-not-enforced" not in self.flaws,
            require_user_presence=pending["up"] and "up-not-checked" not in self.flaws,
            **({} if "alg-not-checked" in self.flaws else {"supported_pub_key_algs": ALGORITHMS}))
        if len(verified.credential_id) > MAX_CREDENTIAL_ID:
            raise Refusal(400, f"a credential id of {len(verified.credential_id)} bytes (at most {MAX_CREDENTIAL_ID})")
        credential_id = b64(verified.credential_id)
        if self.bank.owner_of(credential_id) not in (None, session["user"]):
            raise Refusal(400, "another user has this passkey", code="credentialInUse")
        passkeys = self.bank.users[session["user"]]["passkeys"]
        passkeys[credential_id] = {
            "key": verified.credential_public_key, "count": verified.sign_count, "deviceType": verified.credential_device_type,
            "userVerified": verified.user_verified, "createdAt": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        return 200, {"verified": True, "passkeys": len(passkeys)}, None

    def finish_authentication(self, body, session, sid, login: bool):
        pending = self.take_pending(session, "login" if login else "transfer")
        if not login and pending["user"] != session.get("user"):
            raise Refusal(400, "the transfer was begun by another user")
        credential = credential_of(body)
        handle = user_handle_of(credential)
        owner = self.bank.owner_of(credential["id"])
        named = pending["user"]  # the user named before the ceremony (a username, or the transfer's); else None
        if named is None:  # discoverable: the userHandle names the user
            if handle is None:
                raise Refusal(400, "the response has no userHandle: a discoverable sign-in needs one", code="noUserHandle")
            name = self.bank.user_by_handle(handle)
        else:
            name = named
        if owner is None:
            raise Refusal(400, "unknown passkey", code="unknownCredential", credentialId=credential["id"])
        if named is not None and named not in self.bank.users:  # a name no user has: refused as another's passkey is
            raise Refusal(400, f"this passkey is not {named}'s", code="notThisUsersPasskey")
        if login and named is not None and "not-bound-to-user" in self.flaws:
            pass  # the passkey found among every user's, and the sign-in is the named user's all the same
        elif named is not None and owner != named:
            raise Refusal(400, f"this passkey is not {named}'s", code="notThisUsersPasskey")
        elif named is None and name is not None and "user-handle-trusted" in self.flaws:
            pass  # the userHandle's user signs in; the passkey's key verifies, whoever owns it
        elif (handle is not None and handle != self.bank.users[owner]["id"]) or name != owner:
            raise Refusal(400, "the userHandle is not the passkey's user's", code="userHandleMismatch")
        passkey = self.bank.users[owner]["passkeys"][credential["id"]]
        count = passkey["count"]  # the stored count, the response's is checked against
        if "state-before-verify" in self.flaws:  # written before the response is verified
            data = unb64(credential["response"].get("authenticatorData", ""))
            if len(data) >= 37:
                passkey["count"] = int.from_bytes(data[33:37], "big")
        if login and "session-on-failed-verify" in self.flaws:
            session["user"] = name
        if "cross-origin-allowed" not in self.flaws:
            check_not_framed(credential)
        verified = verify_authentication_response(
            credential=credential, expected_challenge=pending["challenge"], expected_rp_id=self.rp_id,
            expected_origin=self.expected_origin(credential), credential_public_key=passkey["key"],
            credential_current_sign_count=count,
            require_user_verification=pending["uv"] and "uv-not-enforced" not in self.flaws)
        if verified.credential_device_type != passkey["deviceType"] and "backup-eligibility-not-compared" not in self.flaws:
            raise Refusal(400, f"the passkey registered as {passkey['deviceType']} signs in as {verified.credential_device_type}",
                          code="backupEligibilityChanged")
        passkey["count"] = verified.new_sign_count
        if login:
            session["user"] = name
            return 200, {"verified": True, "user": name}, sid
        # The history keeps what was approved, and with which passkey it was verified again.
        self.bank.users[owner].setdefault("transfers", []).append({
            "amount": pending.get("amount"), "credentialId": credential["id"],
            "approvedAt": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
        return 200, {"approved": True, "amount": pending.get("amount")}, None


def serve(port: int = 0, origin: str = ORIGIN, tls: ssl.SSLContext | None = None,
          flaws: frozenset = frozenset()) -> ThreadingHTTPServer:
    """The bank on 127.0.0.1:`port`, expecting `origin` (its host the RP ID); HTTPS with `tls`;
    with each of `flaws` (names of FLAWS) as a real RP had it."""
    unknown = set(flaws) - set(FLAWS)
    if unknown:
        raise ValueError(f"no such flaw: {', '.join(sorted(unknown))} (the flaws: {', '.join(FLAWS)})")
    rp_id = urllib.parse.urlsplit(origin).hostname
    handler = type("BankHandler", (Handler,), {"bank": Bank(), "origin": origin, "rp_id": rp_id, "flaws": frozenset(flaws)})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    if tls:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--origin", default=ORIGIN, help="the origin the bank's pages have (its host is the RP ID)")
    parser.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM) ...")
    parser.add_argument("--tls-key", help="... and this key")
    parser.add_argument("--flaw", action="append", default=[], choices=list(FLAWS),
                        help="re-create this flaw of a real RP (repeatable): " + "; ".join(f"{k}: {v}" for k, v in FLAWS.items()))
    arguments = parser.parse_args()
    context = None
    if arguments.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.tls_cert, arguments.tls_key)
    server = serve(arguments.port, arguments.origin, context, frozenset(arguments.flaw))
    for name in sorted(set(arguments.flaw)):
        print(f"with the flaw {name}: {FLAWS[name]}", file=sys.stderr, flush=True)
    print(f"listening on {'https' if context else 'http'}://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
