"""The client against a real running service (started by test/client/python.test.ts, which
passes its URL, a fixture site, a Free and a Pro account's keys and the Pro account's webhook
secret in SHOTSMITH_TEST_* variables, the proxies of its PROXIES_FILE and an S3-compatible
server): captures as JSON and as bytes, through a proxy and with a position, into a storage
destination, typed refusals, a signed link the service accepts, a webhook the service delivers
to a receiver here, records, batches and monitors."""

from __future__ import annotations

import json
import re
import struct
import time
import unittest
import urllib.error
import urllib.request
from typing import Any

import support

import shotsmith
from shotsmith import (
    AuthenticationError,
    CapturedImage,
    NotFoundError,
    PlanRestrictionError,
    Shotsmith,
    ValidationError,
    WebhookVerificationError,
)

ENV: dict[str, str] = {}
HOOKS: support.LocalServer | None = None
SMALL: dict[str, Any] = {"width": 320, "height": 200}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def setUpModule() -> None:
    ENV.update(
        support.service_env(
            "URL", "SITE", "FREE_KEY", "FREE_KEY_ID", "FREE_SIGNING_SECRET", "PRO_KEY",
            "WEBHOOK_SECRET", "HOOK_PORT",
        )
    )
    global HOOKS
    # The customer's endpoint: the service may deliver to this port (EGRESS_ALLOWLIST).
    HOOKS = support.LocalServer(lambda req, body: (200, {"content-type": "text/plain"}, b"ok"), int(ENV["HOOK_PORT"]))


def tearDownModule() -> None:
    if HOOKS is not None:
        HOOKS.close()


def free() -> Shotsmith:
    return Shotsmith(ENV["FREE_KEY"], ENV["URL"])


def pro() -> Shotsmith:
    return Shotsmith(ENV["PRO_KEY"], ENV["URL"])


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE, data[:16]
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def hooks() -> support.LocalServer:
    assert HOOKS is not None
    return HOOKS


def delivered(*containing: str, timeout: float = 60) -> dict[str, Any]:
    """The first webhook whose body holds every text of `containing`, as it arrived."""
    needles = [text.encode() for text in containing]

    def match(r: dict[str, Any]) -> bool:
        return all(n in r["body"] for n in needles)

    hooks().wait_for(lambda reqs: any(match(r) for r in reqs), timeout)
    return next(r for r in hooks().requests if match(r))


class Captures(unittest.TestCase):
    def test_json_then_bytes_usage_plans_devices(self) -> None:
        api = free()
        url = f"{ENV['SITE']}/?python-capture"
        result = api.capture(url, **SMALL)
        self.assertRegex(result["image_url"], r"/images/.+\.png$")
        self.assertEqual((result["width"], result["height"], result["cached"]), (320, 200, False))

        image = api.capture(url, response_type="image", **SMALL)
        self.assertIsInstance(image, CapturedImage)
        self.assertEqual(png_size(image.content), (320, 200))
        self.assertGreater(len(image.content), 100)
        self.assertEqual(image.content_type, "image/png")
        self.assertTrue(image.cached)
        self.assertEqual(image.image_url, result["image_url"])
        self.assertIsNotNone(image.quota_used)
        self.assertEqual(image.quota_limit, 50)
        self.assertIsNone(image.screenshot_id)

        html = api.capture_image(html="<h1 style='font:40px serif'>from python</h1>", width=300, height=150)
        self.assertEqual(png_size(html.content), (300, 150))
        self.assertFalse(html.cached)

        usage = api.usage()
        self.assertEqual((usage["plan"], usage["limit"]), ("free", 50))
        assert image.quota_used is not None
        self.assertEqual(usage["used"], image.quota_used + 1)
        self.assertIn("pro", [p["name"] for p in api.plans()["data"]])
        self.assertGreaterEqual(len(api.devices()["data"]), 20)

    def test_refusals_are_typed_errors(self) -> None:
        with self.assertRaises(AuthenticationError) as bad_key:
            Shotsmith("sk_live_nope", ENV["URL"]).usage()
        self.assertEqual((bad_key.exception.status, bad_key.exception.code), (401, "unauthorized"))

        api = free()
        with self.assertRaises(ValidationError) as invalid:
            api.capture(f"{ENV['SITE']}/", width="wide")  # type: ignore[arg-type]
        error = invalid.exception
        self.assertEqual(
            (error.status, error.code, error.message), (400, "invalid_request", "width must be an integer")
        )
        with self.assertRaises(PlanRestrictionError) as plan:
            api.capture(f"{ENV['SITE']}/", format="webp")
        self.assertEqual((plan.exception.status, plan.exception.code), (400, "plan_restriction"))
        with self.assertRaises(shotsmith.UrlNotAllowedError):
            api.capture("http://10.0.0.1/")
        with self.assertRaises(NotFoundError):
            api.screenshot("job_" + "0" * 24)


class Proxies(unittest.TestCase):
    """The service's PROXIES_FILE names a proxy serving SHOTSMITH_TEST_PROXY_COUNTRY and one
    whose credentials its proxy refuses; /located titles itself with the position it is told."""

    def test_lists_the_proxies_and_captures_through_one(self) -> None:
        env = support.service_env("PROXIES", "PROXY_ID", "PROXY_COUNTRY", "LOCKED_PROXY_ID")
        api = pro()
        self.assertEqual(api.proxies(), json.loads(env["PROXIES"]))
        located = api.capture(
            f"{ENV['SITE']}/located?python-proxy",
            proxy=env["PROXY_ID"],
            geolocation={"latitude": 52.52, "longitude": 13.405, "accuracy": 25},
            wait_for_selector="#located",
            metadata=True,
            **SMALL,
        )
        self.assertEqual(located["metadata"]["title"], "52.52,13.405,25")
        image = api.capture_image(
            f"{ENV['SITE']}/located?python-country", proxy_country=env["PROXY_COUNTRY"], **SMALL
        )
        self.assertEqual(png_size(image.content), (320, 200))

        with self.assertRaises(shotsmith.ProxyError) as failed:
            api.capture(f"{ENV['SITE']}/?python-locked", proxy=env["LOCKED_PROXY_ID"], **SMALL)
        error = failed.exception
        self.assertEqual((error.status, error.code, error.message), (502, "proxy_error", "proxy authentication failed"))
        self.assertIsInstance(error, shotsmith.ServerError)
        with self.assertRaises(ValidationError) as both:
            api.capture(f"{ENV['SITE']}/", proxy=env["PROXY_ID"], proxy_country=env["PROXY_COUNTRY"])
        self.assertEqual(both.exception.message, "proxy and proxy_country cannot be used together")
        # Free: the listing reads, the option is the plan's refusal.
        self.assertEqual(free().proxies(), json.loads(env["PROXIES"]))
        with self.assertRaises(PlanRestrictionError):
            free().capture(f"{ENV['SITE']}/", proxy_country=env["PROXY_COUNTRY"])


class StorageDestinations(unittest.TestCase):
    """The service's EGRESS_ALLOWLIST names an S3-compatible server (s3rver) with one bucket;
    test/client/python.test.ts reads back from it what these captures wrote under `python/`."""

    def test_adds_tests_captures_into_and_deletes_a_destination(self) -> None:
        env = support.service_env("S3_ENDPOINT", "S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY")
        bucket: dict[str, Any] = {
            "endpoint": env["S3_ENDPOINT"],
            "region": "us-east-1",
            "bucket": env["S3_BUCKET"],
            "access_key_id": env["S3_ACCESS_KEY_ID"],
            "secret_access_key": env["S3_SECRET_ACCESS_KEY"],
        }
        api = pro()
        made = api.destinations.create(name="python", prefix="python", **bucket)
        self.assertRegex(made["id"], r"^dst_[0-9A-Za-z]{24}$")
        self.assertEqual(
            (made["name"], made["bucket"], made["prefix"], made["path_style"], made["acl"]),
            ("python", env["S3_BUCKET"], "python", True, "private"),
        )
        self.assertFalse({"access_key_id", "secret_access_key"} & made.keys(), "never the credentials")
        self.assertEqual([d["id"] for d in api.destinations.list()["data"]], [made["id"]])
        self.assertEqual(api.destinations.get(made["id"]), made)
        tested = api.destinations.test(made["id"])
        self.assertGreaterEqual(tested["tested_at"], made["tested_at"])

        result = api.capture(
            f"{ENV['SITE']}/?python-storage",
            storage={"destination": made["id"], "path": "{host}/{id}.{ext}"},
            **SMALL,
        )
        copy = result["storage"]
        self.assertEqual((copy["destination"], copy["bucket"]), (made["id"], env["S3_BUCKET"]))
        self.assertRegex(copy["key"], r"^python/127\.0\.0\.1/[^/]+\.png$")
        self.assertTrue(copy["location"].endswith(f"/{env['S3_BUCKET']}/{copy['key']}"), copy["location"])
        self.assertIn("image_url", result)
        only = api.capture(
            f"{ENV['SITE']}/?python-storage-only",
            storage={"destination": made["id"], "path": "only/{id}.{ext}", "hosted": False},
            **SMALL,
        )
        self.assertNotIn("image_url", only)
        self.assertRegex(only["storage"]["key"], r"^python/only/[^/]+\.png$")

        with self.assertRaises(shotsmith.StorageTestFailedError) as refused:
            api.destinations.create(name="nowhere", **{**bucket, "bucket": "no-such-bucket-here"})
        self.assertEqual((refused.exception.status, refused.exception.code), (400, "storage_test_failed"))
        self.assertIn("NoSuchBucket", refused.exception.message)
        with self.assertRaises(PlanRestrictionError):
            free().destinations.create(name="free", **bucket)

        api.destinations.delete(made["id"])
        self.assertEqual(api.destinations.list()["data"], [])
        with self.assertRaises(NotFoundError):
            api.destinations.test(made["id"])
        # A capture naming it now is refused before anything renders.
        with self.assertRaises(ValidationError) as gone:
            api.capture(f"{ENV['SITE']}/?python-storage-gone", storage={"destination": made["id"]})
        self.assertIn("storage.destination", gone.exception.message)


class SignedLinks(unittest.TestCase):
    def test_the_service_accepts_a_link_made_here(self) -> None:
        api = free()
        link = api.render_link(
            int(ENV["FREE_KEY_ID"]),
            ENV["FREE_SIGNING_SECRET"],
            f"{ENV['SITE']}/?python-link",
            hide_selectors=["#a", ".b c"],
            **SMALL,
        )
        self.assertTrue(link.startswith(f"{ENV['URL']}/v1/render?"))
        self.assertNotIn(ENV["FREE_KEY"], link)
        # Followed to the hosted image: the link carries no key, so following is fine here.
        with urllib.request.urlopen(link, timeout=60) as res:
            self.assertEqual(res.status, 200)
            self.assertEqual(png_size(res.read()), (320, 200))
        # One changed parameter: the signature no longer matches.
        tampered = link.replace("width=320", "width=321")
        self.assertNotEqual(tampered, link)
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(tampered, timeout=60)
        self.assertEqual(refused.exception.code, 401)
        refused.exception.close()


class ProFeatures(unittest.TestCase):
    def test_async_capture_with_a_webhook_the_service_delivers(self) -> None:
        api = pro()
        hook_url = f"http://127.0.0.1:{ENV['HOOK_PORT']}/hooks/job"
        job = api.capture_async(f"{ENV['SITE']}/?python-job", webhook_url=hook_url, **SMALL)
        self.assertEqual(job["status"], "queued")
        self.assertRegex(job["id"], r"^job_")
        done = api.wait(job["id"], interval=0.2, timeout=120)
        self.assertEqual(done["status"], "succeeded", done)
        self.assertEqual(api.job(job["id"])["status"], "succeeded")

        hook = delivered(job["id"])
        self.assertEqual(hook["path"], "/hooks/job")
        event = shotsmith.verify_webhook(hook["body"], hook["headers"], ENV["WEBHOOK_SECRET"])
        self.assertEqual(event["type"], "screenshot.succeeded")
        self.assertEqual(event["data"]["id"], job["id"])
        self.assertEqual(Shotsmith.verify_webhook(hook["body"], hook["headers"], ENV["WEBHOOK_SECRET"]), event)
        # Tampered: a changed body, or the headers of another message.
        tampered = hook["body"].replace(b"succeeded", b"failed")
        with self.assertRaisesRegex(WebhookVerificationError, "no signature matches"):
            shotsmith.verify_webhook(tampered, hook["headers"], ENV["WEBHOOK_SECRET"])
        other_id = {k.lower(): v for k, v in hook["headers"].items()}
        other_id["webhook-id"] = "msg_forged"
        with self.assertRaises(WebhookVerificationError):
            shotsmith.verify_webhook(hook["body"], other_id, ENV["WEBHOOK_SECRET"])

    def test_records_list_read_delete(self) -> None:
        api = pro()
        made = api.capture(f"{ENV['SITE']}/?python-record", **SMALL)
        record_id = made["id"]
        self.assertIsInstance(record_id, int)
        self.assertEqual(api.screenshot(record_id)["status"], "succeeded")
        page = api.list(limit=100)
        self.assertIn(record_id, [s["id"] for s in page["data"]])
        self.assertIn(record_id, [s["id"] for s in api.iter_screenshots(page_size=1)])
        api.delete(record_id)
        with self.assertRaises(NotFoundError) as gone:
            api.screenshot(record_id)
        self.assertEqual((gone.exception.status, gone.exception.code), (404, "not_found"))

    def test_batch(self) -> None:
        api = pro()
        hook_url = f"http://127.0.0.1:{ENV['HOOK_PORT']}/hooks/batch"
        queued = api.batch(
            [
                {"url": f"{ENV['SITE']}/?python-batch1", **SMALL},
                {"url": f"{ENV['SITE']}/?python-batch2", **SMALL},
            ],
            webhook_url=hook_url,
        )
        self.assertRegex(queued["batch_id"], r"^bat_\w{24}$")
        self.assertEqual([j["status"] for j in queued["jobs"]], ["queued", "queued"])
        done = api.wait_batch(queued["batch_id"], interval=0.2, timeout=120)
        self.assertEqual((done["status"], done["total"], done["succeeded"], done["failed"]), ("completed", 2, 2, 0))
        self.assertEqual([j["id"] for j in done["jobs"]], [j["id"] for j in queued["jobs"]])
        self.assertEqual(api.get_batch(queued["batch_id"])["batch_id"], queued["batch_id"])
        hook = delivered(queued["batch_id"], '"type":"batch.completed"')
        event = shotsmith.verify_webhook(hook["body"], hook["headers"], ENV["WEBHOOK_SECRET"])
        self.assertEqual(event["type"], "batch.completed")
        self.assertEqual(event["data"], {"batch_id": queued["batch_id"], "succeeded": 2, "failed": 0})

        with self.assertRaises(ValidationError) as bad:
            api.batch([{"url": f"{ENV['SITE']}/"}, {"url": f"{ENV['SITE']}/", "quality": 500}])
        self.assertEqual(bad.exception.message, "requests[1].quality must be <= 100")
        with self.assertRaises(PlanRestrictionError):
            free().batch([{"url": f"{ENV['SITE']}/"}])

    def test_monitors(self) -> None:
        api = pro()
        monitor = api.monitors.create(
            f"{ENV['SITE']}/?python-monitor",
            every="1h",
            name="python",
            options=SMALL,
            threshold=0.01,
            ignore_selectors=["#clock"],
        )
        monitor_id = monitor["id"]
        self.assertRegex(monitor_id, r"^mon_")
        self.assertEqual((monitor["status"], monitor["every"], monitor["name"]), ("active", "1h", "python"))
        self.assertIn(monitor_id, [m["id"] for m in api.monitors.list(limit=50)["data"]])
        self.assertIn(monitor_id, [m["id"] for m in api.monitors.iter(page_size=1)])
        self.assertEqual(api.monitors.get(monitor_id)["threshold"], 0.01)

        started = api.monitors.run(monitor_id)
        self.assertRegex(started["id"], r"^run_")
        run: dict[str, Any] = {}
        end = time.monotonic() + 120
        while time.monotonic() < end:
            runs = api.monitors.runs(monitor_id, limit=10)["data"]
            run = next((r for r in runs if r["id"] == started["id"]), {})
            if run.get("status") in ("succeeded", "failed"):
                break
            time.sleep(0.3)
        self.assertEqual(run.get("status"), "succeeded", run)
        self.assertFalse(run["changed"], "the first run has no baseline")
        self.assertRegex(run["image_url"], r"/images/")

        paused = api.monitors.update(monitor_id, status="paused", every="1d")
        self.assertEqual((paused["status"], paused["every"]), ("paused", "1d"))
        self.assertEqual(api.monitors.update(monitor_id, status="active")["status"], "active")
        api.monitors.delete(monitor_id)
        with self.assertRaises(NotFoundError):
            api.monitors.get(monitor_id)
        with self.assertRaises(PlanRestrictionError):
            free().monitors.create(f"{ENV['SITE']}/", every="1h")


if __name__ == "__main__":
    unittest.main()
