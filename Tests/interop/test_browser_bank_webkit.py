"""The example bank's flows (test_browser_bank.py's, run here as they are written) in WebKitGTK
through the page bridge: two authctl-webkit browsers driven by Debian's WebKitWebDriver under an
Xvfb of the module's own — the phone and the laptop of one account, syncing on its virtual
clock. The bank is on http://localhost (a secure context, its RP ID "localhost"): WebKitGTK blocks
an https:// page's calls to authctl serve on http://127.0.0.1 as mixed content (docs/browser.md,
"WebKitGTK"). Screenshots are bank-webkit-*.png in $AUTHCTL_SCREENSHOTS."""
import threading

import pytest

import test_browser_bank as bank_suite
from browser_support import HAVE_WEBKIT, WEBKIT_MISSING, AuthctlServer, Display, webkit, write_user_script
# The flows, in test_browser_bank.py's order (each starts where the one before left the
# customer), collected here against this module's world.
from test_browser_bank import test_the_password_sign_in_offers_a_passkey_at_most_three_times  # noqa: F401,E402
from test_browser_bank import test_accepting_the_offer_makes_a_passkey_the_bank_verified  # noqa: F401,E402
from test_browser_bank import test_the_laptop_signs_in_with_the_passkey_only_once_it_synced  # noqa: F401,E402
from test_browser_bank import test_a_transfer_with_a_wrong_pin_is_not_sent_and_the_right_one_sends_it  # noqa: F401,E402
from test_browser_bank import test_a_cancelled_passkey_sign_in_resumes_the_autofill_request  # noqa: F401,E402
from test_browser_bank import test_a_device_without_passkey_support_hides_the_passkey_button  # noqa: F401,E402
from test_browser_bank import test_a_passkey_the_bank_forgot_is_signalled_and_leaves_both_devices  # noqa: F401,E402

pytestmark = pytest.mark.skipif(not HAVE_WEBKIT, reason=WEBKIT_MISSING)


class Browser(bank_suite.Browser):
    def shot(self, name: str):
        bank_suite.SHOTS.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(bank_suite.SHOTS / f"bank-webkit-{name}.png"))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bank-webkit")
    bank = bank_suite.load_bank().serve(0, origin="http://localhost")
    world = bank_suite.World()
    world.mode = "bridge"
    world.origin = f"http://localhost:{bank.server_address[1]}"
    bank.RequestHandlerClass.origin = world.origin
    threading.Thread(target=bank.serve_forever, daemon=True).start()
    world.bank = bank
    display = Display()
    world.authctl = AuthctlServer(directory)
    account = world.authctl.call("POST", "/accounts", {
        "devices": [{"name": "phone", "pin": "1234"}, {"name": "laptop", "pin": "9753"}],
        "clock": {"mode": "virtual", "start": "2026-01-01T00:00:00Z"}, "sync": {"upload": "2s", "download": "3s"}})
    world.account = account["id"]
    browsers = []
    try:
        for device in ("phone", "laptop"):
            scratch = directory / device
            scratch.mkdir()
            driver = webkit(display, scratch, scratch / "bridge.js")
            browsers.append(Browser(world, device, driver))
            driver.set_window_rect(width=520, height=900)
            write_user_script(driver, world.authctl.call("GET", f"/bridge.js?account={world.account}&device={device}", text=True))
        world.phone, world.laptop = browsers
        yield world
    finally:
        for browser in browsers:
            browser.driver.quit()
        world.authctl.stop()
        display.stop()
        bank.shutdown()
