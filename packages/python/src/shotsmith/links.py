"""Signed render links (GET /v1/render), as docs/api.md "Signed render links" specifies.

The canonical query is every parameter but `signature`, each name and value percent-encoded
as RFC 3986 (`A-Z a-z 0-9 - . _ ~` kept, every other UTF-8 byte `%XX` in upper case), sorted
by encoded name then encoded value (byte order), written `name=value` and joined with `&`.
The signature is the lowercase hex HMAC-SHA256 of it keyed with the UTF-8 bytes of the
signing secret. Byte for byte what packages/client/src/links.ts and the server compute.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast
from urllib.parse import quote

#: A link lives at most 7 days.
MAX_LIFETIME_SECONDS = 7 * 24 * 3600
#: Without `expires`, a link works for an hour.
DEFAULT_LIFETIME_SECONDS = 3600

LinkParam = tuple[str, str]


def encode_rfc3986(text: str) -> str:
    """Percent-encodes every byte but the unreserved `A-Z a-z 0-9 - . _ ~`."""
    return quote(text, safe="", encoding="utf-8", errors="strict")


def canonical_query(params: Iterable[LinkParam]) -> str:
    """The text a link's signature covers."""
    encoded = sorted(
        (encode_rfc3986(name), encode_rfc3986(value))
        for name, value in params
        if name != "signature"
    )
    return "&".join(f"{name}={value}" for name, value in encoded)


def sign_query(secret: str, params: Iterable[LinkParam]) -> str:
    """The lowercase hex HMAC-SHA256 of the canonical query, keyed with the secret's UTF-8."""
    data = canonical_query(params).encode("utf-8")
    return hmac.new(secret.encode("utf-8"), data, hashlib.sha256).hexdigest()


def _text(name: str, value: object) -> str:
    # As JavaScript's String(value) writes it, so Python and TypeScript sign the same text.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{name} is not a finite number")
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"{name} is a {type(value).__name__}, and a render link cannot carry it")


def link_params(options: Mapping[str, Any]) -> list[LinkParam]:
    """Capture options as link parameters: `true`/`false`, numbers, lists repeated."""
    params: list[LinkParam] = []
    for name, value in options.items():
        if value is None:
            continue
        if name == "proxy" and isinstance(value, str) and "://" in value:
            # As the service refuses it: whoever holds the link would read its credentials.
            raise ValueError(
                "proxy is a URL, and a render link cannot carry one (its credentials would be "
                "in the link); name an operator proxy's id"
            )
        if isinstance(value, Mapping):
            raise TypeError(f"{name} is an object, and a render link cannot carry objects")
        if isinstance(value, Sequence) and not isinstance(value, str):
            params.extend((name, _text(name, item)) for item in cast(Sequence[object], value))
        else:
            params.append((name, _text(name, value)))
    return params


def _expires_at(expires: int | float | datetime | None, now: int) -> int:
    if expires is None:
        return now + DEFAULT_LIFETIME_SECONDS
    if isinstance(expires, datetime):
        return int(expires.timestamp())
    return int(expires)


def render_link(
    base_url: str,
    key_id: int,
    signing_secret: str,
    url: str,
    expires: int | float | datetime | None = None,
    **options: Any,
) -> str:
    """A signed `GET /v1/render` URL for `<img src>`.

    `key_id` is the API key's `id` (not the key), `signing_secret` its `sig_live_...` secret,
    `expires` Unix seconds or an aware datetime (default an hour from now, at most 7 days
    ahead), and `options` capture options with the API's names (`width=1280`,
    `full_page=True`, `hide_selectors=[".a", ".b"]`). Objects (`clip`, `headers`, ...) and a
    `proxy` URL (an operator proxy's id is fine) are refused, as the service refuses them in a
    link.
    """
    if not url:
        raise ValueError("url is required")
    now = int(time.time())
    at = _expires_at(expires, now)
    if at - now > MAX_LIFETIME_SECONDS:
        raise ValueError(
            f"expires must be at most {MAX_LIFETIME_SECONDS} seconds (7 days) ahead"
        )
    params = [
        *link_params({"url": url, **options}),
        ("key_id", str(int(key_id))),
        ("expires", str(at)),
    ]
    signature = sign_query(signing_secret, params)
    query = "&".join(
        f"{encode_rfc3986(name)}={encode_rfc3986(value)}"
        for name, value in [*params, ("signature", signature)]
    )
    return f"{base_url.rstrip('/')}/v1/render?{query}"
