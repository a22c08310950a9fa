"""A device of an account (the phone, the laptop): its ceremonies, its passkeys, its state."""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from . import _convert
from ._http import path

if TYPE_CHECKING:
    from .account import Account

_SIGNALS = {
    "unknownCredential": "unknownCredential", "unknown_credential": "unknownCredential",
    "allAcceptedCredentials": "allAcceptedCredentials", "all_accepted_credentials": "allAcceptedCredentials",
    "currentUserDetails": "currentUserDetails", "current_user_details": "currentUserDetails",
}


class _NoCounter:
    """The type of :data:`NO_COUNTER`."""

    def __repr__(self) -> str:
        return "NO_COUNTER"


NO_COUNTER = _NoCounter()
"""``add_passkey(sign_count=NO_COUNTER)``: a passkey without a signature counter — sent as
``"signCount": null`` (WebDriver's Add Credential), so every assertion reports 0. ``None``, as for
every keyword, leaves the member out: a counter from 0."""


def _private_key(key: Any) -> Any:
    """A private key as the API takes it: DER PKCS #8 bytes, base64url text, or an object of the
    ``cryptography`` package (written as unencrypted PKCS #8 DER)."""
    if hasattr(key, "private_bytes"):
        from cryptography.hazmat.primitives import serialization

        return key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    return key


class Device:
    """A device of an account, named :attr:`name`.

    A handle: making one sends nothing (``account.device("phone")``). Every method is one request.
    The ceremonies' keywords (``**members``) are the members of their bodies in snake_case:
    ``top_origin``, ``mediation``, ``user_action`` (``approve``, ``cancel``, ``timeout``,
    ``wrong-pin``), ``pin``, ``fault`` (``bad-signature``, ``wrong-challenge``, ...),
    ``profile``, ``via``, ``device_bound``, ``recent_password_sign_in``, and for a sign-in
    ``credential_id`` and ``user`` (the passkey the person picks); ``timeout`` is the seconds the
    request may take.
    """

    def __init__(self, account: "Account", name: str):
        self.account = account
        self.name = name

    @property
    def _transport(self):
        return self.account.server.transport

    def _path(self, *more: str, query: Optional[Dict[str, Any]] = None) -> str:
        return path("accounts", self.account.id, "devices", self.name, *more, query=query)

    def _call(self, method: str, *more: str, body: Any = None, query: Optional[Dict[str, Any]] = None,
              timeout: Optional[float] = None) -> Any:
        return self._transport.request(method, self._path(*more, query=query), body, timeout=timeout)

    # State

    def info(self) -> Dict[str, Any]:
        """The device as the server reports it (docs/reports.md, "Device"): ``online``,
        ``passkeysSupported``, ``biometry``, ``passkeys`` (a count), the sync delays and the
        transfers pending, as ``authctl --json device list`` prints each device."""
        return self._call("GET")

    def offline(self) -> Dict[str, Any]:
        """Takes the device off the network: nothing syncs to or from it until :meth:`online`."""
        return self._call("POST", "offline", body={})

    def online(self) -> Dict[str, Any]:
        """Brings the device back on the network; what waited starts syncing."""
        return self._call("POST", "online", body={})

    def reset(self) -> Dict[str, Any]:
        """Factory-resets the device: its replica wiped, its biometric enrollment retired."""
        return self._call("POST", "reset", body={})

    def unlock(self) -> Dict[str, Any]:
        """Clears a biometry lockout (the passcode entered)."""
        return self._call("POST", "unlock", body={})

    def set_passkeys_supported(self, supported: bool) -> Dict[str, Any]:
        """Whether the device offers passkeys at all (``False``: ceremonies fail with
        ``passkeysNotSupported``)."""
        return self._call("POST", "supported" if supported else "unsupported", body={})

    def remove(self) -> None:
        """Takes the device out of the account (not the first device, which holds it)."""
        self._call("DELETE")

    def set_pin(self, pin: str, *, current_pin: Optional[str] = None, reset: Optional[bool] = None,
                approved_by: Optional[str] = None, approver_pin: Optional[str] = None) -> Dict[str, Any]:
        """Enrolls or changes the device's biometric PIN; from now on the person at the device
        types `pin`. Answers ``{"device", "deletedPasskeys"}``."""
        return self._call("POST", "pin", body=_convert.body(pin=pin, current_pin=current_pin, reset=reset,
                                                              approved_by=approved_by, approver_pin=approver_pin))

    def set_profile(self, profile: str, *, aaguid: Optional[str] = None) -> Dict[str, Any]:
        """The authenticator profile the device's new passkeys follow (``icloud-keychain``, ...)."""
        return self._call("PUT", "profile", body=_convert.body(profile=profile, aaguid=aaguid))

    def bridge_script(self) -> str:
        """The page bridge for this device (``GET /bridge.js``): a script to run before a page's
        own, whose WebAuthn calls this device then answers (docs/browser.md). It holds the
        server's token: give it only to pages under test."""
        return self._transport.request("GET", path("bridge.js", query={"account": self.account.id, "device": self.name}))

    def capabilities(self) -> Dict[str, Any]:
        """``PublicKeyCredential.getClientCapabilities()`` and the two availability checks, as a
        page on this device would see them."""
        return self._call("GET", "capabilities")

    # Ceremonies

    def register(self, options: Any, origin: str, **members: Any) -> Dict[str, Any]:
        """``navigator.credentials.create()``: the RP's creation `options` (a dict, JSON text, a
        py_webauthn or python-fido2 options object) from `origin`; answers the
        ``RegistrationResponseJSON`` a browser's ``toJSON()`` gives, to post to the RP.

        Raises :class:`~authctl_client.CeremonyFailed` (422) for an outcome a page sees as a
        ``DOMException`` (``canceled``, ``matchedExcludedCredential``, ...).
        """
        timeout = members.pop("timeout", None)
        body = _convert.body(members, options=_convert.options_json(options), origin=origin)
        return self._call("POST", "register", body=body, timeout=timeout)

    def sign(self, options: Any, origin: str, **members: Any) -> Dict[str, Any]:
        """``navigator.credentials.get()``: the RP's request `options` from `origin`; answers the
        ``AuthenticationResponseJSON``. ``credential_id=`` or ``user=`` picks the passkey when
        more than one would do.

        With ``mediation="conditional"`` the request waits for a pick from the autofill list;
        use :meth:`begin_conditional_sign` or :meth:`conditional_sign` for that.
        """
        timeout = members.pop("timeout", None)
        body = _convert.body(members, options=_convert.options_json(options), origin=origin)
        return self._call("POST", "sign", body=body, timeout=timeout)

    def begin_conditional_sign(self, options: Any, origin: str, **members: Any) -> "PendingSignIn":
        """Starts a conditional sign-in (``mediation: "conditional"``, the page's autofill
        request) and returns once the server holds it pending; pick with
        :meth:`PendingSignIn.pick`, then read :meth:`PendingSignIn.result`."""
        members["mediation"] = "conditional"
        return PendingSignIn(self, _convert.options_json(options), origin, members)

    def conditional_sign(self, options: Any, origin: str, *, credential_id: Any = None, user: Optional[str] = None,
                         timeout: float = 120.0, **members: Any) -> Dict[str, Any]:
        """A conditional sign-in whole: started, a passkey picked from the autofill list (by
        `credential_id`, else by `user`, else the first the device holds for the options' RP
        ID; with none, the list is passed by and the sign-in ends ``timedOut``), and its
        response returned."""
        pending = self.begin_conditional_sign(options, origin, **members)
        if credential_id is None and user is None:
            candidates = self.passkeys(rp_id=_convert.options_json(options).get("rpId"))
            if not candidates:
                pending.cancel()
                return pending.result(timeout)
            credential_id = candidates[0]["id"]
        pending.pick(credential_id=credential_id, user=user)
        return pending.result(timeout)

    def autofill(self, *, credential_id: Any = None, user: Optional[str] = None, cancel: bool = False,
                 wait: Any = None, request: Optional[str] = None) -> Dict[str, Any]:
        """The person picks a passkey (by `credential_id` or `user` name) from the autofill list
        of the conditional sign-in pending on this device, or passes the list by (`cancel`: the
        sign-in then ends ``timedOut``, as a browser's does when its timeout passes). The server
        waits for one to begin up to `wait` (a duration; its default 2 s), then answers
        ``Conflict`` (409). With `request` (the id a page's sign-in named in its ``request``
        member) the pick is for that sign-in only, never taken by another page's."""
        if cancel:
            body: Dict[str, Any] = {"cancel": True}
        else:
            body = _convert.body(credential_id=None if credential_id is None else _convert.identifier(credential_id),
                                 user=user)
        if wait is not None:
            body["wait"] = _convert.value(wait)
        if request is not None:
            body["request"] = request
        return self._call("POST", "autofill", body=body)

    def autofill_pending(self) -> bool:
        """Whether a conditional sign-in is pending on this device."""
        return bool(self._call("GET", "autofill")["pending"])

    def signal(self, kind: str, options: Dict[str, Any], origin: str) -> Dict[str, Any]:
        """One of the RP's signals, as the page sends it: `kind` is ``unknownCredential``
        (``{rpId, credentialId}``), ``allAcceptedCredentials`` (``{rpId, userId,
        allAcceptedCredentialIds}``) or ``currentUserDetails`` (``{rpId, userId, name,
        displayName}``); snake_case names are taken too. Answers the ids ``removed``,
        ``hidden``, ``restored`` and ``updated``."""
        if kind not in _SIGNALS:
            raise ValueError(f"no signal {kind!r} (unknownCredential, allAcceptedCredentials, currentUserDetails)")
        return self._call("POST", "signals", _SIGNALS[kind], body={"options": _convert.value(dict(options)), "origin": origin})

    # Passkeys

    def passkeys(self, rp_id: Optional[str] = None) -> List[Dict[str, Any]]:
        """The passkeys the device holds now (for one RP with `rp_id`), each with ``id``,
        ``rpId``, ``userHandle``, ``userName``, ``publicKey`` (SPKI, base64url), ``signCount``,
        ``backupEligible``, ``backupState`` and the rest."""
        held = self._call("GET", "passkeys", query={"rpId": rp_id})["credentials"]
        # Filtered here as well, so the answer is the same from a server that ignores the query.
        return held if rp_id is None else [p for p in held if p.get("rpId") == rp_id]

    def passkey(self, credential_id: Any) -> Dict[str, Any]:
        """One passkey by id (base64url text or bytes); ``NotFound`` when the device holds none."""
        return self._call("GET", "passkeys", _convert.identifier(credential_id))

    def has_passkey(self, credential_id: Any) -> bool:
        """Whether the device holds the passkey now."""
        wanted = _convert.identifier(credential_id)
        return any(p["id"] == wanted for p in self.passkeys())

    def delete_passkey(self, credential_id: Any) -> None:
        """Deletes a passkey (the deletion syncs to the other devices)."""
        self._call("DELETE", "passkeys", _convert.identifier(credential_id))

    def set_backup_flags(self, credential_id: Any, *, backup_state: bool,
                         backup_eligible: Optional[bool] = None) -> Dict[str, Any]:
        """Sets a passkey's backup state (BS) and, optionally, eligibility (BE), as WebDriver's
        Set Credential Properties does; answers the passkey."""
        return self._call("PATCH", "passkeys", _convert.identifier(credential_id),
                          body=_convert.body(backup_eligible=backup_eligible, backup_state=backup_state))

    def add_passkey(self, *, credential_id: Any, rp_id: str, private_key: Any, user_handle: Any,
                    user_name: Optional[str] = None, user_display_name: Optional[str] = None,
                    sign_count: Union[int, _NoCounter, None] = None, backup_eligibility: Optional[bool] = None,
                    backup_state: Optional[bool] = None, large_blob: Any = None,
                    is_resident_credential: Optional[bool] = None) -> Dict[str, Any]:
        """Puts a passkey made elsewhere on the device (WebDriver's Add Credential).

        `private_key` is a PKCS #8 private key: DER bytes, base64url text, or a private key of the
        ``cryptography`` package. `credential_id`, `user_handle` and `large_blob` are bytes or
        base64url text. `sign_count` is where the passkey's counter starts (0 to 4294967295; left
        out, 0), or :data:`NO_COUNTER` for a passkey without one (``"signCount": null``: every
        assertion reports 0). Answers the passkey (201).
        """
        sent = _convert.body(
            credential_id=_convert.identifier(credential_id), rp_id=rp_id, private_key=_private_key(private_key),
            user_handle=user_handle, user_name=user_name, user_display_name=user_display_name,
            sign_count=None if sign_count is NO_COUNTER else sign_count,
            backup_eligibility=backup_eligibility, backup_state=backup_state, large_blob=large_blob,
            is_resident_credential=is_resident_credential)
        if sign_count is NO_COUNTER:
            sent["signCount"] = None  # JSON null: `None` is what a keyword left out means
        return self._call("POST", "passkeys", body=sent)

    def export_passkey(self, credential_id: Any, passphrase: str, *, pin: Optional[str] = None) -> str:
        """A passkey sealed with `passphrase` (the envelope, base64url), for :meth:`import_passkey`
        on another device or account."""
        return self._call("POST", "passkeys", _convert.identifier(credential_id), "export",
                          body=_convert.body(passphrase=passphrase, pin=pin))["envelope"]

    def import_passkey(self, envelope: str, passphrase: str, *, pin: Optional[str] = None) -> Dict[str, Any]:
        """Opens an envelope of :meth:`export_passkey` onto this device; answers the passkey."""
        return self._call("POST", "import", body=_convert.body(envelope=envelope, passphrase=passphrase, pin=pin))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.account.id == self.account.id and other.name == self.name

    def __hash__(self) -> int:
        return hash((self.account.id, self.name))

    def __repr__(self) -> str:
        return f"<Device {self.name!r} of account {self.account.id!r}>"


class PendingSignIn:
    """A conditional sign-in pending on a device, waiting for the person to pick a passkey from
    the autofill list. Made by :meth:`Device.begin_conditional_sign`.

    The request runs on a thread of its own, on a connection of its own; the constructor returns
    once the server reports it pending (or once the request has ended, as a refused one does at
    once: :meth:`result` raises its error).
    """

    def __init__(self, device: Device, options: Dict[str, Any], origin: str, members: Dict[str, Any],
                 wait: float = 60.0):
        self.device = device
        self._response: Optional[Dict[str, Any]] = None
        self._error: Optional[BaseException] = None
        timeout = members.pop("timeout", None)
        if timeout is None:
            given = options.get("timeout")
            timeout = max(device._transport.timeout, (float(given) / 1000 if isinstance(given, (int, float)) else 300) + 60)
        body = _convert.body(members, options=options, origin=origin)
        target = device._path("sign")

        def run() -> None:
            try:
                self._response = device._transport.request("POST", target, body, timeout=timeout, fresh=True)
            except BaseException as error:  # noqa: BLE001 - handed to result()
                self._error = error

        self._thread = threading.Thread(target=run, name=f"authctl-conditional-{device.name}", daemon=True)
        self._thread.start()
        self._await_pending(wait)

    def _await_pending(self, wait: float) -> None:
        # The server does not announce that the request is pending: its autofill state is read
        # until it is (or the request has ended).
        deadline = time.monotonic() + wait
        pause = 0.005
        while self._thread.is_alive():
            if self.device.autofill_pending():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the conditional sign-in on {self.device.name!r} was not pending within {wait:g} s")
            self._thread.join(pause)
            pause = min(pause * 2, 0.2)

    @property
    def done(self) -> bool:
        """Whether the sign-in has ended (picked, canceled, timed out or refused)."""
        return not self._thread.is_alive()

    def pick(self, *, credential_id: Any = None, user: Optional[str] = None) -> None:
        """The person picks a passkey from the autofill list, by id or by user name."""
        if credential_id is None and user is None:
            raise ValueError("pick a passkey: credential_id or user")
        self.device.autofill(credential_id=credential_id, user=user)

    def cancel(self) -> None:
        """The person passes the autofill list by: as in a browser, the sign-in then ends
        ``timedOut`` (``NotAllowedError``), its timeout passing at once."""
        self.device.autofill(cancel=True)

    def result(self, timeout: float = 120.0) -> Dict[str, Any]:
        """The ``AuthenticationResponseJSON`` once the sign-in ends; raises its
        :class:`~authctl_client.AuthctlError`, or ``TimeoutError`` if it has not ended within
        `timeout` seconds."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the conditional sign-in on {self.device.name!r} did not end within {timeout:g} s")
        if self._error is not None:
            raise self._error
        assert self._response is not None
        return self._response

    def __repr__(self) -> str:
        return f"<PendingSignIn on {self.device!r}{' done' if self.done else ''}>"

