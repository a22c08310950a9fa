"""The Python client's Firefox driver (clients/python/authctl_client/firefox.py) as the browser
suites rely on it: a click and typing are a person's input — the page has a user activation, its
key events are trusted — where a script's are not; quitting leaves no process of the browser and
no profile behind; a browser that cannot start, a script that throws, an element that is not there
are named errors."""
import functools
import http.server
import os
import pathlib
import re
import sys
import threading

import pytest

from browser_support import FIREFOX, HAVE_FIREFOX, _firefox_driver, firefox, wait_until

pytestmark = pytest.mark.skipif(not HAVE_FIREFOX, reason="Debian's firefox-esr is not installed")

PAGE = b"""<!doctype html><meta charset="utf-8">
<input id="field"><button id="button">go</button>
<script>
  window.seen = {keys: [], clicks: []};
  document.getElementById('field').addEventListener('keydown', (e) => seen.keys.push([e.key, e.isTrusted]));
  document.getElementById('button').addEventListener('click', (e) => seen.clicks.push([e.isTrusted, navigator.userActivation.isActive]));
</script>"""


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://localhost:{server.server_address[1]}/"
    server.shutdown()


def group_members(group: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                members.append(int(entry))
    return members


def test_a_click_and_typing_are_a_persons_input_and_a_script_is_not(page, tmp_path):
    browser = firefox(tmp_path / "profile", [])
    try:
        browser.get(page)
        assert browser.execute_script("return navigator.userActivation.hasBeenActive") is False
        browser.execute_script("document.getElementById('button').click()")
        browser.find_element("id", "button").click()
        browser.find_element("id", "field").send_keys("ab\n")
        seen = browser.execute_script("return window.seen")
        assert seen["clicks"] == [[False, False], [True, True]]
        assert seen["keys"] == [["a", True], ["b", True], ["Enter", True]]
        assert browser.execute_script("return document.getElementById('field').value") == "ab"
    finally:
        browser.quit()


def test_quitting_leaves_no_process_and_no_profile_of_its_own(page):
    browser = _firefox_driver().Firefox(binary=FIREFOX)
    profile, group = browser.profile, browser.process.pid
    browser.get(page)
    assert len(wait_until(lambda: group_members(group), "the browser's processes")) >= 2, "Firefox runs its content in processes of its own"
    browser.quit()
    assert group_members(group) == []
    assert not profile.exists()


def test_what_goes_wrong_is_named(page, tmp_path):
    driver = _firefox_driver()
    with pytest.raises(driver.FirefoxError, match="session not created: cannot run /nonexistent/firefox"):
        driver.Firefox(profile=tmp_path / "missing", binary="/nonexistent/firefox")
    with driver.Firefox(binary=FIREFOX) as browser:
        browser.get(page)
        with pytest.raises(driver.JavascriptError, match="RangeError: nope"):
            browser.execute_script("throw new RangeError('nope')")
        with pytest.raises(driver.NoSuchElement, match="no such element: id 'absent'"):
            browser.find_element("id", "absent")
        with pytest.raises(TypeError, match="cannot pass object to a page"):
            browser.execute_script("return 1", object())
        with pytest.raises(driver.FirefoxError, match="no such frame"):
            browser.command("browsingContext.navigate", {"context": "no such tab", "url": page})
        # The browser is still there for the next call.
        assert browser.execute_script("return 1 + 1") == 2


# Stand-ins for a Firefox that goes wrong as it starts: silent (never says where its BiDi server
# listens), one that names an address where nothing listens, and one whose BiDi server takes
# commands and answers none.
WRONG_BROWSERS = {
    "silent": ("#!/bin/sh\nexec sleep 600\n", "session not created: Firefox did not start its BiDi server"),
    "unreachable": ("#!/bin/sh\necho 'WebDriver BiDi listening on ws://127.0.0.1:1'\nexec sleep 600\n",
                    "session not created: cannot connect to Firefox's BiDi server at ws://127.0.0.1:1"),
    "mute": (f"""#!{sys.executable}
import socket
from websockets.sync.server import serve
listener = socket.create_server(("127.0.0.1", 0))
print(f"WebDriver BiDi listening on ws://127.0.0.1:{{listener.getsockname()[1]}}", flush=True)
def commands(connection):
    for _ in connection:
        pass
with serve(commands, sock=listener) as server:
    server.serve_forever()
""", "timeout: session.new not answered in 8 s"),
}


@pytest.mark.parametrize("kind", WRONG_BROWSERS)
def test_a_browser_that_does_not_start_its_session_is_a_named_error_that_leaves_nothing(tmp_path, kind):
    """Each is FirefoxError (not the websocket library's own error), in about the browser's
    timeout, with no process of its group and no profile left behind."""
    program, says = WRONG_BROWSERS[kind]
    binary = tmp_path / "firefox"
    binary.write_text(program)
    binary.chmod(0o755)
    driver, made, profiles = _firefox_driver(), [], []
    real_popen, real_mkdtemp = driver.subprocess.Popen, driver.tempfile.mkdtemp

    def popen(*args, **kwargs):
        made.append(real_popen(*args, **kwargs))
        return made[-1]

    def mkdtemp(*args, **kwargs):
        profiles.append(pathlib.Path(real_mkdtemp(*args, **kwargs)))
        return str(profiles[-1])
    driver.subprocess.Popen, driver.tempfile.mkdtemp = popen, mkdtemp
    try:
        with pytest.raises(driver.FirefoxError, match=f"^{re.escape(says)}"):
            driver.Firefox(binary=str(binary), timeout=4)
    finally:
        driver.subprocess.Popen, driver.tempfile.mkdtemp = real_popen, real_mkdtemp
    assert made and made[0].poll() is not None and group_members(made[0].pid) == []
    assert profiles and not profiles[0].exists(), "the profile it made is removed"
