"""The client's own logic without the service: the signing vectors (docs/api.md's, and the
server's own from SHOTSMITH_TEST_VECTORS), and the transport against loopback http.servers:
no redirect followed with the key, retries honouring Retry-After, a long Retry-After raised at
once, refusals mapped to typed errors, and a network failure."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import time
import typing
import unittest
from urllib.parse import parse_qsl, urlsplit

import support

import shotsmith
from shotsmith import (
    AuthenticationError,
    NetworkError,
    PlanRestrictionError,
    QuotaExceededError,
    RateLimitedError,
    Shotsmith,
    ShotsmithError,
    UnexpectedRedirectError,
    ValidationError,
    WebhookVerificationError,
)


class SignedLinks(unittest.TestCase):
    # docs/api.md, "Signed render links": the published test vector.
    SECRET = "sig_live_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"
    PAIRS = [
        ("url", "https://example.com/a b?q=1&lang=fr"),
        ("full_page", "true"),
        ("hide_selectors", ".cookie-bar"),
        ("hide_selectors", "#ad (top)"),
        ("format", "webp"),
        ("key_id", "42"),
        ("expires", "1767225600"),
    ]

    def test_docs_vector(self) -> None:
        self.assertEqual(
            shotsmith.canonical_query(self.PAIRS),
            "expires=1767225600&format=webp&full_page=true&hide_selectors=%23ad%20%28top%29"
            "&hide_selectors=.cookie-bar&key_id=42&url=https%3A%2F%2Fexample.com%2Fa%20b%3Fq%3D1"
            "%26lang%3Dfr",
        )
        self.assertEqual(
            shotsmith.sign_query(self.SECRET, self.PAIRS),
            "3029c076ad164760f97b269857ec6c9e4d7eb713dfc19655fab43f77e57a6d24",
        )

    def test_server_vector(self) -> None:
        link = support.vectors()["link"]
        pairs = [(name, value) for name, value in link["pairs"]]
        self.assertEqual(shotsmith.sign_query(link["secret"], pairs), link["signature"])

    def test_render_link_carries_its_options_and_signs_them(self) -> None:
        link = shotsmith.render_link(
            "https://shots.example.com/",
            7,
            self.SECRET,
            "https://example.com/?q=a b",
            expires=int(time.time()) + 600,
            width=320,
            full_page=True,
            dark_mode=False,
            device_scale_factor=2.0,
            hide_selectors=["#a", ".b c"],
            clip=None,
        )
        parts = urlsplit(link)
        self.assertEqual(f"{parts.scheme}://{parts.netloc}{parts.path}", "https://shots.example.com/v1/render")
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        got = dict(pairs)
        self.assertEqual(got["width"], "320")
        self.assertEqual(got["full_page"], "true")
        self.assertEqual(got["dark_mode"], "false")
        self.assertEqual(got["device_scale_factor"], "2")
        self.assertEqual([v for k, v in pairs if k == "hide_selectors"], ["#a", ".b c"])
        self.assertNotIn("clip", got)
        self.assertEqual(got["key_id"], "7")
        signature = got.pop("signature")
        self.assertEqual(shotsmith.sign_query(self.SECRET, [p for p in pairs if p[0] != "signature"]), signature)

    def test_render_link_refusals(self) -> None:
        with self.assertRaisesRegex(ValueError, "at most 604800 seconds"):
            shotsmith.render_link("http://x", 1, "sig", "https://e.com", expires=time.time() + 8 * 86400)
        with self.assertRaisesRegex(TypeError, "clip is an object"):
            shotsmith.render_link("http://x", 1, "sig", "https://e.com", clip={"x": 0})
        with self.assertRaisesRegex(TypeError, "geolocation is an object"):
            shotsmith.render_link("http://x", 1, "sig", "https://e.com", geolocation={"latitude": 1, "longitude": 2})
        # An operator proxy's id rides in a link; a proxy URL would put its credentials there.
        with self.assertRaisesRegex(ValueError, "proxy is a URL, and a render link cannot carry one"):
            shotsmith.render_link("http://x", 1, "sig", "https://e.com", proxy="socks5://u:secret@proxy.example.net:1080")
        link = shotsmith.render_link("http://x", 1, "sig", "https://e.com", proxy="de-1", proxy_country=None)
        self.assertEqual(dict(parse_qsl(urlsplit(link).query))["proxy"], "de-1")


class Webhooks(unittest.TestCase):
    SECRET = "whsec_" + base64.b64encode(bytes([7] * 32)).decode()
    BODY = b'{"type":"screenshot.failed","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":"job_x","status":"failed"}}'

    def headers(self, msg_id: str, ts: int, body: bytes, secret: str | None = None) -> dict[str, str]:
        key = base64.b64decode((secret or self.SECRET)[len("whsec_") :])
        mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
        return {
            "webhook-id": msg_id,
            "webhook-timestamp": str(ts),
            "webhook-signature": "v1," + base64.b64encode(mac).decode(),
        }

    def test_server_vector(self) -> None:
        hook = support.vectors()["webhook"]
        headers = {
            "Webhook-Id": hook["id"],
            "Webhook-Timestamp": str(hook["timestamp"]),
            "Webhook-Signature": hook["signature"],
        }
        event = shotsmith.verify_webhook(hook["body"], headers, hook["secret"], now=hook["timestamp"])
        self.assertEqual(event["data"]["id"], "job_ü")
        # The same bytes as bytes; one changed byte fails.
        shotsmith.verify_webhook(hook["body"].encode(), headers, hook["secret"], now=hook["timestamp"])
        with self.assertRaisesRegex(WebhookVerificationError, "no signature matches"):
            shotsmith.verify_webhook(hook["body"] + " ", headers, hook["secret"], now=hook["timestamp"])

    def test_accepts_any_of_several_signatures_and_refuses_the_rest(self) -> None:
        now = int(time.time())
        headers = self.headers("msg_1", now, self.BODY)
        self.assertEqual(shotsmith.verify_webhook(self.BODY, headers, self.SECRET)["type"], "screenshot.failed")
        rotated = {**headers, "webhook-signature": "v1,AAAA " + headers["webhook-signature"]}
        shotsmith.verify_webhook(self.BODY, rotated, self.SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "no signature matches"):
            shotsmith.verify_webhook(self.BODY, {**headers, "webhook-id": "msg_2"}, self.SECRET)
        other = "whsec_" + base64.b64encode(bytes([8] * 32)).decode()
        with self.assertRaisesRegex(WebhookVerificationError, "no signature matches"):
            shotsmith.verify_webhook(self.BODY, headers, other)
        old = self.headers("msg_1", now - 3600, self.BODY)
        with self.assertRaisesRegex(WebhookVerificationError, "too far from now"):
            shotsmith.verify_webhook(self.BODY, old, self.SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "missing webhook-signature"):
            shotsmith.verify_webhook(self.BODY, {"webhook-id": "m", "webhook-timestamp": str(now)}, self.SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "must start with whsec_"):
            shotsmith.verify_webhook(self.BODY, headers, self.SECRET[len("whsec_") :])
        with self.assertRaisesRegex(WebhookVerificationError, "bad webhook-timestamp"):
            shotsmith.verify_webhook(self.BODY, {**headers, "webhook-timestamp": "1e9"}, self.SECRET)


class CaptureOptionsMatchTheApi(unittest.TestCase):
    """CaptureOptions is written out for type checkers; openapi.json (the routes' schemas) is
    the truth, so a field added, dropped or given another enum there fails here."""

    def test_fields_and_enums(self) -> None:
        document = json.loads((support.PACKAGE_ROOT.parent.parent / "openapi.json").read_text("utf-8"))
        schema = document["paths"]["/v1/screenshots"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        own = {"url", "html", "markdown", "async", "response_type", "webhook_url"}
        api_fields = {name: spec for name, spec in schema["properties"].items() if name not in own}
        hints = typing.get_type_hints(shotsmith.CaptureOptions)
        self.assertEqual(sorted(hints), sorted(api_fields))

        def literals(hint: object) -> set[object]:
            if typing.get_origin(hint) is typing.Literal:
                return set(typing.get_args(hint))
            return set().union(*(literals(arg) for arg in typing.get_args(hint))) if typing.get_args(hint) else set()

        for name, spec in api_fields.items():
            enum = spec.get("enum") or spec.get("items", {}).get("enum")
            with self.subTest(field=name):
                self.assertEqual(literals(hints[name]), set(enum or []))


class Transport(unittest.TestCase):
    def serve(self, handler: support.Handler) -> support.LocalServer:
        server = support.LocalServer(handler)
        self.addCleanup(server.close)
        return server

    def test_no_redirect_is_followed_with_the_key(self) -> None:
        elsewhere = self.serve(lambda req, body: support.json_answer(200, {"plan": "stolen"}))
        front = self.serve(
            lambda req, body: (
                307 if req.command == "GET" else 301,
                {"location": f"{elsewhere.origin}{req.path}"},
                b"",
            )
        )
        api = Shotsmith("sk_live_secret", front.origin)
        with self.assertRaises(UnexpectedRedirectError) as caught:
            api.usage()
        self.assertEqual((caught.exception.status, caught.exception.code), (307, "unexpected_redirect"))
        self.assertIn(f"redirecting to {elsewhere.origin}", caught.exception.message)
        with self.assertRaises(UnexpectedRedirectError) as posted:
            api.capture("https://example.com")
        self.assertEqual(posted.exception.status, 301)
        self.assertEqual(len(front.requests), 2)
        self.assertEqual(front.requests[0]["headers"]["x-api-key"], "sk_live_secret")
        self.assertEqual(elsewhere.requests, [], "the key never reached the other host")

    def test_retries_a_429_after_its_retry_after(self) -> None:
        answers = [
            support.json_answer(429, {"error": "rate limit exceeded", "reset_time": 1}, {"retry-after": "1"}),
            support.json_answer(200, {"plan": "free", "used": 1, "limit": 100}),
        ]
        server = self.serve(lambda req, body: answers.pop(0))
        api = Shotsmith("sk_live_x", server.origin, max_retries=3, max_retry_delay=5)
        started = time.monotonic()
        usage = api.usage()
        waited = time.monotonic() - started
        self.assertEqual(usage["plan"], "free")
        self.assertEqual(len(server.requests), 2)
        self.assertGreaterEqual(waited, 0.95, "the retry waited for Retry-After")

    def test_a_retry_after_beyond_the_bound_is_raised_at_once(self) -> None:
        server = self.serve(
            lambda req, body: support.json_answer(
                429,
                {"error": "rate limit exceeded", "message": "Rate limit of 5 requests per minute exceeded; retry after 120 seconds.", "reset_time": 1767225600},
                {"retry-after": "120"},
            )
        )
        api = Shotsmith("sk_live_x", server.origin, max_retry_delay=5)
        started = time.monotonic()
        with self.assertRaises(RateLimitedError) as caught:
            api.capture("https://example.com")
        self.assertLess(time.monotonic() - started, 30, "no 120 s wait")
        error = caught.exception
        self.assertEqual((error.status, error.code, error.retry_after, error.reset_time), (429, "rate_limited", 120, 1767225600))
        self.assertIn("retry after 120 seconds", error.message)
        self.assertEqual(len(server.requests), 1)

    def test_retries_at_most_max_retries(self) -> None:
        server = self.serve(
            lambda req, body: support.json_answer(503, {"error": "busy", "code": "overloaded"}, {"retry-after": "0"})
        )
        with self.assertRaises(shotsmith.OverloadedError):
            Shotsmith("sk_live_x", server.origin, max_retries=2).usage()
        self.assertEqual(len(server.requests), 3)
        with self.assertRaises(shotsmith.OverloadedError):
            Shotsmith("sk_live_x", server.origin, max_retries=0).usage()
        self.assertEqual(len(server.requests), 4)

    def test_sends_proxy_and_geolocation_and_lists_the_proxies(self) -> None:
        listing = {"data": [{"id": "de-1", "countries": ["de"]}, {"id": "spare", "countries": []}]}
        server = self.serve(
            lambda req, body: support.json_answer(200, listing)
            if req.command == "GET"
            else support.json_answer(201, {"image_url": "http://x/i.png"})
        )
        api = Shotsmith("sk_live_x", server.origin)
        self.assertEqual(api.proxies(), listing)
        self.assertEqual((server.requests[0]["method"], server.requests[0]["path"]), ("GET", "/v1/proxies"))
        self.assertEqual(server.requests[0]["headers"]["x-api-key"], "sk_live_x")
        position = {"latitude": 52.52, "longitude": 13.405, "accuracy": 50}
        api.capture("https://example.com", proxy="socks5://user:pass@proxy.example.net:1080", geolocation=position)
        api.capture_async("https://example.com", proxy_country="de", geolocation={"latitude": -33.9, "longitude": 18.4})
        api.batch([{"url": "https://example.com", "proxy": "de-1"}])
        bodies = [json.loads(r["body"]) for r in server.requests[1:]]
        self.assertEqual(
            bodies,
            [
                {"url": "https://example.com", "proxy": "socks5://user:pass@proxy.example.net:1080", "geolocation": position},
                {"url": "https://example.com", "proxy_country": "de", "geolocation": {"latitude": -33.9, "longitude": 18.4}, "async": True},
                {"requests": [{"url": "https://example.com", "proxy": "de-1"}]},
            ],
        )
        self.assertEqual([r["path"] for r in server.requests[1:]], ["/v1/screenshots", "/v1/screenshots", "/v1/screenshots/batch"])

    def test_manages_storage_destinations_and_types_their_refusals(self) -> None:
        made = {"id": "dst_" + "a" * 24, "name": "assets", "bucket": "shots"}
        refusals = {
            "refused": support.json_answer(
                400,
                {"error": "the test write into the bucket failed: AccessDenied (HTTP 403)",
                 "code": "storage_test_failed", "provider_code": "AccessDenied"},
            ),
            "upload": support.json_answer(
                502, {"error": "the upload into your bucket failed: NoSuchBucket (HTTP 404)", "code": "storage_destination_error"}
            ),
        }

        def answer(req: typing.Any, body: bytes) -> tuple[int, dict[str, str], bytes]:
            for name, refusal in refusals.items():
                if name in req.path or name.encode() in body:
                    return refusal
            if req.command == "DELETE":
                return support.json_answer(200, {"success": True, "message": "storage destination deleted"})
            if req.command == "GET" and req.path == "/v1/storage-destinations":
                return support.json_answer(200, {"data": [made]})
            return support.json_answer(200 if req.command == "GET" else 201, made)

        server = self.serve(answer)
        api = Shotsmith("sk_live_x", server.origin)
        created = api.destinations.create(
            name="assets", region="auto", bucket="shots", access_key_id="AKIA", secret_access_key="s3cret ",
            endpoint="https://r2.example.net", prefix="shotsmith", path_style=False, acl="public-read",
        )
        self.assertEqual(created, made)
        api.destinations.create(name="aws", region="eu-west-1", bucket="shots", access_key_id="AKIA", secret_access_key="s")
        self.assertEqual(api.destinations.list(), {"data": [made]})
        api.destinations.get(made["id"])
        api.destinations.test(made["id"])
        self.assertIsNone(api.destinations.delete(made["id"]))
        self.assertEqual(
            [(r["method"], r["path"]) for r in server.requests],
            [
                ("POST", "/v1/storage-destinations"),
                ("POST", "/v1/storage-destinations"),
                ("GET", "/v1/storage-destinations"),
                ("GET", f"/v1/storage-destinations/{made['id']}"),
                ("POST", f"/v1/storage-destinations/{made['id']}/test"),
                ("DELETE", f"/v1/storage-destinations/{made['id']}"),
            ],
        )
        self.assertEqual(server.requests[0]["headers"]["x-api-key"], "sk_live_x")
        self.assertEqual(
            [json.loads(r["body"]) for r in server.requests[:2]],
            [
                {"name": "assets", "region": "auto", "bucket": "shots", "access_key_id": "AKIA",
                 "secret_access_key": "s3cret ", "endpoint": "https://r2.example.net", "prefix": "shotsmith",
                 "path_style": False, "acl": "public-read"},
                # Left out, the service's defaults hold (AWS S3, no prefix, its path style, private).
                {"name": "aws", "region": "eu-west-1", "bucket": "shots", "access_key_id": "AKIA", "secret_access_key": "s"},
            ],
        )
        # An id is one path segment, whatever it holds.
        api.destinations.get("dst_../../v1/usage")
        self.assertEqual(server.requests[-1]["path"], "/v1/storage-destinations/dst_..%2F..%2Fv1%2Fusage")

        with self.assertRaises(shotsmith.StorageTestFailedError) as refused:
            api.destinations.test("refused")
        self.assertEqual((refused.exception.status, refused.exception.code), (400, "storage_test_failed"))
        self.assertEqual(refused.exception.details["provider_code"], "AccessDenied")
        self.assertIsInstance(refused.exception, shotsmith.ValidationError)
        with self.assertRaises(shotsmith.StorageDestinationError) as upload:
            api.capture("https://example.com/upload", storage={"destination": made["id"]})
        self.assertEqual((upload.exception.status, upload.exception.code), (502, "storage_destination_error"))
        self.assertIsInstance(upload.exception, shotsmith.ServerError)
        self.assertNotIsInstance(upload.exception, shotsmith.TargetError, "the bucket, not the page")
        self.assertEqual(len([r for r in server.requests if "upload" in r["path"] or "upload" in r["body"].decode()]), 1, "a 502 is not retried")

    def test_refusals_are_typed(self) -> None:
        answers = {
            "400": support.json_answer(400, {"error": "width must be an integer", "code": "invalid_request"}),
            "plan": support.json_answer(400, {"error": "webp is Pro", "code": "plan_restriction"}),
            "401": support.json_answer(401, {"error": "unauthorized"}),
            "402": support.json_answer(402, {"error": "monthly quota exceeded", "resets_at": "2026-02-01T00:00:00.000Z"}),
            "500": (500, {"content-type": "text/html"}, b"<h1>proxy error</h1>"),
            "proxy": support.json_answer(502, {"error": "proxy could not be reached", "code": "proxy_error"}),
        }
        server = self.serve(lambda req, body: answers[req.path.split("/v1/screenshots/")[1]])
        api = Shotsmith("sk_live_x", server.origin)
        cases: list[tuple[str, type[ShotsmithError], int, str]] = [
            ("400", ValidationError, 400, "invalid_request"),
            ("plan", PlanRestrictionError, 400, "plan_restriction"),
            ("401", AuthenticationError, 401, "unauthorized"),
            ("402", QuotaExceededError, 402, "quota_exceeded"),
            ("500", shotsmith.ServerError, 500, "internal_error"),
            ("proxy", shotsmith.ProxyError, 502, "proxy_error"),
        ]
        for path, cls, status, code in cases:
            with self.subTest(path=path):
                with self.assertRaises(cls) as caught:
                    api.screenshot(path)
                self.assertEqual((caught.exception.status, caught.exception.code), (status, code))
        with self.assertRaises(QuotaExceededError) as quota:
            api.screenshot("402")
        self.assertEqual(quota.exception.resets_at, "2026-02-01T00:00:00.000Z")
        self.assertIsInstance(quota.exception, ShotsmithError)
        with self.assertRaises(shotsmith.ServerError) as proxy:
            api.screenshot("proxy")
        self.assertEqual(proxy.exception.message, "proxy could not be reached")
        self.assertNotIsInstance(proxy.exception, shotsmith.TargetError, "the proxy, not the page")
        self.assertEqual(len([r for r in server.requests if r["path"].endswith("/proxy")]), 2, "a 502 is not retried")

    def test_no_answer_is_a_network_error(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # bound, never listening: the connection is refused
            with self.assertRaises(NetworkError) as caught:
                Shotsmith("sk_live_x", f"http://127.0.0.1:{port}", timeout=10).usage()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "network_error"))
        self.assertIn(f"could not reach http://127.0.0.1:{port}", caught.exception.message)

    def test_a_silent_service_is_a_network_error_after_the_timeout(self) -> None:
        def silent(req: object, body: bytes) -> tuple[int, dict[str, str], bytes]:
            time.sleep(10)
            return support.json_answer(200, {})

        server = self.serve(silent)
        started = time.monotonic()
        with self.assertRaises(NetworkError) as caught:
            Shotsmith("sk_live_x", server.origin, timeout=0.5).usage()
        self.assertLess(time.monotonic() - started, 8, "gave up before the answer")
        self.assertIn("timed out", caught.exception.message)

    def test_the_key_stays_out_of_reprs(self) -> None:
        api = Shotsmith("sk_live_very_secret", "http://127.0.0.1:1/")
        self.assertEqual(api.base_url, "http://127.0.0.1:1")
        self.assertNotIn("very_secret", repr(api))
        with self.assertRaises(ValueError):
            Shotsmith("sk_live_x", "ftp://example.com")


if __name__ == "__main__":
    unittest.main()
