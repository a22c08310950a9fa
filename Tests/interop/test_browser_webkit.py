"""The page bridge in WebKitGTK, which is built without WebAuthn: Debian's WebKitWebDriver drives
authctl-webkit (clients/webkit) under Xvfb, and the bridge, written to the browser's user-script
file, runs at document start in every page and supplies navigator.credentials, PublicKeyCredential
and the Authenticator*Response interfaces as WebKit has them. The example bank
(docs/examples/rp_server.py) on http://localhost verifies the sign-up and the sign-in with
py_webauthn (test_browser_bank_webkit.py runs all of the bank's flows)."""
import functools
import http.server
import importlib.util
import os
import signal
import subprocess
import threading

import pytest
from webauthn import generate_registration_options, options_to_json, verify_registration_response

from browser_support import (DEADLINE, HAVE_WEBKIT, WEBKIT_BROWSER, WEBKIT_MISSING, AuthctlServer, Display, HostProxy, wait_until, webkit,
                             write_user_script)
from conftest import ROOT

pytestmark = pytest.mark.skipif(not HAVE_WEBKIT, reason=WEBKIT_MISSING)

PAGES = ROOT / "Tests" / "interop" / "browser"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def load_bank():
    spec = importlib.util.spec_from_file_location("rp_server", ROOT / "docs" / "examples" / "rp_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    directory = tmp_path_factory.mktemp("webkit")
    pages = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(PAGES)))
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    # The bank on http://localhost (a secure context), its RP ID "localhost".
    bank = load_bank().serve(0, origin="http://localhost")
    threading.Thread(target=bank.serve_forever, daemon=True).start()
    bank.RequestHandlerClass.origin = f"http://localhost:{bank.server_address[1]}"
    display, proxy = Display(), HostProxy()
    authctl = driver = None
    try:
        authctl = AuthctlServer(directory)
        driver = webkit(display, directory, directory / "user-script.js", proxy=proxy)

        class World:
            pass
        world = World()
        world.driver, world.authctl, world.bank = driver, authctl, bank
        world.pages = f"http://localhost:{pages.server_address[1]}"
        world.named_pages = f"http://login.example.localhost:{pages.server_address[1]}"
        world.origin = bank.RequestHandlerClass.origin
        world.account = authctl.call("POST", "/accounts")["id"]  # one device, "phone", PIN 1234
        world.base = f"/accounts/{world.account}/devices/phone"
        world.bridge = authctl.call("GET", f"/bridge.js?account={world.account}&device=phone", text=True)
        yield world
    finally:
        if driver:
            driver.quit()
        if authctl:
            authctl.stop()
        proxy.stop()
        display.stop()
        bank.shutdown()
        pages.shutdown()


def seen(world, script: str):
    write_user_script(world.driver, script)
    world.driver.get(world.pages + "/user-script.html")
    wait_until(lambda: world.driver.execute_script("return document.readyState") == "complete", "the page loaded")
    return world.driver.execute_script("return [window.seenByPage, window.seenByFrame === undefined ? 'no frame yet' : window.seenByFrame]")


def test_the_user_script_runs_before_the_page_in_every_frame_and_is_read_again_at_each_navigation(world):
    assert seen(world, "window.fromUserScript = 'first';") == ["first", "first"]
    # Rewritten between two navigations: the next page gets the new one.
    assert seen(world, "window.fromUserScript = 'second';") == ["second", "second"]
    assert seen(world, "") == [None, None], "an empty file injects nothing"
    os.remove(world.driver.user_script)
    world.driver.get(world.pages + "/user-script.html")
    assert world.driver.execute_script("return [window.seenByPage, window.seenByFrame]") == [None, None], \
        "an absent file injects nothing"


def test_webkitgtk_has_no_webauthn_of_its_own(world):
    write_user_script(world.driver, "")
    world.driver.get(world.pages + "/user-script.html")
    assert world.driver.execute_script(
        "return [typeof PublicKeyCredential, typeof navigator.credentials, typeof Credential, isSecureContext]") == \
        ["undefined", "undefined", "undefined", True]


def run(driver, script: str):
    """`script`, an async function's body, in the page; its value, or what it threw as `{thrown}`."""
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"(async () => {{ {script} }})().then(done, (e) => done({{thrown: e.name + ': ' + e.message}}));")


def test_the_bridge_supplies_webauthn_shaped_as_webkit_has_it(world):
    driver = world.driver
    write_user_script(driver, world.bridge)
    driver.get(world.pages + "/user-script.html")
    shape = run(driver, """
        const names = (o) => Object.getOwnPropertyNames(o).filter((n) => !['length', 'name', 'prototype'].includes(n));
        return {
          chain: Object.getPrototypeOf(PublicKeyCredential) === Credential
            && Object.getPrototypeOf(AuthenticatorAttestationResponse.prototype) === AuthenticatorResponse.prototype,
          credentialStatics: names(Credential), statics: names(PublicKeyCredential),
          prototype: Object.getOwnPropertyNames(PublicKeyCredential.prototype),
          attestation: Object.getOwnPropertyNames(AuthenticatorAttestationResponse.prototype),
          assertion: Object.getOwnPropertyNames(AuthenticatorAssertionResponse.prototype),
          container: Object.getOwnPropertyNames(CredentialsContainer.prototype),
          same: navigator.credentials === navigator.credentials && navigator.credentials instanceof CredentialsContainer,
          global: Object.getOwnPropertyDescriptor(window, 'PublicKeyCredential').enumerable,
          tag: String(navigator.credentials),
        };""")
    assert shape == {
        "chain": True, "credentialStatics": ["isConditionalMediationAvailable"],
        "statics": ["isUserVerifyingPlatformAuthenticatorAvailable", "getClientCapabilities", "signalUnknownCredential",
                    "signalAllAcceptedCredentials", "signalCurrentUserDetails", "parseCreationOptionsFromJSON",
                    "parseRequestOptionsFromJSON"],
        "prototype": ["constructor", "rawId", "response", "authenticatorAttachment", "getClientExtensionResults", "toJSON"],
        "attestation": ["constructor", "attestationObject", "getTransports", "getAuthenticatorData", "getPublicKey",
                        "getPublicKeyAlgorithm"],
        "assertion": ["constructor", "authenticatorData", "signature", "userHandle"],
        "container": ["constructor", "get", "store", "create", "preventSilentAccess"],
        "same": True, "global": False, "tag": "[object CredentialsContainer]",
    }
    # What WebKit's own CredentialsContainer and bindings answer for what is not the bridge's.
    assert run(driver, "return await navigator.credentials.create({})") == \
        {"thrown": "NotSupportedError: Only PublicKeyCredential is supported."}
    assert run(driver, "return await navigator.credentials.get({password: true})") == \
        {"thrown": "NotSupportedError: Only PublicKeyCredential is supported."}
    assert run(driver, "return await navigator.credentials.store({})") == \
        {"thrown": "TypeError: Argument 1 ('credential') to CredentialsContainer.store must be an instance of BasicCredential"}
    assert run(driver, "return await navigator.credentials.preventSilentAccess()") is None
    assert run(driver, "new PublicKeyCredential()") == {"thrown": "TypeError: Illegal constructor"}
    assert run(driver, "return Object.getOwnPropertyDescriptor(PublicKeyCredential.prototype, 'rawId').get.call({})") == \
        {"thrown": "TypeError: The PublicKeyCredential.rawId getter can only be used on instances of PublicKeyCredential"}
    assert run(driver, "return await PublicKeyCredential.isConditionalMediationAvailable()") is True
    assert run(driver, "return await PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable()") is True


def test_the_bank_signs_up_and_in_with_a_passkey_in_webkit(world):
    driver = world.driver
    write_user_script(driver, world.bridge)
    screen = lambda: driver.execute_script("return document.body.dataset.screen")
    text = lambda e: driver.execute_script(f"const e = document.getElementById('{e}'); return e.hidden ? '' : e.textContent")

    def click(element):
        found = driver.find_element("id", element)
        wait_until(lambda: found.is_displayed() and found.is_enabled(), f"#{element} shown")
        found.click()

    driver.get(world.origin + "/")
    wait_until(lambda: driver.execute_script("return document.body.dataset.ready") == "true", "the bank's page ready")
    assert screen() == "sign-in"
    assert driver.execute_script("return !document.getElementById('passkey-option').hidden"), "passkeys offered"
    driver.find_element("id", "username").send_keys("budi")
    driver.find_element("id", "password").send_keys("rahasia")
    driver.execute_script("document.getElementById('password-form').requestSubmit()")
    wait_until(lambda: screen() == "upgrade", "the upgrade offer")
    click("upgrade-accept")  # navigator.credentials.create(), answered by the phone
    wait_until(lambda: "Passkey created" in text("message"), "the passkey created")
    held = world.authctl.call("GET", world.base + "/passkeys")["credentials"]
    bank_user = world.bank.RequestHandlerClass.bank.users["budi"]
    assert list(bank_user["passkeys"]) == [held[0]["id"]], "py_webauthn verified the registration the bank kept"
    click("sign-out")
    wait_until(lambda: screen() == "sign-in", "signed out")
    # The conditional request the page keeps open ends when the passkey button's request begins.
    wait_until(lambda: world.authctl.call("GET", world.base + "/autofill")["pending"], "the autofill request pending")
    click("passkey-sign-in")  # navigator.credentials.get(), verified by the bank
    wait_until(lambda: screen() == "account", "signed in with the passkey")
    assert "Signed in with your passkey" in text("message")



def test_a_name_served_here_is_reached_through_the_proxy(world):
    """WebKitGTK has no --host-resolver-rules: authctl-webkit's --proxy takes every name to the
    SOCKS5 proxy, which connects it to 127.0.0.1."""
    write_user_script(world.driver, "window.fromUserScript = 'named';")
    world.driver.get(world.pages.replace("localhost", "login.example.com") + "/user-script.html")
    assert world.driver.execute_script("return [location.hostname, window.seenByPage]") == ["login.example.com", "named"]


def test_a_localhost_name_is_a_secure_context_where_the_bridge_signs_up(world):
    """A *.localhost name is a secure context in WebKit (and reaches 127.0.0.1 by itself), so the
    bridge answers there for its RP ID, and its page reaches authctl serve on http://127.0.0.1."""
    driver = world.driver
    write_user_script(driver, world.bridge)
    driver.get(world.named_pages + "/user-script.html")
    assert driver.execute_script("return [location.hostname, isSecureContext]") == ["login.example.localhost", True]
    options = generate_registration_options(rp_id="example.localhost", rp_name="Example", user_name="alice", user_id=b"alice")
    made = run(driver, f"""
        const options = PublicKeyCredential.parseCreationOptionsFromJSON({options_to_json(options)});
        return (await navigator.credentials.create({{publicKey: options}})).toJSON();""")
    assert "thrown" not in made, made
    verified = verify_registration_response(credential=made, expected_challenge=options.challenge,
                                            expected_rp_id="example.localhost", expected_origin=world.named_pages)
    assert verified.credential_id


@pytest.fixture
def display():
    display = Display()
    yield display
    display.stop()


def browser_alone(display, directory, *arguments) -> tuple[subprocess.Popen, "callable"]:
    """authctl-webkit by itself (no WebDriver) showing about:blank on `display`: the process, and
    what it has said on stderr so far."""
    log = directory / "stderr"
    with open(log, "w") as stderr:
        process = subprocess.Popen([WEBKIT_BROWSER, *arguments], env=dict(os.environ, DISPLAY=display.name),
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    return process, log.read_text


@pytest.mark.parametrize("kind, says", [
    ("fifo", "is not a regular file"), ("directory", "is not a regular file"), ("symlink to a fifo", "is not a regular file"),
    ("over 16 MiB", "is larger than 16 MiB"),
])
def test_a_user_script_that_is_no_regular_file_or_too_large_is_refused_unread(display, tmp_path, kind, says):
    """authctl-webkit opens --user-script without waiting and takes only a regular file of 16 MiB
    at most: a FIFO nobody writes held it before its first window, a device never ends."""
    path = tmp_path / "user-script.js"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink to a fifo":
        os.mkfifo(tmp_path / "fifo")
        path.symlink_to(tmp_path / "fifo")
    else:
        with open(path, "wb") as large:
            large.truncate((16 << 20) + 1)
    process, said = browser_alone(display, tmp_path, f"--user-script={path}", "about:blank")
    try:
        wait_until(lambda: says in said(), f"authctl-webkit says the user script {says}")
        assert process.poll() is None, "it goes on without one"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert code == 0, said()


@pytest.mark.parametrize("argument, says", [("--gtk-module={directory}/module.so", "--gtk-module"), ("--proxy=notaurl", "--proxy takes a URL")])
def test_a_bad_command_line_is_64(display, tmp_path, argument, says):
    """WebKitWebDriver passes on the client's arguments: a --gtk-module there would be code loaded
    into the browser, so authctl-webkit takes none of GTK's options; a proxy WebKit cannot parse
    was a critical warning and no proxy at all."""
    process, said = browser_alone(display, tmp_path, "--automation", argument.format(directory=tmp_path))
    try:
        code = process.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"authctl-webkit took {argument} and ran: {said()}")
    assert code == 64 and says in said(), said()
