"""docs/python.md, run as a reader would run it: its first capture and its error handling,
against the service (`http://localhost:8080` standing for it, `sk_live_...` for a Free key,
`https://example.com` for the fixture site), so the page cannot drift from the client."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
import unittest

import support

DOC = support.PACKAGE_ROOT.parent.parent / "docs" / "python.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.S)


class PythonDoc(unittest.TestCase):
    def run_block(self, block: str, env: dict[str, str], namespace: dict[str, object]) -> str:
        code = (
            block.replace("http://localhost:8080", env["URL"])
            .replace('"sk_live_..."', repr(env["FREE_KEY"]))
            .replace("https://example.com", env["SITE"])
        )
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(DOC), "exec"), namespace)
        return out.getvalue()

    def test_first_capture_and_errors(self) -> None:
        env = support.service_env("URL", "SITE", "FREE_KEY")
        first, errors = blocks()[0], next(b for b in blocks() if "except PlanRestrictionError" in b)
        namespace: dict[str, object] = {}
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            try:
                printed = self.run_block(first, env, namespace)
                with open("example.png", "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            finally:
                os.chdir(cwd)
        self.assertIn(f"{env['URL']}/images/", printed)
        self.assertIn("'plan': 'free'", printed)
        printed = self.run_block(errors, env, namespace)
        self.assertRegex(printed, r"^400 plan_restriction format webp is not available")


if __name__ == "__main__":
    unittest.main()
