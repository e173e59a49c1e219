"""Checks a webhook from Shotsmith (Standard Webhooks), as packages/client/src/webhooks.ts.

`webhook-signature` holds one or more space-separated `v1,<base64>` signatures of
`<webhook-id>.<webhook-timestamp>.<body>`, HMAC-SHA256 keyed with the base64-decoded bytes
after `whsec_` in the account's secret. Pass the body exactly as received, before any JSON
parsing: a re-serialised body does not verify.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

#: How far `webhook-timestamp` may be from now, in seconds (replays older than this fail).
DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(ValueError):
    """The webhook is not one Shotsmith signed with this secret just now."""


class _HeaderItems(Protocol):
    def items(self) -> Iterable[tuple[str, Any]]: ...


def _header(headers: Mapping[str, Any] | _HeaderItems, name: str) -> str:
    # Case-insensitive, for a dict, http.server's headers or any framework's mapping.
    for key, raw in headers.items():
        if key.lower() != name:
            continue
        value: object = raw
        if isinstance(value, (list, tuple)):
            items = cast(Sequence[object], value)
            value = items[0] if items else None
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if isinstance(value, str) and value != "":
            return value
    raise WebhookVerificationError(f"missing {name} header")


def verify_webhook(
    payload: bytes | str,
    headers: Mapping[str, Any] | _HeaderItems,
    secret: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> dict[str, Any]:
    """The webhook's event (`{type, timestamp, data}`) once its signature and age check out.

    Raises `WebhookVerificationError` naming the problem: a missing header, a timestamp
    further than `tolerance` seconds from now, a secret that is not `whsec_...`, or no
    signature that matches (compared in constant time).
    """
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    msg_id = _header(headers, "webhook-id")
    timestamp_text = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not timestamp_text.isascii() or not timestamp_text.isdigit():
        raise WebhookVerificationError("bad webhook-timestamp")
    current = time.time() if now is None else now
    if abs(int(current) - int(timestamp_text)) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too far from now")
    if not secret.startswith("whsec_"):
        raise WebhookVerificationError("the secret must start with whsec_")
    try:
        key = base64.b64decode(secret[len("whsec_") :], validate=True)
    except (binascii.Error, ValueError) as err:
        raise WebhookVerificationError("the secret is not base64 after whsec_") from err
    signed = f"{msg_id}.{timestamp_text}.".encode() + body
    expected = b"v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    matched = False
    for candidate in signatures.split(" "):
        # Every candidate is compared, so the time taken says nothing about which one matched.
        if hmac.compare_digest(candidate.encode("utf-8"), expected):
            matched = True
    if not matched:
        raise WebhookVerificationError("no signature matches")
    try:
        event = json.loads(body)
    except ValueError as err:
        raise WebhookVerificationError("the body is not JSON") from err
    if not isinstance(event, dict):
        raise WebhookVerificationError("the body is not a JSON object")
    return cast(dict[str, Any], event)
