"""A page's own WebAuthn code, unchanged, on authctl serve — through the page bridge in headless
Chromium, headless Firefox ESR and WebKitGTK (authctl-webkit under Xvfb; the engine has no WebAuthn,
the bridge supplies the interfaces), and through the browser extension in Chromium. The page (Tests/interop/browser/api.js) checks every
member of the objects it gets (instanceof, ArrayBuffers, getTransports(), getPublicKey(), …) and
verifies the assertion's signature itself with WebCrypto; py_webauthn verifies the toJSON() forms
it would post to an RP. The bridge's objects are compared, member by member, with the browser's
own in another tab of the same browser (a virtual authenticator answers there: CDP's in Chromium,
Firefox's own test token in Firefox), and so are the interfaces a page sees before any ceremony,
conversion errors in the browser's own words included; a client
library that assigns its own toJSON (objects.js, library.js) signs up and in. An autofill request
belongs to its page (autofill.html): it ends when the page goes away, and GET …/autofill says
whose it is. Then what a hostile page could try: another origin, no token, a frame."""
import base64
import contextlib
import functools
import http.server
import json
import os
import shutil
import threading
import urllib.parse

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor, ResidentKeyRequirement,
                                      UserVerificationRequirement)

from browser_support import (VIRTUAL_AUTHENTICATOR, AuthctlServer, bridge_sides, certificate, chromium, engine_params, open_browser, page_server,
                             wait_until)
from conftest import ROOT, b64url, unb64url

HOST, OTHER, RP_ID = "login.example.com", "other.example.net", "example.com"
PAGES = ROOT / "Tests" / "interop" / "browser"
EXTENSION = ROOT / "clients" / "chrome-extension"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Site:
    native_tab = None

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

    def autofill(self) -> dict:
        return self.authctl.call("GET", f"/accounts/{self.account}/devices/phone/autofill")

    @contextlib.contextmanager
    def native(self, url: str):
        """The browser's own WebAuthn, for the block: another tab of the same browser, without the
        bridge (the script is the first tab's) — in Chromium answered by a CDP virtual
        authenticator, in Firefox by none (BiDi has no virtual authenticator); `url` loaded in
        it."""
        driver = self.driver
        main = driver.current_window_handle
        if self.native_tab is None:
            driver.switch_to.new_window("tab")
            self.native_tab = driver.current_window_handle
            if self.engine == "chromium":
                driver.execute_cdp_cmd("WebAuthn.enable", {"enableUI": False})
                driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": VIRTUAL_AUTHENTICATOR})
            elif self.engine == "firefox":
                driver.add_virtual_authenticator()
        else:
            driver.switch_to.window(self.native_tab)
        try:
            self.load(url)
            assert driver.execute_script("return typeof window.__authctlBridge") == "undefined"
            yield
        finally:
            driver.switch_to.window(main)


# The page bridge in every engine; the extension in Chromium, the one browser it is made for.
SIDES = engine_params(*bridge_sides(), "chromium-extension")
BRIDGES = engine_params(*bridge_sides())


@pytest.fixture(scope="module", params=SIDES)
def site(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(f"page-{request.param}")
    tls, spki = certificate(directory, HOST, OTHER)
    pages = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(PAGES)))
    pages.socket = tls.wrap_socket(pages.socket, server_side=True)
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    site = Site()
    site.engine, site.mode = request.param.split("-")
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
    # the cross-origin frame too (the extension's scripts reach every frame anyway; Firefox's
    # preload scripts reach every frame of the tab by themselves).
    if site.mode == "extension":
        site.driver = chromium(directory / "profile", [HOST, OTHER], spki, extension=extension,
                               extra=["--disable-site-isolation-trials"])
    else:
        bridge = site.authctl.call("GET", f"/bridge.js?account={site.account}&device=phone", text=True)
        site.driver = open_browser(site.engine, directory / "profile", [HOST, OTHER], spki, bridge=bridge,
                                   extra=["--disable-site-isolation-trials"])
    try:
        site.load(site.origin + "/api.html")
        yield site
    finally:
        site.driver.quit()
        site.authctl.stop()
        pages.shutdown()


def creation_options(user: str, exclude=(), rp_id: str = RP_ID):
    return generate_registration_options(
        rp_id=rp_id, rp_name="Example", user_name=user, user_id=user.encode(),
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
    status = site.run("return (await fetch(args[0] + '/accounts', {method: 'POST'})).status;", page_server(site.driver, site.authctl.url))
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


def differences(native, bridged, path="") -> list[str]:
    """Where two fingerprints (objects.js) differ, as paths."""
    if isinstance(native, dict) and isinstance(bridged, dict):
        found = []
        for key in list(native) + [k for k in bridged if k not in native]:
            found += differences(native.get(key, "<absent>"), bridged.get(key, "<absent>"), f"{path}.{key}")
        if list(native) != list(bridged) and not found:
            found.append(f"{path}: members in another order: {list(native)} / {list(bridged)}")
        return found
    if isinstance(native, list) and isinstance(bridged, list) and len(native) == len(bridged):
        return [d for i, (a, b) in enumerate(zip(native, bridged)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if native == bridged else [f"{path}: the browser {json.dumps(native)}, bridge {json.dumps(bridged)}"]


PRF_INPUT = b64url(bytes(range(32)))


# The statics the bridge supplies where the engine has none of its own (docs/browser.md, "The page
# bridge from Firefox").
SUPPLIED = {"chromium": set(), "firefox": {"signalUnknownCredential", "signalAllAcceptedCredentials", "signalCurrentUserDetails"}}


@pytest.mark.parametrize("site", BRIDGES, indirect=True)
def test_the_bridges_interfaces_are_the_browsers_own_before_any_ceremony(site):
    if site.engine == "webkit":
        pytest.skip("WebKitGTK has no WebAuthn of its own to compare with (test_browser_webkit holds the bridge's "
                    "interfaces to WebKit's IDL)")
    # What a page sees before an authenticator answers — the interfaces' prototypes and statics,
    # `for…in`, a member read on a stranger, every TypeError of the options' conversion in the
    # engine's own words — in a tab of the same browser without the bridge, and through it.
    script = "return await window.interfaceShape();"
    with site.native(site.origin + "/api.html"):
        native = site.run(script)
    site.load(site.origin + "/api.html")
    bridged = site.run(script)
    assert "thrown" not in native, native
    assert "thrown" not in bridged, bridged
    statics = bridged["interfaces"]["PublicKeyCredential"]["static"]
    known = {entry["key"] for entry in native["interfaces"]["PublicKeyCredential"]["static"]}
    assert {entry["key"] for entry in statics} - known == SUPPLIED[site.engine]
    bridged["interfaces"]["PublicKeyCredential"]["static"] = [entry for entry in statics if entry["key"] in known]
    found = differences(native, bridged)
    assert not found, f"{len(found)} differences from the browser's own interfaces:\n" + "\n".join(found[:40])
    # What the comparison rests on: each conversion refused with a TypeError, the members walked.
    assert all(r["name"] == "TypeError" for k, r in native["refusals"].items() if k != "aborted"), native["refusals"]
    assert native["refusals"]["aborted"]["name"] == "AbortError"
    assert {"rawId", "response", "toJSON", "id", "type"} <= set(native["forIn"]["PublicKeyCredential"])


# An extension's input member that the browser lists as a key of its own, valued as the server
# values the extension (docs/browser.md, "getClientCapabilities()").
EXTENSION_OF = {"extension:credentialProtectionPolicy": "extension:credProtect",
                "extension:enforceCredentialProtectionPolicy": "extension:credProtect", "extension:getCredBlob": "extension:credBlob"}


@pytest.mark.parametrize("site", BRIDGES, indirect=True)
def test_get_client_capabilities_has_the_browsers_own_keys_valued_by_the_server_where_it_has_a_say(site):
    # The browser's own keys in its order, not the server's: each valued as the device's
    # capabilities on the server value it, where they have that key or its extension, else as the
    # browser values it (in the same browser, a tab without the bridge).
    script = "return Object.entries(await PublicKeyCredential.getClientCapabilities());"
    if site.engine == "webkit":
        # WebKitGTK has no WebAuthn, so no keys of its own: the bridge's interfaces answer the
        # server's, in its order (a placeholder answering {} would hide the passkey button).
        site.load(site.origin + "/api.html")
        server = site.authctl.call("GET", f"/accounts/{site.account}/devices/phone/capabilities")["capabilities"]
        assert site.run(script) == [[key, value] for key, value in server.items()]
        assert server["passkeyPlatformAuthenticator"] is True
        return
    with site.native(site.origin + "/api.html"):
        native = site.run(script)
    site.load(site.origin + "/api.html")
    bridged = site.run(script)
    server = site.authctl.call("GET", f"/accounts/{site.account}/devices/phone/capabilities")["capabilities"]
    assert [key for key, _ in bridged] == [key for key, _ in native], (native, bridged)
    own = dict(native)
    for key, value in bridged:
        says = key if key in server else EXTENSION_OF.get(key)
        assert value is (server[says] if says in server else own[key]), (key, value, server.get(says), own[key])
    # What the comparison rests on: keys the server has not (Chromium 156 has extension:appid and
    # extension:payment; Firefox ESR 153 extension:hmacCreateSecret) and keys it has that the
    # browser has not (ambientGet is in neither).
    assert "ambientGet" in server and "ambientGet" not in own
    assert {"chromium": {"extension:appid", "extension:payment"}, "firefox": {"extension:appid", "extension:hmacCreateSecret"}}[site.engine] <= set(own) - set(server)
    assert server["passkeyPlatformAuthenticator"] is True and dict(bridged)["passkeyPlatformAuthenticator"] is True
    # On a device without passkey support the server says false at each of its keys — and so at
    # its extensions' input members — while the keys it has not keep the browser's value.
    site.authctl.call("POST", f"/accounts/{site.account}/devices/phone/unsupported")
    try:
        unsupported = dict(site.run(script))
    finally:
        site.authctl.call("POST", f"/accounts/{site.account}/devices/phone/supported")
    assert list(unsupported) == [key for key, _ in native]
    for key, value in unsupported.items():
        assert value is (False if key in server or key in EXTENSION_OF else own[key]), (key, value)
    assert unsupported["extension:appid"] is True and unsupported["extension:credentialProtectionPolicy"] is False


@pytest.mark.parametrize("site", BRIDGES, indirect=True)
def test_the_bridges_objects_have_the_browsers_own_shape_member_by_member(site):
    if site.engine == "webkit":
        pytest.skip("WebKitGTK has no WebAuthn of its own to compare with")
    # A sign-up (credProps, a PRF evaluated) and a sign-in (PRF), an excluded passkey and a
    # challenge that is not bytes: in a tab where the browser answers (a virtual authenticator),
    # and through the bridge. Firefox's own WebAuthn refuses a page whose certificate it was told
    # to accept rather than trust, so there both tabs are on http://localhost, a secure context.
    origin, rp_id, plain = site.origin, RP_ID, None
    if site.engine == "firefox":
        plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(PAGES)))
        threading.Thread(target=plain.serve_forever, daemon=True).start()
        origin, rp_id = f"http://localhost:{plain.server_address[1]}", "localhost"
    creation = json.loads(options_to_json(creation_options("heidi", rp_id=rp_id)))
    # Firefox's virtual authenticator evaluates no PRF at creation (an authenticator's choice):
    # there the sign-up asks for PRF support alone.
    creation["extensions"] = {"credProps": True, "prf": {"eval": {"first": PRF_INPUT}} if site.engine == "chromium" else {}}
    request = json.loads(options_to_json(generate_authentication_options(rp_id=rp_id, user_verification=UserVerificationRequirement.REQUIRED)))
    request["extensions"] = {"prf": {"eval": {"first": PRF_INPUT}}}
    script = "return await window.fingerprint(args[0], args[1]);"
    try:
        with site.native(origin + "/api.html"):
            native = site.run(script, creation, request)
        site.load(origin + "/api.html")
        bridged = site.run(script, creation, request)
    finally:
        if plain:
            plain.shutdown()
    assert "thrown" not in native, native
    assert "thrown" not in bridged, bridged
    statics = bridged["interfaces"]["PublicKeyCredential"]
    known = {entry["key"] for entry in native["interfaces"]["PublicKeyCredential"]}
    assert {entry["key"] for entry in statics} - known == SUPPLIED[site.engine]
    bridged["interfaces"]["PublicKeyCredential"] = [entry for entry in statics if entry["key"] in known]
    if site.engine == "firefox":
        # Firefox's TypeError names where the page called from (fileName, lineNumber,
        # columnNumber); the bridge's names the bridge (docs/browser.md, "What differs in Firefox").
        for error in (native["errors"]["notBytes"], bridged["errors"]["notBytes"]):
            for entry in error["chain"][0]["own"]:
                if entry["key"] in ("fileName", "lineNumber", "columnNumber"):
                    entry["value"] = type(entry["value"]).__name__
    found = differences(native, bridged)
    assert not found, f"{len(found)} differences from the browser's own objects:\n" + "\n".join(found[:40])
    if site.engine == "firefox":
        # As Firefox ESR 153 has them: operations before attributes, new ArrayBuffers at each call.
        made = native["registration"]
        assert made["uses"]["forIn"][:2] == ["getClientExtensionResults", "toJSON"] and made["uses"]["ownNames"] == []
        assert not made["members"]["sameAuthenticatorData"] and not native["assertion"]["members"]["samePRFOutput"]
        return
    # What the comparison rests on, as Chromium 156 has it: no own property, a toJSON a library
    # may assign, the extension outputs the page posts, objects that do not clone.
    made = native["registration"]
    assert made["uses"]["ownNames"] == [] and made["uses"]["ownAfterAssigning"] == ["toJSON"]
    assert made["uses"]["toJSONAssigned"] == {"value": {"tag": "[object Object]", "prototype": "Object.prototype", "members": [["library", "boolean"]]}}
    assert [m[0] for m in made["members"]["extensions"]["members"]] == ["credProps", "prf"] and made["members"]["extensionsAreTheJSONs"]
    assert native["assertion"]["members"]["extensions"]["members"][0][0] == "prf" and native["assertion"]["members"]["samePRFOutput"]
    assert made["uses"]["cloneCredential"] == {"threw": "DataCloneError"} and made["uses"]["forIn"][:2] == ["rawId", "response"]
    assert native["errors"]["excluded"]["name"] == "InvalidStateError" and native["errors"]["notBytes"]["name"] == "TypeError"


def test_a_library_that_assigns_its_own_to_json_signs_up_and_in(site):
    # As webauthn-json's ponyfill does: `credential.toJSON = …`, then JSON.stringify(credential).
    site.load(site.origin + "/api.html")
    options = creation_options("ivan")
    made = site.run("return await window.librarySignUp(args[0]);", json.loads(options_to_json(options)))
    assert "thrown" not in made, made
    posted = made["posted"]
    for member in ("id", "rawId", "type", "authenticatorAttachment", "clientExtensionResults"):
        assert posted[member] == made["browsers"][member], member
    assert {k: made["browsers"]["response"][k] for k in posted["response"]} == posted["response"]
    registered = verify_registration_response(credential=posted, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                              expected_origin=site.origin, require_user_verification=True)
    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=registered.credential_id)],
                                              user_verification=UserVerificationRequirement.REQUIRED)
    signed = site.run("return await window.librarySignIn(args[0]);", json.loads(options_to_json(request)))
    assert "thrown" not in signed, signed
    assert {k: signed["browsers"]["response"][k] for k in signed["posted"]["response"]} == signed["posted"]["response"]
    verify_authentication_response(credential=signed["posted"], expected_challenge=request.challenge, expected_rp_id=RP_ID,
                                   expected_origin=site.origin, credential_public_key=registered.credential_public_key,
                                   credential_current_sign_count=0, require_user_verification=True)


def open_autofill_page(site, url: str) -> str:
    """Loads the sign-in page; the id its bridge gave its autofill request, once the server has
    that request pending."""
    site.driver.get(url)
    request = wait_until(lambda: site.driver.execute_script("return window.__authctlBridge.autofillRequest"), "the page's autofill request")
    wait_until(lambda: site.autofill().get("request", {}).get("id") == request, "the page's request pending on the server")
    return request


@pytest.mark.parametrize("site", BRIDGES, indirect=True)
def test_an_autofill_request_is_its_pages_and_ends_when_the_page_goes_away(site):
    site.load(site.origin + "/api.html")
    options, made = register(site, "judy")
    registered = verify_registration_response(credential=made["json"], expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                              expected_origin=site.origin)
    page = f"{site.origin}/autofill.html?rpId={RP_ID}"
    console = site.engine != "webkit"  # WebKitWebDriver has no log command
    if console:
        site.driver.get_log("browser")  # what earlier tests left there
    first = open_autofill_page(site, page)
    pending = site.autofill()
    assert pending["request"] == {"id": first, "page": site.driver.execute_script("return __authctlBridge.page"), "url": page,
                                  "origin": site.origin}
    assert made["json"]["id"] in [o["credentialId"] for o in pending["offered"]]
    # A reload is a new page: the old one's request ended with it, and a pick for it finds nothing;
    # the pick for the page the person sees signs it in.
    second = open_autofill_page(site, page)
    assert second != first
    base = f"/accounts/{site.account}/devices/phone/autofill"
    with pytest.raises(AssertionError, match="409"):
        site.authctl.call("POST", base, {"credentialId": made["json"]["id"], "request": first, "wait": 0})
    assert site.authctl.call("POST", base, {"credentialId": made["json"]["id"], "request": second}) == {"picked": True}
    outcome = wait_until(lambda: site.driver.execute_script("return window.outcome"), "the page signed in")
    assert "json" in outcome, outcome
    verify_authentication_response(credential=outcome["json"], expected_challenge=unb64url(site.driver.execute_script("return window.challenge")),
                                   expected_rp_id=RP_ID, expected_origin=site.origin, credential_public_key=registered.credential_public_key,
                                   credential_current_sign_count=0)
    # A test that names no request and picks the moment the reload is done: the page that went away
    # withdrew its request on the way out, so the pick is the page's it sees.
    site.driver.get(page)
    assert site.authctl.call("POST", base, {"credentialId": made["json"]["id"], "wait": "60s"}) == {"picked": True}
    assert wait_until(lambda: site.driver.execute_script("return window.outcome"), "the reloaded page signed in")["json"]["id"] == made["json"]["id"]
    # A page that comes and goes logs nothing: no console error, no failed load.
    if console:
        assert [e for e in site.driver.get_log("browser") if e["level"] == "SEVERE"] == []
    # Another page's request — a frame's — takes the list; the first page's promise stays pending,
    # as a browser's does for a page whose list is not shown, until the page aborts it.
    top = open_autofill_page(site, page)
    site.driver.execute_script("const f = document.createElement('iframe'); f.id = 'inner'; f.src = location.href; document.body.append(f);")
    inner = "document.getElementById('inner').contentWindow"
    framed = wait_until(lambda: site.driver.execute_script(f"return {inner}.__authctlBridge.autofillRequest"), "the frame's request")
    wait_until(lambda: site.autofill()["request"]["id"] == framed, "the frame's request pending on the server")
    wait_until(lambda: site.driver.execute_script("return __authctlBridge.autofillRequest") is None, "the page's request superseded")
    assert site.driver.execute_script("return window.outcome") is None and framed != top
    site.driver.execute_script("window.controller.abort()")
    # The reason the browser gives an abort without one, in its words ("signal is aborted without
    # reason" in Chromium, "The operation was aborted. " in Firefox, "The operation was aborted." in
    # WebKit).
    reason = site.driver.execute_script("const c = new AbortController(); c.abort(); return c.signal.reason.message")
    assert wait_until(lambda: site.driver.execute_script("return window.outcome"), "the page's abort") == {
        "thrown": "AbortError", "message": reason}
    assert site.autofill()["request"]["id"] == framed
    # The page aborts its own: withdrawn on the server.
    site.driver.execute_script(f"{inner}.controller.abort()")
    wait_until(lambda: not site.autofill()["pending"], "the aborted request withdrawn")
    # A page that goes away with its request pending — to a page that makes none — withdraws it.
    open_autofill_page(site, page)
    site.load(site.origin + "/api.html")
    wait_until(lambda: not site.autofill()["pending"], "the request of the page that went away ended")


@pytest.mark.parametrize("site", BRIDGES, indirect=True)
def test_a_page_on_a_loopback_address_is_refused_for_its_ip_address_as_chromium_refuses_it(site):
    plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(PAGES)))
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    script = """
      const user = {id: new Uint8Array(1), name: 'a', displayName: 'A'};
      const calls = {
        create: () => navigator.credentials.create({publicKey: {rp: {name: 'x'}, user, challenge: new Uint8Array(16),
                                                                pubKeyCredParams: [{type: 'public-key', alg: -7}]}}),
        get: () => navigator.credentials.get({publicKey: {challenge: new Uint8Array(16)}}),
        conditional: () => navigator.credentials.get({mediation: 'conditional', publicKey: {challenge: new Uint8Array(16)}}),
        signal: () => PublicKeyCredential.signalUnknownCredential({rpId: '127.0.0.1', credentialId: 'AAAA'}),
      };
      const out = {secure: isSecureContext};
      for (const [name, call] of Object.entries(calls)) {
        try { await call(); out[name] = 'ok'; } catch (e) { out[name] = [e.name, e.message]; }
      }
      return out;"""
    try:
        page = f"http://127.0.0.1:{plain.server_address[1]}/api.html"
        native = None
        if site.engine != "webkit":  # WebKitGTK has no WebAuthn of its own
            with site.native(page):
                native = site.run(script)
        site.load(page)
        bridged = site.run(script)
    finally:
        plain.shutdown()
    assert bridged.pop("secure") is True
    if native is not None:
        assert native.pop("secure") is True
        if site.engine == "firefox":
            # Firefox's words for it; it has no signals of its own (the bridge's is refused alike).
            assert native.pop("signal")[0] == "TypeError"
            assert native == {call: ["SecurityError", "The operation is insecure."] for call in native}, native
        else:
            assert native == {call: ["SecurityError", "This is an invalid domain."] for call in native}, native
    for call, (name, message) in bridged.items():
        assert name == "SecurityError", (call, name, message)
        assert message.startswith("This is an invalid domain: origin host '127.0.0.1' is an IP address, which cannot be an RP ID"), (call, message)
