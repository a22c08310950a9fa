"""Headless Firefox over WebDriver BiDi, with authctl's page bridge preloaded.

Firefox is driven over WebDriver BiDi alone (no geckodriver): ``firefox-esr --headless
--remote-debugging-port 0 --profile DIR`` and a websocket (PyPI ``websockets``, the ``firefox``
extra). The bridge (``GET /bridge.js?account=…&device=…``) is a preload script
(``script.addPreloadScript``): it runs before any of the page's scripts, in every frame, at every
navigation. Clicks and typing are trusted input (``input.performActions``): a page sees a real user
activation, as the bridge tells the server. ::

    from authctl_client import Server
    from authctl_client.firefox import Firefox

    with Server() as server, server.create_account() as account, Firefox() as browser:
        browser.preload(account.device("phone").bridge_script())
        browser.get("http://localhost:8765/")
        browser.find_element("id", "upgrade-accept").click()

The surface is Selenium's where the suites need one (``get``, ``execute_script``,
``execute_async_script``, ``find_element(By.ID / "css selector", …)`` → ``click``, ``send_keys``,
``clear``, ``is_displayed``, ``is_enabled``; ``switch_to.frame``/``default_content``/
``new_window``/``window``; ``save_screenshot``; ``get_log("browser")``; ``quit``), so a test written
for Selenium's Chromium runs in Firefox with only its start changed."""
from __future__ import annotations

import base64
import contextlib
import itertools
import json
import math
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, Iterable

FIREFOX = os.environ.get("AUTHCTL_FIREFOX", "firefox-esr")
DEADLINE = 60.0
# Preferences of the profile: no first-run pages or updates, and `hosts` (a test's host names) that
# resolve to the loopback address as Chromium's --host-resolver-rules makes them.
PREFERENCES = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "app.update.enabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    # document.featurePolicy, which Firefox keeps from pages unless asked: the page bridge reads a
    # cross-origin frame's permissions policy (publickey-credentials-get/-create) from it, as the
    # browser's own WebAuthn reads it.
    "dom.security.featurePolicy.webidl.enabled": True,
}
KEYS = {"\n": "\uE007", "\r": "\uE007", "\t": "\uE004", "\b": "\uE003"}


class FirefoxError(Exception):
    """A BiDi command that failed (``error`` and ``message`` as Firefox answered), or a browser
    that did not start."""

    def __init__(self, error: str, message: str = ""):
        super().__init__(f"{error}: {message}" if message else error)
        self.error, self.message = error, message


class JavascriptError(FirefoxError):
    """A script that threw: ``message`` is the exception's text as Firefox gives it."""


class NoSuchElement(FirefoxError):
    pass


def _local(value: Any) -> dict:
    """A Python value as a BiDi LocalValue (an Element as its shared reference)."""
    if isinstance(value, Element):
        return {"sharedId": value.shared_id}
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, (int, float)):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return {"type": "number", "value": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
        return {"type": "number", "value": value}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, (list, tuple)):
        return {"type": "array", "value": [_local(v) for v in value]}
    if isinstance(value, dict):
        return {"type": "object", "value": [[str(k), _local(v)] for k, v in value.items()]}
    raise TypeError(f"cannot pass {type(value).__name__} to a page")


class Firefox:
    """One headless Firefox ESR, its BiDi session, and the tab it opened with."""

    def __init__(self, profile: str | os.PathLike | None = None, hosts: Iterable[str] = (), binary: str = FIREFOX,
                 window_size: tuple[int, int] = (520, 900), accept_insecure_certs: bool = True, timeout: float = DEADLINE,
                 virtual_authenticators: bool = False):
        from websockets.exceptions import InvalidHandshake
        from websockets.sync.client import connect

        self.timeout = timeout
        self._own_profile = profile is None
        self.profile = pathlib.Path(tempfile.mkdtemp(prefix="authctl-firefox-") if profile is None else profile)
        self.profile.mkdir(parents=True, exist_ok=True)
        preferences = dict(PREFERENCES)
        hosts = list(hosts)
        if hosts:
            # Every name the browser resolves goes to the loopback address: the test's own hosts
            # (Firefox has no per-name rule) and nothing outside the machine.
            preferences["network.dns.forceResolve"] = "127.0.0.1"
            preferences["network.dns.disableIPv6"] = True
        if virtual_authenticators:
            # Firefox's own WebAuthn answered by the authenticators add_virtual_authenticator adds
            # (its test token), never by a security key on the machine.
            preferences["security.webauth.webauthn_enable_softtoken"] = True
            preferences["security.webauth.webauthn_enable_usbtoken"] = False
        with open(self.profile / "user.js", "w") as prefs:
            for name, value in preferences.items():
                prefs.write(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n")
        self._log = open(self.profile / "firefox.log", "w+")
        executable = shutil.which(binary) or binary
        try:
            # Virtual authenticators are added from the browser's own (chrome) scope, which a BiDi
            # session reaches only with --remote-allow-system-access.
            self.process = subprocess.Popen([executable, "--headless", "--no-remote", "--remote-debugging-port", "0",
                                             *(["--remote-allow-system-access"] if virtual_authenticators else []),
                                             "--profile", str(self.profile), "about:blank"],
                                            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
                                            env={**os.environ, "MOZ_HEADLESS": "1"})
        except OSError as error:
            self._log.close()
            if self._own_profile:
                shutil.rmtree(self.profile, ignore_errors=True)
            raise FirefoxError("session not created", f"cannot run {binary}: {error.strerror}") from None
        self._ids = itertools.count(1)
        self._events: list[dict] = []
        self._lock = threading.Lock()
        self._closing = contextlib.ExitStack()
        try:
            address = self._listening()
            try:
                self._socket = self._closing.enter_context(connect(address + "/session", max_size=None, open_timeout=timeout))
            except (OSError, TimeoutError, InvalidHandshake) as error:
                raise FirefoxError("session not created", f"cannot connect to Firefox's BiDi server at {address}: {error}") from None
            self.session = self.command("session.new", {"capabilities": {"alwaysMatch": {
                "acceptInsecureCerts": accept_insecure_certs, "unhandledPromptBehavior": {"default": "ignore"}}}})
            self.command("session.subscribe", {"events": ["log.entryAdded"]})
            # A tab of the session's own in front, its document focused (the one Firefox opened
            # with never has focus in headless mode, and Firefox's WebAuthn refuses a page
            # without it: NotAllowedError "CredentialsContainer request is not allowed.").
            first = self._top_level()[0]["context"]
            self.context = self.command("browsingContext.create", {"type": "tab"})["context"]
            self.command("browsingContext.close", {"context": first})
            self._main = self.context
            self._frames: list[str] = []
            self._preloads: list[str] = []
            self.window_size = window_size
            self.command("browsingContext.setViewport", {"context": self.context,
                                                          "viewport": {"width": window_size[0], "height": window_size[1]}})
        except BaseException:
            self.quit()
            raise
        self.switch_to = _SwitchTo(self)

    # The process and the protocol.
    def _listening(self) -> str:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            self._log.seek(0)
            found = re.search(r"WebDriver BiDi listening on (ws://\S+)", self._log.read())
            if found:
                return found.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self._log.seek(0)
        raise FirefoxError("session not created", f"Firefox did not start its BiDi server: {self._log.read()[-2000:]}")

    def command(self, method: str, params: dict | None = None, timeout: float | None = None) -> dict:
        """One BiDi command; its result, or FirefoxError with Firefox's error — "timeout" when it
        is not answered within `timeout` seconds (twice the browser's), "no such window" when
        Firefox has closed the connection (it exited or crashed)."""
        from websockets.exceptions import ConnectionClosed

        with self._lock:
            ident = next(self._ids)
            wait = self.timeout * 2 if timeout is None else timeout
            deadline = time.monotonic() + wait
            try:
                self._socket.send(json.dumps({"id": ident, "method": method, "params": params or {}}))
            except ConnectionClosed:
                raise FirefoxError("no such window", f"{method}: Firefox closed its BiDi connection") from None
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise FirefoxError("timeout", f"{method} not answered in {wait:g} s")
                try:
                    message = json.loads(self._socket.recv(timeout=left))
                except TimeoutError:
                    raise FirefoxError("timeout", f"{method} not answered in {wait:g} s") from None
                except ConnectionClosed:
                    raise FirefoxError("no such window", f"{method}: Firefox closed its BiDi connection") from None
                if message.get("type") == "event":
                    self._events.append(message)
                    continue
                if message.get("id") != ident:
                    continue
                if message.get("type") == "error":
                    raise FirefoxError(message.get("error", "error"), message.get("message", ""))
                return message["result"]

    def _top_level(self) -> list[dict]:
        return self.command("browsingContext.getTree", {"maxDepth": 0})["contexts"]

    # Pages.
    def preload(self, source: str, every_tab: bool = False) -> str:
        """Adds `source` (a script, as Playwright's add_init_script takes one) to run before the
        page's own scripts in every frame of this tab — or of every tab — at every navigation."""
        params = {"functionDeclaration": "() => {\n" + source + "\n}"}
        if not every_tab:
            params["contexts"] = [self.context]
        script = self.command("script.addPreloadScript", params)["script"]
        self._preloads.append(script)
        return script

    def get(self, url: str):
        self._frames = []
        self.command("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def refresh(self):
        """Reloads the tab's page and waits for the load."""
        self._frames = []
        self.command("browsingContext.reload", {"context": self.context, "wait": "complete"})

    @property
    def current_url(self) -> str:
        return self.execute_script("return location.href")

    def _target(self) -> dict:
        return {"context": self._frames[-1] if self._frames else self.context}

    def call(self, declaration: str, *args, await_promise: bool = True):
        """`declaration` (a function) called with `args` in the current frame; its value, promises
        awaited."""
        result = self.command("script.callFunction", {
            "functionDeclaration": declaration, "arguments": [_local(a) for a in args], "target": self._target(),
            "awaitPromise": await_promise, "userActivation": False,
            "serializationOptions": {"maxObjectDepth": 64, "maxDomDepth": 0}})
        if result["type"] == "exception":
            details = result["exceptionDetails"]
            raise JavascriptError("javascript error", details.get("text", ""))
        return self._value(result["result"])

    def execute_script(self, script: str, *args):
        """Selenium's: `script` is a function body over `arguments`; its return value."""
        return self.call("function() {\n" + script + "\n}", *args)

    def execute_async_script(self, script: str, *args):
        """Selenium's: the script's last argument is the callback its value is passed to."""
        return self.call("function() { const args = Array.from(arguments); return new Promise((resolve) => {"
                         " args.push(resolve); (function() {\n" + script + "\n}).apply(this, args); }); }", *args)

    def evaluate(self, expression: str):
        """`expression` evaluated in the current frame; promises awaited."""
        result = self.command("script.evaluate", {"expression": expression, "target": self._target(), "awaitPromise": True,
                                                  "serializationOptions": {"maxObjectDepth": 64}})
        if result["type"] == "exception":
            raise JavascriptError("javascript error", result["exceptionDetails"].get("text", ""))
        return self._value(result["result"])

    def _value(self, remote: dict):
        kind, value = remote["type"], remote.get("value")
        if kind in ("undefined", "null"):
            return None
        if kind == "number":
            return {"NaN": math.nan, "-0": -0.0, "Infinity": math.inf, "-Infinity": -math.inf}.get(value, value)
        if kind in ("string", "boolean", "bigint"):
            return value
        if kind in ("array", "set", "nodelist", "htmlcollection"):
            return [self._value(v) for v in value or []]
        if kind in ("object", "map"):
            return {(k if isinstance(k, str) else str(self._value(k))): self._value(v) for k, v in value or []}
        if kind == "node":
            return Element(self, remote["sharedId"])
        if kind == "window":
            return {"context": value["context"]}
        if kind == "date":
            return value
        return {"type": kind}

    def wait_for(self, script: str, *args, timeout: float | None = None):
        """Runs `script` (as execute_script) until it returns something true, which it returns;
        TimeoutError after `timeout` seconds (the browser's)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        last = None
        while time.monotonic() < deadline:
            try:
                last = self.execute_script(script, *args)
            except JavascriptError as error:  # a page between loads
                last = error
            else:
                if last:
                    return last
            time.sleep(0.05)
        raise TimeoutError(f"waited for {script!r} (last: {last!r})")

    def find_element(self, by: str, value: str) -> "Element":
        """By "id", "css selector" or "tag name", as Selenium's `find_element`."""
        scripts = {"id": "return document.getElementById(arguments[0])",
                   "css selector": "return document.querySelector(arguments[0])",
                   "tag name": "return document.getElementsByTagName(arguments[0])[0]"}
        if by not in scripts:
            raise FirefoxError("invalid argument", f"find_element by {by!r}")
        found = self.execute_script(scripts[by], value)
        if not isinstance(found, Element):
            raise NoSuchElement("no such element", f"{by} {value!r}")
        return found

    def add_virtual_authenticator(self, protocol: str = "ctap2_1", transport: str = "internal", has_resident_key: bool = True,
                                  has_user_verification: bool = True, is_user_consenting: bool = True,
                                  is_user_verified: bool = True) -> str:
        """Adds a virtual authenticator to Firefox's own WebAuthn (WebAuthn §11's Add Virtual
        Authenticator, which Firefox offers WebDriver classic but not BiDi), for every tab; its id.
        Needs `virtual_authenticators=True`."""
        chrome = self.command("browsingContext.getTree", {"maxDepth": 0, "moz:scope": "chrome"})["contexts"][0]["context"]
        result = self.command("script.callFunction", {
            "functionDeclaration": "(...args) => Cc['@mozilla.org/webauthn/service;1'].getService(Ci.nsIWebAuthnService)"
                                   ".addVirtualAuthenticator(...args)",
            "arguments": [_local(a) for a in (protocol, transport, has_resident_key, has_user_verification,
                                              is_user_consenting, is_user_verified)],
            "target": {"context": chrome}, "awaitPromise": True})
        if result["type"] == "exception":
            raise JavascriptError("javascript error", result["exceptionDetails"].get("text", ""))
        return self._value(result["result"])

    # Input: trusted, as a person's.
    def _actions(self, actions: list[dict]):
        self.command("input.performActions", {"context": self._main if not self._frames else self._frames[-1],
                                              "actions": actions})
        self.command("input.releaseActions", {"context": self._main if not self._frames else self._frames[-1]})

    def type_keys(self, text: str):
        """Types `text` into what has focus, key by key ("\\n" is Enter)."""
        keys = []
        for character in text:
            key = KEYS.get(character, character)
            keys += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
        self._actions([{"type": "key", "id": "keyboard", "actions": keys}])

    # Windows.
    @property
    def current_window_handle(self) -> str:
        return self.context

    @property
    def window_handles(self) -> list[str]:
        return [c["context"] for c in self._top_level()]

    def save_screenshot(self, path: str | os.PathLike) -> bool:
        data = self.command("browsingContext.captureScreenshot", {"context": self.context})["data"]
        pathlib.Path(path).write_bytes(base64.b64decode(data))
        return True

    def get_screenshot_as_png(self) -> bytes:
        return base64.b64decode(self.command("browsingContext.captureScreenshot", {"context": self.context})["data"])

    def get_log(self, kind: str = "browser") -> list[dict]:
        """The console entries since the last call, as Selenium's Chromium gives them: `level`
        (SEVERE for an error, WARNING, INFO), `message`, `timestamp`."""
        self.command("session.status")  # whatever was sent before this is read
        entries = [e["params"] for e in self._events if e.get("method") == "log.entryAdded"]
        self._events = [e for e in self._events if e.get("method") != "log.entryAdded"]
        levels = {"error": "SEVERE", "warn": "WARNING", "info": "INFO", "debug": "DEBUG"}
        return [{"level": levels.get(e.get("level"), "INFO"), "message": e.get("text") or "", "timestamp": e.get("timestamp"),
                 "source": e.get("type")} for e in entries]

    def quit(self):
        """Ends the session and the browser — every process it started — and removes a profile
        this made."""
        socket = getattr(self, "_socket", None)
        closing = False
        if socket is not None:
            try:
                # Not the full wait of a command: a browser that answers nothing is ended below.
                self.command("browser.close", timeout=self.timeout / 2)
                closing = True
            except Exception:
                pass
            try:
                self._closing.close()
            except Exception:
                pass
            self._socket = None
        if closing and self.process.poll() is None:  # it was asked to exit: a moment to do so
            try:
                self.process.wait(timeout=self.timeout / 2)
            except subprocess.TimeoutExpired:
                pass
        # Firefox's content processes are in its session (its own process group): none outlives it.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.process.poll() is None:
            self.process.wait(timeout=self.timeout)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:  # until the last of them is gone
            try:
                os.killpg(self.process.pid, 0)
            except (ProcessLookupError, PermissionError):
                break
            time.sleep(0.05)
        self._log.close()
        if self._own_profile:
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Firefox":
        return self

    def __exit__(self, *exc):
        self.quit()

    # Selenium's timeouts, for a test written for it: each command here waits `timeout`.
    def set_script_timeout(self, seconds: float):
        self.timeout = max(self.timeout, seconds)

    set_page_load_timeout = set_script_timeout


class Element:
    """A page's element, by its BiDi shared reference."""

    def __init__(self, browser: Firefox, shared_id: str):
        self.browser, self.shared_id = browser, shared_id

    def _run(self, body: str, *args):
        return self.browser.call("function(e, ...a) {\n" + body + "\n}", self, *args)

    def is_displayed(self) -> bool:
        return bool(self._run("return e.isConnected && !e.closest('[hidden]') && e.getClientRects().length > 0 "
                              "&& getComputedStyle(e).visibility !== 'hidden'"))

    def is_enabled(self) -> bool:
        return not self._run("return !!e.disabled")

    @property
    def text(self) -> str:
        return self._run("return e.innerText")

    def get_attribute(self, name: str):
        return self._run("return a[0] in e ? e[a[0]] : e.getAttribute(a[0])", name)

    def click(self):
        """A person's click in the middle of the element, scrolled into view first."""
        self._run("e.scrollIntoView({block: 'center', inline: 'center'})")
        self.browser._actions([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
            {"type": "pointerMove", "x": 0, "y": 0, "origin": {"type": "element", "element": {"sharedId": self.shared_id}}},
            {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}])

    def send_keys(self, text: str):
        """Focuses the element (the caret at its end) and types `text`, key by key."""
        self._run("e.focus(); if (typeof e.setSelectionRange === 'function' && typeof e.value === 'string') "
                  "{ try { e.setSelectionRange(e.value.length, e.value.length); } catch {} }")
        self.browser.type_keys(text)

    def clear(self):
        self._run("e.focus(); e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); "
                  "e.dispatchEvent(new Event('change', {bubbles: true}))")

    def __eq__(self, other):
        return isinstance(other, Element) and other.shared_id == self.shared_id

    def __hash__(self):
        return hash(self.shared_id)


class _SwitchTo:
    def __init__(self, browser: Firefox):
        self.browser = browser

    def frame(self, element: "Element | str"):
        """Into the frame `element` (an iframe, or its id or name) holds: its browsing context."""
        if isinstance(element, str):
            found = self.browser.execute_script("return document.getElementById(arguments[0]) || document.getElementsByName(arguments[0])[0]",
                                                element)
            if not isinstance(found, Element):
                raise NoSuchElement("no such frame", element)
            element = found
        window = element._run("return e.contentWindow")
        self.browser._frames.append(window["context"])

    def default_content(self):
        self.browser._frames = []

    def new_window(self, kind: str = "tab"):
        made = self.browser.command("browsingContext.create", {"type": kind if kind in ("tab", "window") else "tab"})
        self.window(made["context"])
        width, height = self.browser.window_size
        self.browser.command("browsingContext.setViewport", {"context": self.browser.context,
                                                              "viewport": {"width": width, "height": height}})

    def window(self, handle: str):
        """To the tab `handle`, brought to the front (Firefox's WebAuthn answers the active tab only)."""
        self.browser.context = handle
        self.browser._main = handle
        self.browser._frames = []
        self.browser.command("browsingContext.activate", {"context": handle})
