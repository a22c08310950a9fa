"""A page's own WebAuthn code, unchanged, on authctl serve — through the page bridge and through the
browser extension, in headless Chromium. The page (Tests/interop/browser/api.js) checks every
member of the objects it gets (instanceof, ArrayBuffers, getTransports(), getPublicKey(), …) and
verifies the assertion's signature itself with WebCrypto; py_webauthn verifies the toJSON() forms
it would post to an RP. Then what a hostile page could try: another origin, no token, a frame."""
import base64
import functools
import http.server
import json
import shutil
import threading
import urllib.parse

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor, ResidentKeyRequirement,
                                      UserVerificationRequirement)

from browser_support import HAVE_CHROMIUM, AuthctlServer, certificate, chromium, wait_until
from conftest import ROOT, unb64url

pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason="Debian's chromium and chromium-driver are not installed")

HOST, OTHER, RP_ID = "login.example.com", "other.example.net", "example.com"
PAGES = ROOT / "Tests" / "interop" / "browser"
EXTENSION = ROOT / "clients" / "chrome-extension"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Site:
    def run(self, script: str, *arguments):
        """Runs `script` (an async function's body over `args`) in the current frame; its value."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1], args = Array.from(arguments).slice(0, -1);"
            f"(async () => {{ {script} }})().then(done, (e) => done({{thrown: e.name + ': ' + e.message}}));", *arguments)

    def load(self, url: str):
        self.driver.get(url)
        wait_until(lambda: self.driver.execute_script("return typeof window.register") == "function", "the page's script")

    def passkeys(self) -> list:
        return self.authctl.call("GET", f"/accounts/{self.account}/devices/phone/passkeys")["credentials"]


@pytest.fixture(scope="module", params=["bridge", "extension"])
def site(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(f"page-{request.param}")
    tls, spki = certificate(directory, HOST, OTHER)
    pages = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(PAGES)))
    pages.socket = tls.wrap_socket(pages.socket, server_side=True)
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    site = Site()
    site.mode = request.param
    port = pages.server_address[1]
    site.origin, site.top = f"https://{HOST}:{port}", f"https://{OTHER}:{port}"
    site.authctl = AuthctlServer(directory)
    site.account = site.authctl.call("POST", "/accounts")["id"]
    extension = None
    if site.mode == "extension":
        extension = directory / "extension"
        shutil.copytree(EXTENSION, extension)
        (extension / "config.json").write_text(json.dumps({"server": site.authctl.url, "token": site.authctl.token,
                                                           "account": site.account, "device": "phone"}))
    # One renderer for the frames of both sites, so that the bridge, injected into the tab, is in
    # the cross-origin frame too (the extension's scripts reach every frame anyway).
    site.driver = chromium(directory / "profile", [HOST, OTHER], spki, extension=extension,
                           extra=["--disable-site-isolation-trials"])
    try:
        if site.mode == "bridge":
            bridge = site.authctl.call("GET", f"/bridge.js?account={site.account}&device=phone", text=True)
            site.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": bridge})
        site.load(site.origin + "/api.html")
        yield site
    finally:
        site.driver.quit()
        site.authctl.stop()
        pages.shutdown()


def creation_options(user: str, exclude=()):
    return generate_registration_options(
        rp_id=RP_ID, rp_name="Example", user_name=user, user_id=user.encode(),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=unb64url(c)) for c in exclude],
        authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.REQUIRED,
                                                               user_verification=UserVerificationRequirement.REQUIRED))


def register(site, user: str):
    options = creation_options(user)
    made = site.run("return await window.register(args[0]);", json.loads(options_to_json(options)))
    assert "thrown" not in made, made
    return options, made


def test_every_member_is_there_and_an_rp_verifies_what_the_page_posts(site):
    site.load(site.origin + "/api.html")
    options, made = register(site, "alice")
    checks = made["checks"]
    assert checks["isPublicKeyCredential"] and checks["isCredential"] and checks["isAttestationResponse"] and checks["isAuthenticatorResponse"]
    assert checks["rawIdIsArrayBuffer"] and checks["idIsRawId"] and checks["clientDataIsArrayBuffer"] and checks["attestationObjectIsArrayBuffer"]
    assert (checks["type"], checks["attachment"], checks["publicKeyAlgorithm"]) == ("public-key", "platform", -7)
    assert checks["authenticatorDataMatchesJSON"] and checks["publicKeyImports"]
    assert "internal" in checks["transports"] and checks["extensionResults"] in ({}, {"credProps": {"rk": True}})
    assert checks["jsonMembers"] == ["authenticatorAttachment", "clientExtensionResults", "id", "rawId", "response", "type"]
    assert made["clientData"] == {"type": "webauthn.create", "challenge": made["clientData"]["challenge"], "origin": site.origin, "crossOrigin": False}
    registered = verify_registration_response(credential=made["json"], expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                              expected_origin=site.origin, require_user_verification=True)

    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=registered.credential_id)],
                                              user_verification=UserVerificationRequirement.REQUIRED)
    signed = site.run("return await window.signIn(args[0], args[1]);", json.loads(options_to_json(request)), made["publicKey"])
    assert "thrown" not in signed, signed
    assert signed["checks"] == {"isPublicKeyCredential": True, "isAssertionResponse": True, "signatureIsArrayBuffer": True,
                                "userHandle": "alice", "signatureVerifies": True, "attachment": "platform"}
    assert signed["clientData"]["type"] == "webauthn.get" and signed["clientData"]["origin"] == site.origin
    verify_authentication_response(credential=signed["json"], expected_challenge=request.challenge, expected_rp_id=RP_ID,
                                   expected_origin=site.origin, credential_public_key=registered.credential_public_key,
                                   credential_current_sign_count=0, require_user_verification=True)
    # The RP can say no: a signature with one bit changed.
    tampered = json.loads(json.dumps(signed["json"]))
    signature = bytearray(unb64url(tampered["response"]["signature"]))
    signature[-1] ^= 1
    tampered["response"]["signature"] = base64.urlsafe_b64encode(bytes(signature)).rstrip(b"=").decode()
    with pytest.raises(Exception):
        verify_authentication_response(credential=tampered, expected_challenge=request.challenge, expected_rp_id=RP_ID,
                                       expected_origin=site.origin, credential_public_key=registered.credential_public_key,
                                       credential_current_sign_count=0)


def test_availability_capabilities_and_signals(site):
    site.load(site.origin + "/api.html")
    found = site.run("return await window.availability();")
    assert found["uvpaa"] is True
    # Chrome hands no conditional request to an extension: the page sees none there.
    assert found["conditional"] is (site.mode == "bridge")
    assert found["capabilities"]["signalUnknownCredential"] is True and found["capabilities"]["passkeyPlatformAuthenticator"] is True
    _, made = register(site, "carol")
    assert made["json"]["id"] in [p["id"] for p in site.passkeys()]
    # Signals: for the page's RP ID they act; for another site's they are a SecurityError.
    outcome = site.run("return await window.signal('signalUnknownCredential', args[0]);", {"rpId": RP_ID, "credentialId": made["json"]["id"]})
    assert outcome == {"outcome": "ok"}, outcome
    assert made["json"]["id"] not in [p["id"] for p in site.passkeys()]
    outcome = site.run("return await window.signal('signalUnknownCredential', args[0]);", {"rpId": "bank.example", "credentialId": "AAAA"})
    assert outcome["outcome"] == "SecurityError", outcome
    outcome = site.run("return await window.signal('signalCurrentUserDetails', args[0]);",
                       {"rpId": RP_ID, "userId": "YWxpY2U", "name": "alice@example.com", "displayName": "Alice A."})
    assert outcome == {"outcome": "ok"}, outcome
    assert [p["userName"] for p in site.passkeys() if p["userHandle"] == "YWxpY2U"] == ["alice@example.com"]


def test_errors_are_the_browsers(site):
    site.load(site.origin + "/api.html")
    _, made = register(site, "dave")
    excluded = json.loads(options_to_json(creation_options("dave", exclude=[made["json"]["id"]])))
    name = site.run("return await window.failing('create', {publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(args[0])});", excluded)
    assert name == "InvalidStateError"
    other_rp = json.loads(options_to_json(generate_authentication_options(rp_id="bank.example")))
    name = site.run("return await window.failing('get', {publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(args[0])});", other_rp)
    assert name == "SecurityError"
    name = site.run("return await window.failing('create', {publicKey: {challenge: 'not a buffer', rp: {name: 'x'}, "
                    "user: {id: new Uint8Array(1), name: 'x', displayName: 'x'}, pubKeyCredParams: [{type: 'public-key', alg: -7}]}});")
    assert name == "TypeError"
    # An extension input the browser takes as bytes, given as a base64url string: a TypeError.
    name = site.run("return await window.failing('get', {publicKey: {challenge: new Uint8Array(16), "
                    "extensions: {prf: {eval: {first: 'AAAA'}}}}});")
    assert name == "TypeError"
    request = json.loads(options_to_json(generate_authentication_options(rp_id=RP_ID)))
    assert site.run("return await window.aborted(args[0]);", request) == "AbortError"


def test_a_cross_origin_frame_gets_the_top_origin_only_when_its_parent_allows(site):
    site.load(site.origin + "/api.html")
    options, made = register(site, "erin")
    framed = site.top + "/frame.html?src=" + urllib.parse.quote(site.origin + "/api.html", safe="")
    allow = "&allow=" + urllib.parse.quote("publickey-credentials-get *", safe="")
    request = json.loads(options_to_json(generate_authentication_options(
        rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=unb64url(made["json"]["id"]))])))
    for page, allowed in ((framed + allow, True), (framed, False)):
        site.driver.get(page)
        frame = wait_until(lambda: site.driver.find_element("id", "frame"), "the frame")
        site.driver.switch_to.frame(frame)
        try:
            wait_until(lambda: site.driver.execute_script("return typeof window.signIn") == "function", "the framed page's script")
            signed = site.run("return await window.signIn(args[0], args[1]);", request, made["publicKey"])
        finally:
            site.driver.switch_to.default_content()
        if allowed:
            assert "thrown" not in signed, signed
            assert signed["clientData"]["crossOrigin"] is True and signed["clientData"]["origin"] == site.origin
            assert signed["clientData"].get("topOrigin") == site.top
            assert signed["checks"]["signatureVerifies"]
        else:
            assert signed["thrown"].startswith("NotAllowedError"), signed


def test_a_page_gets_nothing_from_the_server_without_the_token_and_signs_for_no_other_origin(site):
    site.load(site.origin + "/api.html")
    status = site.run("return (await fetch(args[0] + '/accounts', {method: 'POST'})).status;", site.authctl.url)
    assert status == 401
    exposed = site.run("return JSON.stringify(window.__authctlBridge || null);")
    assert site.authctl.token not in exposed
    # A page that names another origin in Chrome's own extension input: the origin signed is the
    # page's all the same.
    options = json.loads(options_to_json(creation_options("mallory")))
    made = site.run("const o = PublicKeyCredential.parseCreationOptionsFromJSON(args[0]);"
                    "o.extensions = {remoteDesktopClientOverride: {origin: 'https://bank.example', sameOriginWithAncestors: true}};"
                    "const c = await navigator.credentials.create({publicKey: o});"
                    "return JSON.parse(new TextDecoder().decode(c.response.clientDataJSON));", options)
    assert made.get("origin") == site.origin, made
    if site.mode == "extension":
        # A forged question to the extension's relay is answered for this frame's origin only.
        answer = site.run("""
            return await new Promise((resolve) => {
              addEventListener('message', (e) => { if (e.data && e.data.id === 'forged' && e.data.direction === 'answer') resolve(e.data); });
              postMessage({channel: 'authctl-passkeys', direction: 'ask', id: 'forged', kind: 'unknownCredential',
                           options: {rpId: 'bank.example', credentialId: 'AAAA'}}, '*');
            });""")
        assert answer["error"]["name"] == "SecurityError", answer
