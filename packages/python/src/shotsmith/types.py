"""The capture options as keywords, with the API's names and JSON types (openapi.json,
POST /v1/screenshots). Answers are plain dicts (`Json`): the field names are the API's, as
docs/api.md describes them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

Json = dict[str, Any]


class CaptureOptions(TypedDict, total=False):
    """Every capture field but `url`/`html`/`markdown` (positional or their own keywords) and
    `async`, `response_type` and `webhook_url` (set by `capture_async` and `capture_image`)."""

    format: Literal["png", "jpeg", "webp", "pdf"]
    width: int
    height: int
    full_page: bool
    quality: int
    fresh: bool
    device_scale_factor: float
    wait_until: Literal["load", "domcontentloaded", "networkidle0", "networkidle2"]
    delay: int
    wait_for_selector: str
    selector: str
    dark_mode: bool
    reduced_motion: bool
    hide_selectors: Sequence[str]
    omit_background: bool
    user_agent: str
    locale: str
    timezone: str
    media_type: Literal["screen", "print"]
    styles: str
    scripts: str
    click: str
    scroll_into_view: str
    fail_on_http_error: bool
    fail_on: Sequence[
        Literal[
            "blank_image",
            "not_at_rest",
            "requests_pending",
            "fonts_not_loaded",
            "truncated",
            "banner_remaining",
        ]
    ]
    cache_ttl: int
    clip: Mapping[str, float]
    block_requests: Sequence[str]
    block_resources: Sequence[
        Literal[
            "image", "media", "font", "stylesheet", "script", "xhr", "fetch", "websocket", "other"
        ]
    ]
    headers: Mapping[str, str]
    cookies: Sequence[Mapping[str, Any]]
    http_auth: Mapping[str, str]
    block_ads: bool
    block_trackers: bool
    block_cookie_banners: bool
    device: str
    mobile: bool
    has_touch: bool
    landscape: bool
    metadata: bool
    pdf_paper: Literal["a4", "letter", "legal", "a3", "tabloid"]
    pdf_landscape: bool
    pdf_print_background: bool
    pdf_single_page: bool
    image_width: int
    image_height: int
    image_fit: Literal["cover", "contain", "fill"]
    base_url: str
    content: Sequence[Literal["html", "text", "markdown"]]
    #: An operator proxy's id (`Shotsmith.proxies()`), or your own proxy's URL: `http://`,
    #: `https://`, `socks5://` or `socks5h://`, credentials allowed. Not with `proxy_country`.
    proxy: str
    #: An operator proxy serving this country (ISO 3166-1 alpha-2, `"de"`). Not with `proxy`.
    proxy_country: str
    #: `{"latitude": 52.52, "longitude": 13.405, "accuracy": 50}`: what the page's Geolocation
    #: API reports (accuracy in metres, default 100).
    geolocation: Mapping[str, float]
    #: `{"destination": "dst_...", "path": "{host}/{id}.{ext}", "hosted": False}`: the capture
    #: written into one of your storage destinations too (`Shotsmith.destinations`); the
    #: answer's `storage` says where. `hosted=False` keeps no copy on the service.
    storage: Mapping[str, Any]
