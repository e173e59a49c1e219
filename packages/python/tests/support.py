"""What the tests share: the package on sys.path (its source, unless PYTHONPATH names another
copy), the service's coordinates from SHOTSMITH_TEST_* (set by test/client/python.test.ts),
and small loopback HTTP servers."""

from __future__ import annotations

import json
import os
import sys
import threading
import unittest
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
SRC = PACKAGE_ROOT / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))


def service_env(*names: str) -> dict[str, str]:
    """The named SHOTSMITH_TEST_* variables, or a skip (a failure under SHOTSMITH_TEST_REQUIRE)."""
    values = {name: os.environ.get(f"SHOTSMITH_TEST_{name}", "") for name in names}
    missing = [name for name, value in values.items() if not value]
    if missing:
        message = "no service: SHOTSMITH_TEST_" + ", SHOTSMITH_TEST_".join(missing) + " unset"
        if os.environ.get("SHOTSMITH_TEST_REQUIRE"):
            raise AssertionError(message + " (run through npm test, test/client/python.test.ts)")
        raise unittest.SkipTest(message)
    return values


def vectors() -> dict[str, Any]:
    raw = os.environ.get("SHOTSMITH_TEST_VECTORS")
    if not raw:
        if os.environ.get("SHOTSMITH_TEST_REQUIRE"):
            raise AssertionError("SHOTSMITH_TEST_VECTORS unset")
        raise unittest.SkipTest("no server-made vectors (SHOTSMITH_TEST_VECTORS)")
    parsed: dict[str, Any] = json.loads(raw)
    return parsed


Handler = Callable[[BaseHTTPRequestHandler, bytes], tuple[int, dict[str, str], bytes]]


class LocalServer:
    """An HTTP server on 127.0.0.1 that records every request and answers with `handler`."""

    def __init__(self, handler: Handler, port: int = 0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.arrived = threading.Condition()
        outer = self

        class Answer(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with outer.arrived:
                    outer.requests.append(
                        {"method": self.command, "path": self.path, "headers": self.headers, "body": body}
                    )
                    outer.arrived.notify_all()
                status, headers, payload = handler(self, body)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = do_PATCH = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Answer)
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float) -> None:
        with self.arrived:
            if not self.arrived.wait_for(lambda: predicate(self.requests), timeout=timeout):
                raise AssertionError(f"waited {timeout} s; got {len(self.requests)} requests")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def json_answer(status: int, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json", **(headers or {})}, json.dumps(body).encode()
