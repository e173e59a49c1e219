"""The Shotsmith API from Python: every programmatic endpoint, the surface of the TypeScript
client (packages/client/src/client.ts), on the standard library's urllib.

Refusals are `ShotsmithError`s (subclasses per refusal, shotsmith.errors). A 429 or 503 is
retried after its `Retry-After`, at most `max_retries` times, and never after a wait longer
than `max_retry_delay` (that one is raised at once). No redirect is followed: the API key is a
password, and a redirect (a moved service, a hostile proxy) would carry it to wherever
`Location` points.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from typing import Any, Literal, Unpack, cast, overload
from urllib.parse import quote, urlencode, urljoin, urlsplit

from . import __version__
from .errors import (
    NetworkError,
    ShotsmithError,
    UnexpectedRedirectError,
    WaitTimeoutError,
    error_from_answer,
)
from .links import render_link as _render_link
from .types import CaptureOptions, Json
from .webhooks import verify_webhook as _verify_webhook

RETRIED = frozenset({429, 503})
#: The wait before retrying a 429 or 503 that named no `Retry-After`.
DEFAULT_RETRY_AFTER = 1.0
_ENDED = frozenset({"succeeded", "failed"})
_UNSET: Any = object()


@dataclass(frozen=True)
class CapturedImage:
    """A capture answered with its bytes (`response_type="image"`), and its headers' facts."""

    content: bytes
    content_type: str
    image_url: str
    expires_at: str
    cached: bool
    quota_used: int | None
    quota_limit: int | None
    #: Listable (Pro) records only.
    screenshot_id: int | None

    def save(self, path: str) -> None:
        """Writes the bytes to `path`."""
        with open(path, "wb") as f:
            f.write(self.content)


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Turns every 3xx into an error naming where it pointed; no request goes there."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Message,
        newurl: str,
    ) -> urllib.request.Request | None:
        fp.close()  # the 3xx's own answer, which urllib closes only when it follows
        raise _Redirected(code, newurl)


class _Redirected(Exception):
    def __init__(self, status: int, location: str) -> None:
        super().__init__(location)
        self.status = status
        self.location = location


def _origin(location: str, base_url: str) -> str:
    try:
        parts = urlsplit(urljoin(base_url + "/", location))
        if parts.scheme and parts.netloc:
            return f"{parts.scheme}://{parts.netloc}"
    except ValueError:
        return "an invalid location"
    return "another location"


def _page_query(limit: int | None, cursor: str | None) -> str:
    query: dict[str, str] = {}
    if limit is not None:
        query["limit"] = str(limit)
    if cursor is not None:
        query["cursor"] = cursor
    return f"?{urlencode(query)}" if query else ""


def _segment(value: str | int) -> str:
    return quote(str(value), safe="")


def _pages(fetch: Callable[[str | None], Json], cursor: str | None) -> Iterator[Json]:
    while True:
        page = fetch(cursor)
        yield from page.get("data", [])
        cursor = page.get("next_cursor")
        if not page.get("has_more") or not cursor:
            return


class Shotsmith:
    """A client of one Shotsmith service with one API key.

    `api_key` is an `sk_live_...` key, `base_url` the service's origin
    (`https://shots.example.com`). `max_retries` retries of a 429 or 503, each after its
    `Retry-After` (default 3); `max_retry_delay` the longest `Retry-After` waited for, in
    seconds (default 60; a longer one is raised at once); `timeout` seconds an attempt waits
    for the connection and for each read of the answer (default 120; urllib's socket timeout).
    """

    base_url: str
    max_retries: int
    max_retry_delay: float
    timeout: float
    monitors: Monitors
    destinations: Destinations

    def __init__(
        self,
        api_key: str,
        base_url: str,
        *,
        max_retries: int = 3,
        max_retry_delay: float = 60,
        timeout: float = 120,
    ) -> None:
        if not api_key:
            raise ValueError("api_key is required")
        if urlsplit(base_url).scheme not in ("http", "https"):
            raise ValueError("base_url must be an http(s) URL, e.g. https://shots.example.com")
        if max_retries < 0 or max_retry_delay < 0 or timeout <= 0:
            raise ValueError("max_retries and max_retry_delay must be >= 0, timeout > 0")
        self.base_url = base_url.rstrip("/")
        self.__api_key = api_key
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay
        self.timeout = timeout
        # Only what is needed: HTTP(S), proxies from the environment, errors, and a redirect
        # handler that refuses.
        self._opener = urllib.request.build_opener(_RefuseRedirects())
        self.monitors = Monitors(self._json, self._request)
        self.destinations = Destinations(self._json, self._request)

    def __repr__(self) -> str:
        # Never the key.
        return f"Shotsmith(base_url={self.base_url!r})"

    # -- captures ---------------------------------------------------------------------------

    @overload
    def capture(
        self,
        url: str | None = None,
        *,
        html: str | None = None,
        markdown: str | None = None,
        response_type: Literal["json"] = "json",
        **options: Unpack[CaptureOptions],
    ) -> Json: ...

    @overload
    def capture(
        self,
        url: str | None = None,
        *,
        html: str | None = None,
        markdown: str | None = None,
        response_type: Literal["image"],
        **options: Unpack[CaptureOptions],
    ) -> CapturedImage: ...

    def capture(
        self,
        url: str | None = None,
        *,
        html: str | None = None,
        markdown: str | None = None,
        response_type: Literal["json", "image"] = "json",
        **options: Any,
    ) -> Json | CapturedImage:
        """POST /v1/screenshots: renders (or answers from the cache) and returns the 201's
        JSON (`image_url`, `width`, `height`, `cached`, `expires_at`, ...). With
        `response_type="image"` the image itself, as a `CapturedImage`.

        Exactly one of `url`, `html` and `markdown`; every other capture option is a keyword
        with the API's name (`width=1280, full_page=True, block_ads=True`)."""
        body = self._capture_body(url, html, markdown, options)
        if response_type == "image":
            return self.capture_image(**body)
        if response_type != "json":
            body["response_type"] = response_type  # the service names the bad value
        return self._json("POST", "/v1/screenshots", body)

    def capture_image(
        self,
        url: str | None = None,
        *,
        html: str | None = None,
        markdown: str | None = None,
        **options: Unpack[CaptureOptions],
    ) -> CapturedImage:
        """The same capture with the image bytes in one round trip."""
        body = self._capture_body(url, html, markdown, dict(options))
        body["response_type"] = "image"
        status, headers, raw = self._request("POST", "/v1/screenshots", body)
        del status

        def number(name: str) -> int | None:
            value = headers.get(name)
            try:
                return int(value) if value is not None else None
            except ValueError:
                return None

        return CapturedImage(
            content=raw,
            content_type=headers.get("content-type") or "application/octet-stream",
            image_url=headers.get("x-image-url") or "",
            expires_at=headers.get("x-expires-at") or "",
            cached=headers.get("x-cached") == "true",
            quota_used=number("x-quota-used"),
            quota_limit=number("x-quota-limit"),
            screenshot_id=number("x-screenshot-id"),
        )

    def capture_async(
        self,
        url: str | None = None,
        *,
        html: str | None = None,
        markdown: str | None = None,
        webhook_url: str | None = None,
        **options: Unpack[CaptureOptions],
    ) -> Json:
        """Queues an async capture (Pro): the 202's `{id: "job_...", status: "queued",
        status_url}`. With `webhook_url`, the result is POSTed there, signed (`verify_webhook`)."""
        body = self._capture_body(url, html, markdown, dict(options))
        body["async"] = True
        if webhook_url is not None:
            body["webhook_url"] = webhook_url
        return self._json("POST", "/v1/screenshots", body)

    #: The TypeScript client's name for `capture_async`.
    queue = capture_async

    def screenshot(self, id: str | int) -> Json:
        """GET /v1/screenshots/{id}: a job's status (`job_...`) or a Pro record's."""
        return self._json("GET", f"/v1/screenshots/{_segment(id)}")

    #: A job's status: the same read as `screenshot`.
    job = screenshot

    def wait(self, id: str, interval: float = 0.5, timeout: float = 300) -> Json:
        """Reads a job's status until it has succeeded or failed (`WaitTimeoutError` after
        `timeout` seconds)."""
        end = time.monotonic() + timeout
        while True:
            status = self.screenshot(id)
            if status.get("status") in _ENDED:
                return status
            if time.monotonic() > end:
                raise WaitTimeoutError(0, "timeout", f"job {id} is still {status.get('status')}")
            time.sleep(interval)

    def batch(self, requests: Sequence[Mapping[str, Any]], webhook_url: str | None = None) -> Json:
        """POST /v1/screenshots/batch (Pro): 1 to 50 captures queued as async jobs, all or
        none (a bad one is a 400 naming `requests[i]`): `{batch_id, jobs: [...]}`."""
        body: dict[str, Any] = {"requests": [dict(r) for r in requests]}
        if webhook_url is not None:
            body["webhook_url"] = webhook_url
        return self._json("POST", "/v1/screenshots/batch", body)

    def get_batch(self, id: str) -> Json:
        """GET /v1/screenshots/batch/{id}: the batch's counts and each job's status."""
        return self._json("GET", f"/v1/screenshots/batch/{_segment(id)}")

    def wait_batch(self, id: str, interval: float = 0.5, timeout: float = 300) -> Json:
        """Reads a batch until every job has ended (`status: "completed"`)."""
        end = time.monotonic() + timeout
        while True:
            batch = self.get_batch(id)
            if batch.get("status") == "completed":
                return batch
            if time.monotonic() > end:
                ended = int(batch.get("succeeded", 0)) + int(batch.get("failed", 0))
                raise WaitTimeoutError(
                    0,
                    "timeout",
                    f"batch {id} is still running ({ended} of {batch.get('total')} ended)",
                )
            time.sleep(interval)

    def list(self, limit: int | None = None, cursor: str | None = None) -> Json:
        """GET /v1/screenshots: one page of the account's records, newest first (Pro):
        `{data, has_more, next_cursor}`."""
        return self._json("GET", f"/v1/screenshots{_page_query(limit, cursor)}")

    def iter_screenshots(self, page_size: int | None = None) -> Iterator[Json]:
        """Every record, newest first, reading page after page as the loop goes."""
        return _pages(lambda cursor: self.list(page_size, cursor), None)

    def delete(self, id: int | str) -> None:
        """DELETE /v1/screenshots/{id}: the record and its image."""
        self._request("DELETE", f"/v1/screenshots/{_segment(id)}")

    def usage(self) -> Json:
        """GET /v1/usage: `{plan, used, limit, resets_at, ...}`."""
        return self._json("GET", "/v1/usage")

    def plans(self) -> Json:
        """GET /v1/plans (public)."""
        return self._json("GET", "/v1/plans")

    def devices(self) -> Json:
        """GET /v1/devices (public): the device presets."""
        return self._json("GET", "/v1/devices")

    def proxies(self) -> Json:
        """GET /v1/proxies: the operator's proxies a capture can go out through,
        `{data: [{id, countries}]}`: `id` is the `proxy` option, `countries` what
        `proxy_country` picks it for. Using one takes a plan with `proxies` (Pro)."""
        return self._json("GET", "/v1/proxies")

    # -- links and webhooks -----------------------------------------------------------------

    def render_link(
        self,
        key_id: int,
        signing_secret: str,
        url: str,
        expires: int | float | datetime | None = None,
        **options: Any,
    ) -> str:
        """A signed render link on this client's base URL (`shotsmith.render_link`)."""
        return _render_link(self.base_url, key_id, signing_secret, url, expires, **options)

    @staticmethod
    def verify_webhook(payload: bytes | str, headers: Any, secret: str) -> dict[str, Any]:
        """`shotsmith.verify_webhook`: the event once its signature and age check out."""
        return _verify_webhook(payload, headers, secret)

    # -- transport --------------------------------------------------------------------------

    @staticmethod
    def _capture_body(
        url: str | None, html: str | None, markdown: str | None, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        body: dict[str, Any] = {}
        for name, value in (("url", url), ("html", html), ("markdown", markdown)):
            if value is not None:
                body[name] = value
        for name, value in options.items():
            if value is not None:
                body[name] = value
        return body

    def _json(self, method: str, path: str, body: Any = None) -> Json:
        _status, _headers, raw = self._request(method, path, body)
        try:
            parsed = json.loads(raw)
        except ValueError as err:
            raise ShotsmithError(
                0, "invalid_response", f"{method} {path} answered something that is not JSON"
            ) from err
        if not isinstance(parsed, dict):
            raise ShotsmithError(0, "invalid_response", f"{method} {path} answered no object")
        return cast(Json, parsed)

    def _request(
        self, method: str, path: str, body: Any = None
    ) -> tuple[int, Mapping[str, str], bytes]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {
            "x-api-key": self.__api_key,
            "accept": "application/json",
            "user-agent": f"shotsmith-python/{__version__}",
        }
        if data is not None:
            headers["content-type"] = "application/json"
        attempt = 0
        while True:
            req = urllib.request.Request(
                f"{self.base_url}{path}", data=data, headers=headers, method=method
            )
            try:
                with self._opener.open(req, timeout=self.timeout) as res:
                    raw = res.read()
                    return res.status, _lower(res.headers), raw
            except _Redirected as moved:
                raise UnexpectedRedirectError(
                    moved.status,
                    "unexpected_redirect",
                    f"the service answered {moved.status} redirecting to "
                    f"{_origin(moved.location, self.base_url)}; the client follows no redirect "
                    "with the API key (check the base URL)",
                ) from None
            except urllib.error.HTTPError as answer:
                try:
                    raw = answer.read()
                except OSError:
                    raw = b""
                finally:
                    answer.close()
                if 300 <= answer.code < 400:
                    location = answer.headers.get("location") or ""
                    where = _origin(location, self.base_url) if location else "another location"
                    raise UnexpectedRedirectError(
                        answer.code,
                        "unexpected_redirect",
                        f"the service answered {answer.code} redirecting to {where}; the client "
                        "follows no redirect with the API key (check the base URL)",
                    ) from None
                error = error_from_answer(answer.code, raw, answer.headers.get("retry-after"))
            except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
                reason = getattr(err, "reason", err)
                raise NetworkError(
                    0, "network_error", f"could not reach {self.base_url}: {reason}"
                ) from err
            wait = DEFAULT_RETRY_AFTER if error.retry_after is None else error.retry_after
            if (
                error.status not in RETRIED
                or attempt >= self.max_retries
                or wait > self.max_retry_delay
            ):
                raise error
            attempt += 1
            time.sleep(wait)


def _lower(headers: Message) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


class Monitors:
    """Monitors (Pro): a page captured on a schedule and compared with its last image; a
    change past the threshold is a `monitor.changed` webhook and a run with a diff image."""

    def __init__(
        self,
        json: Callable[..., Json],
        request: Callable[..., tuple[int, Mapping[str, str], bytes]],
    ) -> None:
        # The client's transport (its key, retries and redirect refusal), not a copy of it.
        self._json = json
        self._request = request

    def create(
        self,
        url: str | None = None,
        *,
        every: Literal["15m", "1h", "6h", "1d", "7d"],
        html: str | None = None,
        name: str | None = None,
        options: Mapping[str, Any] | None = None,
        threshold: float | None = None,
        ignore_selectors: Sequence[str] | None = None,
        webhook_url: str | None = None,
    ) -> Json:
        """POST /v1/monitors: 201 with the monitor (`id: "mon_..."`, `status: "active"`,
        `next_run_at`). `options` are capture options (not `async`, `response_type`,
        `webhook_url`, nor `format="pdf"`). An `html` monitor is answered with `html_bytes`
        and `html_sha256`, never the document."""
        body: dict[str, Any] = {"every": every}
        fields = {
            "url": url,
            "html": html,
            "name": name,
            "options": None if options is None else dict(options),
            "threshold": threshold,
            "ignore_selectors": None if ignore_selectors is None else [*ignore_selectors],
            "webhook_url": webhook_url,
        }
        body.update({k: v for k, v in fields.items() if v is not None})
        return self._json("POST", "/v1/monitors", body)

    def list(self, limit: int | None = None, cursor: str | None = None) -> Json:
        """GET /v1/monitors: one page of the account's monitors, most recent first."""
        return self._json("GET", f"/v1/monitors{_page_query(limit, cursor)}")

    def iter(self, page_size: int | None = None) -> Iterator[Json]:
        """Every monitor, reading page after page as the loop goes."""
        return _pages(lambda cursor: self.list(page_size, cursor), None)

    def get(self, id: str) -> Json:
        """GET /v1/monitors/{id}."""
        return self._json("GET", f"/v1/monitors/{_segment(id)}")

    def update(
        self,
        id: str,
        *,
        status: Literal["active", "paused"] | None = None,
        every: Literal["15m", "1h", "6h", "1d", "7d"] | None = None,
        threshold: float | None = None,
        name: str | None = None,
        webhook_url: str | None = _UNSET,
    ) -> Json:
        """PATCH /v1/monitors/{id}: `status="paused"` pauses it, `"active"` resumes it;
        `webhook_url=None` stops its events (leave it out to keep it)."""
        body: dict[str, Any] = {
            k: v
            for k, v in (("status", status), ("every", every), ("threshold", threshold), ("name", name))
            if v is not None
        }
        if webhook_url is not _UNSET:
            body["webhook_url"] = webhook_url
        return self._json("PATCH", f"/v1/monitors/{_segment(id)}", body)

    def delete(self, id: str) -> None:
        """DELETE /v1/monitors/{id}: the monitor, its runs and their images (404 at once)."""
        self._request("DELETE", f"/v1/monitors/{_segment(id)}")

    def run(self, id: str) -> Json:
        """POST /v1/monitors/{id}/run: a run now (one unit), 202 `{id: "run_...", status}`."""
        return self._json("POST", f"/v1/monitors/{_segment(id)}/run")

    def runs(self, id: str, limit: int | None = None, cursor: str | None = None) -> Json:
        """GET /v1/monitors/{id}/runs: one page of its runs, newest first."""
        return self._json(
            "GET", f"/v1/monitors/{_segment(id)}/runs{_page_query(limit, cursor)}"
        )


class Destinations:
    """Storage destinations (docs/destinations.md): your own S3-compatible buckets a capture
    is written into with the `storage` option (`storage={"destination": "dst_...", "path":
    "{host}/{id}.{ext}", "hosted": False}`). Adding one takes a plan with
    `storage_destinations` (Pro). Their credentials are never answered."""

    def __init__(
        self,
        json: Callable[..., Json],
        request: Callable[..., tuple[int, Mapping[str, str], bytes]],
    ) -> None:
        # The client's transport (its key, retries and redirect refusal), not a copy of it.
        self._json = json
        self._request = request

    def create(
        self,
        *,
        name: str,
        region: str,
        bucket: str,
        access_key_id: str,
        secret_access_key: str,
        endpoint: str | None = None,
        prefix: str | None = None,
        path_style: bool | None = None,
        acl: Literal["private", "public-read"] | None = None,
    ) -> Json:
        """POST /v1/storage-destinations: 201 with the destination (`id: "dst_..."`,
        `tested_at`), saved only after a test write into the bucket and its delete succeeded.
        A bucket that refuses is a `StorageTestFailedError` naming the provider's code; an
        `endpoint` the service may not reach a `UrlNotAllowedError`. `endpoint` is an
        S3-compatible store's `https://host[:port]` (none: AWS S3); `path_style` defaults to
        True with an endpoint, False for AWS; `acl` to `"private"`."""
        body: dict[str, Any] = {
            "name": name,
            "region": region,
            "bucket": bucket,
            "access_key_id": access_key_id,
            "secret_access_key": secret_access_key,
        }
        optional = {"endpoint": endpoint, "prefix": prefix, "path_style": path_style, "acl": acl}
        body.update({k: v for k, v in optional.items() if v is not None})
        return self._json("POST", "/v1/storage-destinations", body)

    def list(self) -> Json:
        """GET /v1/storage-destinations: `{data: [...]}`, every destination, oldest first."""
        return self._json("GET", "/v1/storage-destinations")

    def get(self, id: str) -> Json:
        """GET /v1/storage-destinations/{id}."""
        return self._json("GET", f"/v1/storage-destinations/{_segment(id)}")

    def test(self, id: str) -> Json:
        """POST /v1/storage-destinations/{id}/test: the test write again; the answer's
        `tested_at` moves on (`StorageTestFailedError` when the bucket refuses now)."""
        return self._json("POST", f"/v1/storage-destinations/{_segment(id)}/test")

    def delete(self, id: str) -> None:
        """DELETE /v1/storage-destinations/{id}: forgotten at once (captures naming it are
        refused); the objects already in the bucket stay."""
        self._request("DELETE", f"/v1/storage-destinations/{_segment(id)}")
