"""The example bank's web front end (docs/examples/bank/) in headless browsers, its passkeys on
authctl serve: one account, two browsers — the phone and the laptop — whose devices sync on the
account's virtual clock. Everything runs through the page bridge (GET /bridge.js, injected before
the page loads) in each engine (Chromium, Firefox ESR, WebKitGTK), and through the browser extension
(clients/chrome-extension, Chrome's webAuthenticationProxy) in Chromium. The bank (docs/examples/rp_server.py) verifies every response with
py_webauthn. The tests run in order, each from where the one before left the customer;
screenshots of the flows go to $AUTHCTL_SCREENSHOTS (default .build/screenshots), which
docs/browser.md shows.

Chrome does not hand conditional (autofill) requests to an extension that proxies WebAuthn —
isConditionalMediationAvailable() is false there — so with the extension the laptop signs in
with the passkey button where the bridge's laptop picks from the autofill list."""
import importlib.util
import json
import os
import pathlib
import shutil
import threading

import pytest

from browser_support import AuthctlServer, bridge_sides, certificate, chromium, engine_params, open_browser, wait_until
from conftest import ROOT

HOST = "yourbank.example"
SHOTS = pathlib.Path(os.environ.get("AUTHCTL_SCREENSHOTS", ROOT / ".build" / "screenshots"))
EXTENSION = ROOT / "clients" / "chrome-extension"


def load_bank():
    spec = importlib.util.spec_from_file_location("rp_server", ROOT / "docs" / "examples" / "rp_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Browser:
    """One device's browser: Chromium whose page's WebAuthn calls go to `device` of the account."""

    def __init__(self, world, device: str, driver):
        self.world, self.device, self.driver = world, device, driver
        self.base = f"/accounts/{world.account}/devices/{device}"

    def open(self):
        self.driver.get(self.world.origin + "/")
        wait_until(lambda: self.driver.execute_script("return document.body.dataset.ready") == "true", "the bank's page ready")

    def screen(self) -> str:
        return self.driver.execute_script("return document.body.dataset.screen")

    def wait_screen(self, screen: str):
        wait_until(lambda: self.screen() == screen, f"the {screen} screen on the {self.device}")

    def text(self, element: str) -> str:
        return self.driver.execute_script(f"const e = document.getElementById('{element}'); return e.hidden ? '' : e.textContent")

    def visible(self, element: str) -> bool:
        return self.driver.execute_script(f"return !document.getElementById('{element}').hidden")

    def click(self, element: str):
        # Shown by the page's own script, at times after its screen is (the passkey button once
        # the page has asked whether passkeys are available): clicked once the person could.
        found = self.driver.find_element("id", element)
        wait_until(lambda: found.is_displayed() and found.is_enabled(), f"#{element} shown on the {self.device}")
        found.click()

    def type(self, element: str, text: str):
        field = self.driver.find_element("id", element)
        field.clear()
        field.send_keys(text)

    def sign_in_with_password(self):
        self.type("username", "budi")
        self.type("password", "rahasia")
        self.driver.execute_script("document.getElementById('password-form').requestSubmit()")

    def autofill(self) -> dict:
        return self.world.authctl.call("GET", self.base + "/autofill")

    def passkeys(self) -> list:
        return self.world.authctl.call("GET", self.base + "/passkeys")["credentials"]

    def shot(self, name: str):
        SHOTS.mkdir(parents=True, exist_ok=True)
        # The bridge in Chromium is the bank's first screenshots; the others say what they show.
        prefix = {"chromium-bridge": "bank", "chromium-extension": "bank-extension"}.get(self.world.side, f"bank-{self.world.engine}")
        self.driver.save_screenshot(str(SHOTS / f"{prefix}-{name}.png"))


class World:
    pass


# The page bridge in every engine; the extension in Chromium, the one browser it is made for.
@pytest.fixture(scope="module", params=engine_params(*bridge_sides(), "chromium-extension"))
def world(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(f"bank-{request.param}")
    tls, spki = certificate(directory, HOST)
    bank = load_bank().serve(0, tls=tls)
    world = World()
    world.side = request.param
    world.engine, world.mode = request.param.split("-")
    world.origin = f"https://{HOST}:{bank.server_address[1]}"
    bank.RequestHandlerClass.origin = world.origin
    threading.Thread(target=bank.serve_forever, daemon=True).start()
    world.bank = bank
    world.authctl = AuthctlServer(directory)
    account = world.authctl.call("POST", "/accounts", {
        "devices": [{"name": "phone", "pin": "1234"}, {"name": "laptop", "pin": "9753"}],
        "clock": {"mode": "virtual", "start": "2026-01-01T00:00:00Z"}, "sync": {"upload": "2s", "download": "3s"}})
    world.account = account["id"]
    browsers = []
    try:
        for device in ("phone", "laptop"):
            if world.mode == "bridge":
                bridge = world.authctl.call("GET", f"/bridge.js?account={world.account}&device={device}", text=True)
                driver = open_browser(world.engine, directory / f"profile-{device}", [HOST], spki, bridge=bridge)
            else:
                extension = directory / f"extension-{device}"
                shutil.copytree(EXTENSION, extension)
                (extension / "config.json").write_text(json.dumps({"server": world.authctl.url, "token": world.authctl.token,
                                                                    "account": world.account, "device": device}))
                driver = chromium(directory / f"profile-{device}", [HOST], spki, extension=extension)
            browsers.append(Browser(world, device, driver))
        world.phone, world.laptop = browsers
        yield world
    finally:
        for browser in browsers:
            browser.driver.quit()
        world.authctl.stop()
        bank.shutdown()


def bank_user(world) -> dict:
    return world.bank.RequestHandlerClass.bank.users["budi"]


def test_the_password_sign_in_offers_a_passkey_at_most_three_times(world):
    phone = world.phone
    phone.open()
    phone.wait_screen("sign-in")
    assert phone.visible("passkey-option"), "a phone with passkeys offers the passkey button"
    phone.shot("sign-in")
    for offer in (1, 2, 3):
        phone.sign_in_with_password()
        phone.wait_screen("upgrade")
        if offer == 1:
            phone.shot("upgrade-offer")
        phone.click("upgrade-decline")
        phone.wait_screen("account")
        phone.click("sign-out")
        phone.wait_screen("sign-in")
    assert bank_user(world)["declined"] == 3
    phone.sign_in_with_password()
    phone.wait_screen("account")  # no fourth offer
    assert phone.visible("create-passkey") and phone.passkeys() == []
    phone.click("sign-out")
    phone.wait_screen("sign-in")


def test_accepting_the_offer_makes_a_passkey_the_bank_verified(world):
    phone = world.phone
    bank_user(world)["declined"] = 0  # a customer the bank offers it to again
    phone.sign_in_with_password()
    phone.wait_screen("upgrade")
    phone.click("upgrade-accept")
    phone.wait_screen("account")
    wait_until(lambda: "Passkey created" in phone.text("message"), "the passkey created")
    held = phone.passkeys()
    assert len(held) == 1 and held[0]["userName"] == "budi"
    assert list(bank_user(world)["passkeys"]) == [held[0]["id"]], "the bank verified and kept the same passkey"
    phone.shot("passkey-created")


def test_the_laptop_signs_in_with_the_passkey_only_once_it_synced(world):
    laptop = world.laptop
    laptop.open()
    laptop.wait_screen("sign-in")
    if world.mode == "extension":
        # No passkey on the laptop yet: the browser says NotAllowedError, the page keeps the
        # password form; once the keychain synced the same button signs in.
        laptop.click("passkey-sign-in")
        wait_until(lambda: "no passkey was found" in laptop.text("message"), "no passkey before the sync")
        world.authctl.call("POST", f"/accounts/{world.account}/clock", {"advance": "5s"})
        assert [p["userName"] for p in laptop.passkeys()] == ["budi"]
        laptop.click("passkey-sign-in")
        laptop.wait_screen("account")
        assert "Signed in with your passkey" in laptop.text("message")
        return
    wait_until(lambda: laptop.autofill()["pending"], "the laptop's autofill request pending")
    assert laptop.autofill()["offered"] == [], "nothing to offer before the keychain synced"
    world.authctl.call("POST", f"/accounts/{world.account}/clock", {"advance": "4999ms"})
    assert laptop.autofill()["offered"] == []
    world.authctl.call("POST", f"/accounts/{world.account}/clock", {"advance": "1ms"})
    offered = laptop.autofill()["offered"]
    assert [o["userName"] for o in offered] == ["budi"]
    laptop.shot("autofill")
    world.authctl.call("POST", laptop.base + "/autofill", {"credentialId": offered[0]["credentialId"]})
    laptop.wait_screen("account")
    assert "Signed in with your passkey" in laptop.text("message")


def test_a_transfer_with_a_wrong_pin_is_not_sent_and_the_right_one_sends_it(world):
    laptop = world.laptop
    world.authctl.call("POST", laptop.base + "/person", {"userAction": "wrong-pin"})
    laptop.type("amount", "250000")
    laptop.driver.execute_script("document.getElementById('transfer-form').requestSubmit()")
    wait_until(lambda: "couldn't verify" in laptop.text("transfer-result"), "the transfer refused")
    laptop.shot("transfer-refused")
    laptop.driver.execute_script("document.getElementById('transfer-form').requestSubmit()")
    wait_until(lambda: "approved" in laptop.text("transfer-result"), "the transfer approved")
    assert laptop.text("transfer-result") == "Transfer of Rp 250000 approved."
    laptop.shot("transfer-approved")


def test_a_cancelled_passkey_sign_in_resumes_the_autofill_request(world):
    laptop = world.laptop
    laptop.click("sign-out")
    laptop.wait_screen("sign-in")
    if world.mode == "bridge":
        wait_until(lambda: laptop.autofill()["pending"], "the autofill request pending")
    world.authctl.call("POST", laptop.base + "/person", {"userAction": "cancel"})
    laptop.click("passkey-sign-in")
    wait_until(lambda: "cancelled" in laptop.text("message"), "the cancel explained")
    assert laptop.screen() == "sign-in"
    assert world.authctl.call("GET", laptop.base + "/person") == {"queued": []}
    if world.mode == "bridge":
        wait_until(lambda: laptop.autofill()["pending"], "the autofill request resumed")


def test_a_device_without_passkey_support_hides_the_passkey_button(world):
    laptop = world.laptop
    world.authctl.call("POST", laptop.base + "/unsupported")
    laptop.open()
    laptop.wait_screen("sign-in")
    assert not laptop.visible("passkey-option")
    laptop.shot("no-passkey-support")
    world.authctl.call("POST", laptop.base + "/supported")
    laptop.open()
    laptop.wait_screen("sign-in")
    assert laptop.visible("passkey-option")


def test_a_passkey_the_bank_forgot_is_signalled_and_leaves_both_devices(world):
    phone, laptop = world.phone, world.laptop
    credential = phone.passkeys()[0]["id"]
    assert [p["id"] for p in laptop.passkeys()] == [credential]
    # The customer removes it on the bank's account page (the bank forgets it)...
    phone.open()
    phone.wait_screen("account")
    phone.driver.find_element("css selector", "#passkey-list button").click()
    wait_until(lambda: bank_user(world)["passkeys"] == {}, "the bank forgot the passkey")
    # The account page shown again without it, before the customer signs out (a sign-out while the
    # page still redraws the account ends on the account screen).
    wait_until(lambda: phone.visible("no-passkeys"), "the account page without the passkey")
    phone.click("sign-out")
    phone.wait_screen("sign-in")
    # ... and later signs in with it: the bank refuses it, and the page signals it unknown.
    if world.mode == "bridge":
        wait_until(lambda: phone.autofill()["pending"], "the phone's autofill request pending")
        world.authctl.call("POST", phone.base + "/autofill", {"credentialId": credential})
    else:
        phone.click("passkey-sign-in")
    wait_until(lambda: "removed from your account" in phone.text("message"), "the refusal explained")
    wait_until(lambda: phone.passkeys() == [], "the phone's keychain removed it")
    assert [p["id"] for p in laptop.passkeys()] == [credential], "the laptop has it until the removal syncs"
    world.authctl.call("POST", f"/accounts/{world.account}/clock", {"advance": "5s"})
    assert laptop.passkeys() == []
