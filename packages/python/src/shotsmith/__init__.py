"""Shotsmith: the Python client of the Shotsmith screenshot API (standard library only).

    from shotsmith import Shotsmith
    api = Shotsmith("sk_live_...", "https://shots.example.com")
    api.capture("https://example.com", width=1280)["image_url"]
"""

__version__ = "0.1.0"

from .client import CapturedImage, Destinations, Monitors, Shotsmith
from .errors import (
    AuthenticationError,
    CaptureRejectedError,
    ConflictError,
    NetworkError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    PlanRestrictionError,
    ProxyError,
    QuotaExceededError,
    RateLimitedError,
    RenderTimeoutError,
    ServerError,
    ShotsmithError,
    StorageDestinationError,
    StorageTestFailedError,
    TargetError,
    UnexpectedRedirectError,
    UrlNotAllowedError,
    ValidationError,
    WaitTimeoutError,
)
from .links import canonical_query, encode_rfc3986, link_params, render_link, sign_query
from .types import CaptureOptions, Json
from .webhooks import WebhookVerificationError, verify_webhook

__all__ = [
    "AuthenticationError",
    "CaptureOptions",
    "CaptureRejectedError",
    "CapturedImage",
    "ConflictError",
    "Destinations",
    "Json",
    "Monitors",
    "NetworkError",
    "NotFoundError",
    "OverloadedError",
    "PermissionDeniedError",
    "PlanRestrictionError",
    "ProxyError",
    "QuotaExceededError",
    "RateLimitedError",
    "RenderTimeoutError",
    "ServerError",
    "Shotsmith",
    "ShotsmithError",
    "StorageDestinationError",
    "StorageTestFailedError",
    "TargetError",
    "UnexpectedRedirectError",
    "UrlNotAllowedError",
    "ValidationError",
    "WaitTimeoutError",
    "WebhookVerificationError",
    "__version__",
    "canonical_query",
    "encode_rfc3986",
    "link_params",
    "render_link",
    "sign_query",
    "verify_webhook",
]
