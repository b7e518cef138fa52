#!/usr/bin/env python3
"""Set up a private virtual environment, then run the service or the tests.

    python3 scripts/dev.py run [serve options]   # e.g. --port 8080
    python3 scripts/dev.py test [pytest options]   # ruff, lint-imports, pytest

Only the Python standard library is used here, so a machine with nothing but
Python >= 3.11 can run it; nothing is installed outside ./.venv.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("QUIZSVC_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".quizsvc-installed"


def _say(message: str) -> None:
    print(f"[dev] {message}", flush=True)


def _requirements_digest() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_environment() -> Path:
    """Create ./.venv and install quizsvc with its test extra when out of date."""
    if sys.version_info < (3, 11):  # noqa: UP036 (runs on any Python)
        sys.exit(f"quizsvc needs Python >= 3.11; this is {sys.version.split()[0]}")
    python = BIN / "python"
    if not python.exists():
        _say(f"creating a virtual environment in {VENV}")
        try:
            venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
        except (subprocess.CalledProcessError, OSError) as exc:
            sys.exit(
                f"could not create a virtual environment ({exc}).\n"
                "On Debian/Ubuntu install the venv module first: "
                "sudo apt-get install python3-venv"
            )
    digest = _requirements_digest()
    if not STAMP.exists() or STAMP.read_text() != digest:
        _say("installing quizsvc and its dependencies into .venv (first run only)")
        pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
        subprocess.run([*pip, "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([*pip, "install", "-q", "-e", f"{ROOT}[test]"], check=True)
        STAMP.write_text(digest)
    return python


def main(argv: list[str]) -> int:
    """Dispatch `run` or `test`."""
    if not argv or argv[0] not in {"run", "test"}:
        print(__doc__.strip())
        return 2
    command, rest = argv[0], argv[1:]
    python = ensure_environment()
    os.chdir(ROOT)
    if command == "run":
        _say("preparing the database and starting the service")
        service = subprocess.Popen([str(BIN / "quizsvc"), "serve", *rest])
        try:
            return service.wait()
        except KeyboardInterrupt:
            # Ctrl+C reached the service too and it is stopping: let it finish
            # (killing it would leave its workers behind).
            return service.wait()
    failed = _static_checks()
    return subprocess.call([str(python), "-m", "pytest", *rest]) or failed


# Run before the tests; a failure here fails the command after the tests ran.
STATIC_CHECKS = (
    ("ruff", "check", "."),
    ("ruff", "format", "--check", "."),
    ("lint-imports",),
)


def _static_checks() -> int:
    """Lint, check the formatting and the layers' import contracts; 1 if any fail."""
    failed = 0
    for command in STATIC_CHECKS:
        _say(" ".join(command))
        if subprocess.call([str(BIN / command[0]), *command[1:]]) != 0:
            _say(f"{command[0]} failed (see above); the tests run anyway")
            failed = 1
    return failed


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
    except subprocess.CalledProcessError as exc:
        sys.exit(f"[dev] a set-up step failed ({exc}); see the messages above")
