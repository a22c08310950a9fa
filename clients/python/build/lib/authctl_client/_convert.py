"""Conversions between Python values and the JSON members the server reads.

Keyword arguments are written in snake_case and sent in the API's camelCase (``user_action`` is
``userAction``, ``top_origin`` is ``topOrigin``, ``max_pin_attempts`` is ``maxPINAttempts``); a
name without an underscore is sent as it is. Values are sent as JSON, with a few Python types
turned into what the API takes: bytes as base64url, a ``datetime.timedelta`` as milliseconds, a
``datetime.datetime`` as an RFC 3339 time (a naive one is taken to be UTC), an ``enum.Enum`` as
its value.
"""
from __future__ import annotations

import base64
import datetime
import enum
import json
from collections.abc import Mapping
from typing import Any, Optional

# Names whose camelCase is not the plain one.
_SPECIAL = {
    "max_pin_attempts": "maxPINAttempts",
}


def camel(name: str) -> str:
    """``user_action`` -> ``userAction``; a name without an underscore is kept."""
    if name in _SPECIAL:
        return _SPECIAL[name]
    if "_" not in name.strip("_"):
        return name
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest if part)


def b64url(data: bytes) -> str:
    """Base64url without padding, as WebAuthn's JSON writes binary data."""
    return base64.urlsafe_b64encode(bytes(data)).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """The bytes of a base64url text, with or without padding."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def milliseconds(value: datetime.timedelta) -> int:
    return int(round(value.total_seconds() * 1000))


def rfc3339(value: datetime.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value.astimezone(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def value(item: Any) -> Any:
    """One value as the API takes it (see the module's description)."""
    if isinstance(item, (bytes, bytearray, memoryview)):
        return b64url(bytes(item))
    if isinstance(item, datetime.timedelta):
        return milliseconds(item)
    if isinstance(item, datetime.datetime):
        return rfc3339(item)
    if isinstance(item, enum.Enum):
        return value(item.value)
    if isinstance(item, Mapping):
        return {str(k): value(v) for k, v in item.items()}
    if isinstance(item, (list, tuple)):
        return [value(v) for v in item]
    return item


def body(members: Optional[Mapping[str, Any]] = None, **keywords: Any) -> dict:
    """A request body: `members` and `keywords`, their names in camelCase, ``None`` left out."""
    out = {}
    for source in (members or {}), keywords:
        for name, item in source.items():
            if item is not None:
                out[camel(name)] = value(item)
    return out


def identifier(credential_id: Any) -> str:
    """A credential id as the paths and bodies take it: base64url text (bytes are encoded)."""
    if isinstance(credential_id, (bytes, bytearray, memoryview)):
        return b64url(bytes(credential_id))
    if isinstance(credential_id, Mapping):  # a passkey or a response: its "id"
        return str(credential_id["id"])
    return str(credential_id)


def _json_default(item: Any) -> Any:
    if isinstance(item, Mapping):
        return dict(item)
    if isinstance(item, (bytes, bytearray, memoryview)):
        return b64url(bytes(item))
    if isinstance(item, enum.Enum):
        return item.value
    raise TypeError(f"{type(item).__name__} is not JSON")


def options_json(options: Any) -> dict:
    """WebAuthn options as the JSON object the server takes.

    `options` is a dict (``PublicKeyCredentialCreationOptionsJSON`` or
    ``PublicKeyCredentialRequestOptionsJSON``), JSON text, a mapping such as python-fido2's
    ``CredentialCreationOptions``, or a py_webauthn options object (turned into JSON with
    ``webauthn.options_to_json``). A ``{"publicKey": {...}}`` wrapper, as passed to
    ``navigator.credentials.create()``, is unwrapped.
    """
    if isinstance(options, (str, bytes, bytearray)):
        parsed = json.loads(options)
    elif isinstance(options, Mapping):
        parsed = json.loads(json.dumps(options, default=_json_default))
    else:
        try:
            from webauthn import options_to_json  # only for py_webauthn's option objects
        except ImportError:
            raise TypeError(f"options must be a dict or JSON text, not {type(options).__name__}") from None
        parsed = json.loads(options_to_json(options))
    if not isinstance(parsed, dict):
        raise TypeError("options must be a JSON object")
    if "publicKey" in parsed and "challenge" not in parsed and isinstance(parsed["publicKey"], dict):
        parsed = parsed["publicKey"]
    return parsed
