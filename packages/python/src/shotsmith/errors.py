"""Every refusal of the API as one typed error (docs/errors.md).

`ShotsmithError` carries the HTTP status, the stable `code`, the message, the answer's JSON
body and the fields some answers carry (402: `resets_at`; 429: `reset_time`; 429 and 503:
`retry_after`). Subclasses name the refusals a program branches on; `except ShotsmithError`
catches them all. A request that never got an answer is a `NetworkError` (status 0, code
`network_error`); a redirect the client refused is an `UnexpectedRedirectError`.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any, cast

#: The code of an answer whose body names none (401, 402, 404 and 429 bodies are fixed).
CODE_BY_STATUS: Mapping[int, str] = {
    400: "invalid_request",
    401: "unauthorized",
    402: "quota_exceeded",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    422: "capture_rejected",
    429: "rate_limited",
    500: "internal_error",
    502: "target_unreachable",
    503: "overloaded",
    504: "render_timeout",
}


class ShotsmithError(Exception):
    """A refusal of the service, or a request that got no usable answer."""

    status: int
    code: str
    message: str
    body: dict[str, Any]
    retry_after: float | None
    resets_at: str | None
    reset_time: int | None

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        body: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.body = dict(body or {})
        self.retry_after = retry_after
        resets_at = self.body.get("resets_at")
        self.resets_at = resets_at if isinstance(resets_at, str) else None
        reset_time = self.body.get("reset_time")
        self.reset_time = (
            reset_time if isinstance(reset_time, int) and not isinstance(reset_time, bool) else None
        )

    @property
    def details(self) -> dict[str, Any]:
        """The body's fields beside `error` and `code` (warnings, phase, plan, used, ...)."""
        return {k: v for k, v in self.body.items() if k not in ("error", "code")}

    def __str__(self) -> str:
        return f"{self.message} (HTTP {self.status}, {self.code})" if self.status else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, message={self.message!r})"


class ValidationError(ShotsmithError):
    """400 `invalid_request` (a wrong type, an unknown field, a value out of range) or 413."""


class PlanRestrictionError(ValidationError):
    """400 `plan_restriction`: an option the account's plan does not allow."""


class UrlNotAllowedError(ValidationError):
    """400 `url_not_allowed`: a target, webhook or storage endpoint address the service
    refuses to reach."""


class StorageTestFailedError(ValidationError):
    """400 `storage_test_failed`: the bucket refused the test write a storage destination is
    checked with (its message and `details["provider_code"]` name the provider's code:
    `AccessDenied`, `NoSuchBucket`, `InvalidAccessKeyId`, ...); nothing was saved."""


class AuthenticationError(ShotsmithError):
    """401: a missing, unknown or revoked API key."""


class QuotaExceededError(ShotsmithError):
    """402: the monthly quota is spent until `resets_at`."""


class PermissionDeniedError(ShotsmithError):
    """403."""


class NotFoundError(ShotsmithError):
    """404: an unknown (or another account's) screenshot, job, batch or monitor."""


class ConflictError(ShotsmithError):
    """409."""


class CaptureRejectedError(ShotsmithError):
    """422 `capture_rejected`: a warning named in `fail_on` was found (`details["warnings"]`)."""


class RateLimitedError(ShotsmithError):
    """429: over the plan's per-minute rate; `retry_after` seconds and `reset_time`."""


class ServerError(ShotsmithError):
    """A 5xx answer."""


class TargetError(ServerError):
    """502 `target_unreachable` or `target_error`: the page, not the service, failed."""


class ProxyError(ServerError):
    """502 `proxy_error`: the proxy the capture went out through failed (it refused the
    credentials, could not be reached, timed out or refused the connection); the message says
    which, never the proxy's credentials."""


class StorageDestinationError(ServerError):
    """502 `storage_destination_error`: the capture could not be written into the storage
    destination it named (the message names the provider's or the network's code). No quota
    unit was spent and nothing was kept hosted for it."""


class OverloadedError(ServerError):
    """503 `overloaded`: every render slot busy and the queue full; retry after `retry_after`."""


class RenderTimeoutError(ServerError):
    """504 `render_timeout`: `details["phase"]` and `details["pending_requests"]` say why."""


class NetworkError(ShotsmithError):
    """No answer at all (refused, reset, timed out): status 0, code `network_error`."""


class UnexpectedRedirectError(ShotsmithError):
    """A 3xx answer, which the client never follows with the API key."""


class WaitTimeoutError(ShotsmithError):
    """`wait` or `wait_batch` gave up: status 0, code `timeout`."""


_BY_CODE: Mapping[str, type[ShotsmithError]] = {
    "invalid_request": ValidationError,
    "payload_too_large": ValidationError,
    "plan_restriction": PlanRestrictionError,
    "url_not_allowed": UrlNotAllowedError,
    "unauthorized": AuthenticationError,
    "quota_exceeded": QuotaExceededError,
    "forbidden": PermissionDeniedError,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "capture_rejected": CaptureRejectedError,
    "rate_limited": RateLimitedError,
    "target_unreachable": TargetError,
    "target_error": TargetError,
    "proxy_error": ProxyError,
    "storage_test_failed": StorageTestFailedError,
    "storage_destination_error": StorageDestinationError,
    "overloaded": OverloadedError,
    "render_timeout": RenderTimeoutError,
    "network_error": NetworkError,
    "unexpected_redirect": UnexpectedRedirectError,
    "timeout": WaitTimeoutError,
}


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if seconds >= 0 and seconds == seconds and seconds != float("inf") else None


def error_from_answer(
    status: int, raw_body: bytes, retry_after_header: str | None
) -> ShotsmithError:
    """The error an HTTP answer that is not a success stands for."""
    body: dict[str, Any] = {}
    try:
        parsed = json.loads(raw_body.decode("utf-8"))
        if isinstance(parsed, dict):
            body = cast(dict[str, Any], parsed)
    except (UnicodeDecodeError, ValueError):
        pass  # Not JSON (a proxy's page): the status says enough.
    message = body.get("message") if isinstance(body.get("message"), str) else None
    if message is None:
        message = body["error"] if isinstance(body.get("error"), str) else f"HTTP {status}"
    code = body.get("code")
    if not isinstance(code, str):
        code = CODE_BY_STATUS.get(status) or (
            "internal_error" if status >= 500 else "invalid_request"
        )
    cls = _BY_CODE.get(code)
    if cls is None:
        cls = ServerError if status >= 500 else ShotsmithError
    return cls(status, code, message, body=body, retry_after=parse_retry_after(retry_after_header))
