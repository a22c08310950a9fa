"""A small relying party over HTTP, written with py_webauthn: a bank with passwords and passkeys,
for scenarios that drive a real RP (docs/scenarios.md, "RP in the loop") and, with its web front
end (docs/examples/bank/, served at /), for a real browser (docs/browser.md).

    python3 docs/examples/rp_server.py [--port 8765]      # prints "listening on http://127.0.0.1:PORT"
    python3 docs/examples/rp_server.py --origin https://yourbank.example:8443 --tls-cert C --tls-key K

Its one user is budi (password "rahasia"). Every endpoint takes and returns JSON; a session cookie
says who is signed in. The RP ID is yourbank.example, the origin https://yourbank.example (--origin: another, such as
the one a browser test's page has, port included; the RP ID is its host).

    POST /password/login   {"username", "password"}  -> {"user", "offerPasskey"}   (sets the session)
    POST /upgrade/decline                            -> {"declined"}               (asks less often)
    POST /register/begin                             -> {"publicKey": creation options}  (signed in)
    POST /register/finish  {"credential": response}  -> {"verified", "passkeys"}
    POST /login/begin                                -> {"publicKey": request options}   (discoverable)
    POST /login/finish     {"credential": response}  -> {"verified", "user"}       (sets the session)
    POST /transfer/begin   {"amount"}                -> {"publicKey": request options, UV required}
    POST /transfer/finish  {"credential": response}  -> {"approved", "amount"}
    GET  /account                                    -> {"user", "password", "passkeys"}
    GET  /passkeys                                   -> {"passkeys": [{"id", "createdAt"}]}  (signed in)
    POST /passkeys/remove  {"id"}                    -> {"removed", "passkeys"}     (the bank forgets it)
    POST /logout                                     -> {"signedOut"}
    POST /reset                                      -> {"reset"}   (forgets every passkey and session)
    GET  /, /bank.js, /style.css                     -> the web front end (docs/examples/bank/)
A finish endpoint also takes the response itself as the body, unwrapped. A refusal is HTTP 400 (or 401 when not signed in) with {"error": message};
a sign-in with a passkey the bank does not know adds "code": "unknownCredential" and its "credentialId" (the page then signals it).
"""
import argparse
import base64
import datetime
import json
import pathlib
import secrets
import ssl
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor,
                                      ResidentKeyRequirement, UserVerificationRequirement)

RP_ID, ORIGIN = "yourbank.example", "https://yourbank.example"
MAX_OFFERS = 3  # the guide's AuthUpgradeManager: offer a passkey at most three times
FRONT_END = pathlib.Path(__file__).resolve().parent / "bank"
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/bank.js": ("bank.js", "text/javascript; charset=utf-8"),
          "/style.css": ("style.css", "text/css; charset=utf-8")}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Bank:
    def __init__(self):
        self.users = {"budi": {"id": b"customer-0042", "password": "rahasia", "passkeys": {}, "declined": 0}}
        self.sessions = {}  # session id -> {"user", "challenge", "uv", "amount"}

    def user_by_handle(self, handle: bytes):
        return next((name for name, u in self.users.items() if u["id"] == handle), None)


class Handler(BaseHTTPRequestHandler):
    bank: Bank
    origin: str = ORIGIN
    rp_id: str = RP_ID

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
        if path in ("/account", "/passkeys") and session and session.get("user"):
            user = self.bank.users[session["user"]]
            if path == "/passkeys":
                return self.reply(200, {"passkeys": [{"id": id, "createdAt": p["createdAt"]} for id, p in user["passkeys"].items()]})
            return self.reply(200, {"user": session["user"], "password": user["password"] is not None,
                                    "passkeys": len(user["passkeys"])})
        if path in ("/account", "/passkeys"):
            return self.reply(401, {"error": "not signed in"})
        return self.reply(404, {"error": f"no page {path}"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        sid, session = self.session()
        try:
            status, out, cookie = self.route(body, sid, session)
        except Exception as error:  # py_webauthn's refusals
            status, out, cookie = 400, {"error": str(error)}, None
        self.reply(status, out, cookie)

    def new_session(self, user: str) -> str:
        sid = secrets.token_urlsafe(16)
        self.bank.sessions[sid] = {"user": user}
        return sid

    def route(self, body, sid, session):
        bank = self.bank
        if self.path == "/reset":
            bank.__init__()
            return 200, {"reset": True}, None
        if self.path == "/password/login":
            user = bank.users.get(body.get("username"))
            if not user or user["password"] != body.get("password"):
                return 401, {"error": "wrong username or password"}, None
            offer = not user["passkeys"] and user["declined"] < MAX_OFFERS
            return 200, {"user": body["username"], "offerPasskey": offer}, self.new_session(body["username"])
        if self.path == "/login/begin":
            options = generate_authentication_options(rp_id=self.rp_id, user_verification=UserVerificationRequirement.PREFERRED)
            sid = sid or secrets.token_urlsafe(16)
            bank.sessions.setdefault(sid, {})
            bank.sessions[sid].update(challenge=options.challenge, uv=False)
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
        if self.path == "/register/begin":
            options = generate_registration_options(
                rp_id=self.rp_id, rp_name="Your Bank", user_name=session["user"], user_id=user["id"],
                exclude_credentials=[PublicKeyCredentialDescriptor(id=unb64(c)) for c in user["passkeys"]],
                authenticator_selection=AuthenticatorSelectionCriteria(
                    resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.REQUIRED))
            session["challenge"] = options.challenge
            return 200, {"publicKey": json.loads(options_to_json(options))}, None
        if self.path == "/register/finish":
            verified = verify_registration_response(credential=body.get("credential", body), expected_challenge=session["challenge"],
                                                    expected_rp_id=self.rp_id, expected_origin=self.origin,
                                                    require_user_verification=True)
            user["passkeys"][b64(verified.credential_id)] = {
                "key": verified.credential_public_key, "count": verified.sign_count,
                "createdAt": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
            return 200, {"verified": True, "passkeys": len(user["passkeys"])}, None
        if self.path == "/transfer/begin":
            options = generate_authentication_options(rp_id=self.rp_id, user_verification=UserVerificationRequirement.REQUIRED,
                                                      allow_credentials=[PublicKeyCredentialDescriptor(id=unb64(c))
                                                                         for c in user["passkeys"]])
            session.update(challenge=options.challenge, uv=True, amount=body.get("amount"))
            return 200, {"publicKey": json.loads(options_to_json(options))}, None
        if self.path == "/transfer/finish":
            return self.finish_authentication(body, session, sid, login=False)
        return 404, {"error": f"no endpoint {self.path}"}, None

    def finish_authentication(self, body, session, sid, login: bool):
        if not session or "challenge" not in session:
            return 400, {"error": "no challenge: call begin first"}, None
        credential = body.get("credential", body)
        name = self.bank.user_by_handle(unb64(credential["response"].get("userHandle", "")))
        passkey = self.bank.users[name]["passkeys"].get(credential["id"]) if name else None
        if passkey is None:
            return 400, {"error": "unknown passkey", "code": "unknownCredential", "credentialId": credential.get("id")}, None
        verified = verify_authentication_response(
            credential=credential, expected_challenge=session.pop("challenge"), expected_rp_id=self.rp_id,
            expected_origin=self.origin, credential_public_key=passkey["key"], credential_current_sign_count=passkey["count"],
            require_user_verification=session.get("uv", False))
        passkey["count"] = verified.new_sign_count
        if login:
            session["user"] = name
            return 200, {"verified": True, "user": name}, sid
        return 200, {"approved": True, "amount": session.get("amount")}, None


def serve(port: int = 0, origin: str = ORIGIN, tls: ssl.SSLContext | None = None) -> ThreadingHTTPServer:
    """The bank on 127.0.0.1:`port`, expecting `origin` (its host the RP ID); HTTPS with `tls`."""
    rp_id = urllib.parse.urlsplit(origin).hostname
    handler = type("BankHandler", (Handler,), {"bank": Bank(), "origin": origin, "rp_id": rp_id})
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
    arguments = parser.parse_args()
    context = None
    if arguments.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.tls_cert, arguments.tls_key)
    server = serve(arguments.port, arguments.origin, context)
    print(f"listening on {'https' if context else 'http'}://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
