"""The package as it ships: pyproject.toml builds a wheel offline (no build isolation, no
index) with setuptools' backend, the wheel holds the package and its py.typed marker, and the
package imports from the wheel alone in a fresh directory with nothing else on its path."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

import support

BUILD = (
    "import sys, setuptools.build_meta as b; "
    "print(b.build_wheel(sys.argv[1]))"
)
# setuptools before 70.1 builds wheels through the `wheel` package; Debian ships both
# (python3-setuptools, python3-wheel: .ci/run installs them), a pyenv or venv may lack `wheel`.
CAN_BUILD = (
    "import setuptools, importlib.util as u; "
    "v = tuple(int(p) for p in setuptools.__version__.split('.')[:2]); "
    "raise SystemExit(0 if v >= (70, 1) or u.find_spec('wheel') else 1)"
)
DEBIAN_PYTHON = "/usr/bin/python3"


def _builder() -> str:
    """An interpreter that can build a wheel offline: this one, else Debian's."""
    for candidate in (sys.executable, DEBIAN_PYTHON):
        if not os.path.exists(candidate):
            continue
        ok = subprocess.run([candidate, "-c", CAN_BUILD], capture_output=True, timeout=60)
        if ok.returncode == 0:
            return candidate
    raise AssertionError(
        f"neither {sys.executable} nor {DEBIAN_PYTHON} has setuptools with wheel support "
        "(apt-get install python3-setuptools python3-wheel)"
    )


class Wheel(unittest.TestCase):
    def test_builds_offline_and_imports_from_the_wheel(self) -> None:
        with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as fresh:
            # A copy of the sources, so the build's egg-info and build/ stay out of the tree.
            work = Path(out) / "src-copy"
            subprocess.run(
                ["cp", "-r", str(support.PACKAGE_ROOT), str(work)], check=True, timeout=60
            )
            dist = Path(out) / "dist"
            dist.mkdir()
            env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
            env["PIP_NO_INDEX"] = "1"
            built = subprocess.run(
                [_builder(), "-c", BUILD, str(dist)],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            self.assertEqual(built.returncode, 0, built.stdout + built.stderr)
            wheel = dist / built.stdout.strip().splitlines()[-1]
            self.assertRegex(wheel.name, r"^shotsmith-0\.1\.0-py3-none-any\.whl$")
            with zipfile.ZipFile(wheel) as z:
                names = set(z.namelist())
                z.extractall(fresh)
            for name in ("shotsmith/__init__.py", "shotsmith/py.typed", "shotsmith/client.py"):
                self.assertIn(name, names)
            self.assertFalse(any(n.startswith("tests/") for n in names), sorted(names))
            # The python3 on PATH, isolated (-I: no PYTHONPATH, no user site, no cwd on the
            # path), importing from the unpacked wheel only.
            probe = subprocess.run(
                [
                    sys.executable,
                    "-I",
                    "-c",
                    "import sys; sys.path.insert(0, sys.argv[1]); import shotsmith; "
                    "from shotsmith import Shotsmith, verify_webhook, render_link; "
                    "print(shotsmith.__file__); print(shotsmith.__version__)",
                    fresh,
                ],
                cwd=fresh,
                capture_output=True,
                text=True,
                timeout=60,
            )
            self.assertEqual(probe.returncode, 0, probe.stderr)
            where, version = probe.stdout.split()
            self.assertTrue(where.startswith(os.path.realpath(fresh)) or where.startswith(fresh), where)
            self.assertEqual(version, "0.1.0")


if __name__ == "__main__":
    unittest.main()
