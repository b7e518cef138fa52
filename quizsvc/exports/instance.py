"""The IRI that names this quizsvc in xAPI: the same for every host and edge.

xAPI identifies statements, learners (an account on a home page) and
activities by IRIs. Built from the address a request came through, they
changed with the host name (127.0.0.1, localhost, the public name) and between
the API and the command line, so one LRS stored every answer again under
another learner. The IRI is instead, in order: `INSTANCE_IRI` in the
configuration (QUIZSVC_INSTANCE_IRI), else `BASE_URL` (which named the ids
before, so a deployment that set it keeps them), else one made at the first
export and kept in the instance folder (`instance_iri`), an address under the
reserved `.invalid` domain that names this instance and no server.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

IRI_FILE = "instance_iri"


def _checked(iri: str, origin: str) -> str:
    """Return an IRI with one trailing slash; refuse one that is not absolute."""
    iri = iri.strip()
    parts = urlsplit(iri)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"{origin}: {iri!r} is not an absolute http(s) address, e.g. "
            "https://quiz.example.edu/"
        )
    return iri.rstrip("/") + "/"


def instance_iri(
    instance_path: str | Path,
    configured: str | None = None,
    base_url: str | None = None,
) -> str:
    """Return this instance's IRI: configured, else BASE_URL, else the stored one.

    The stored one is made on first use, in a way two workers racing each
    other agree on (the file is created once; the loser reads it).
    """
    if configured:
        return _checked(configured, "INSTANCE_IRI")
    if base_url:
        return _checked(base_url, "BASE_URL")
    path = Path(instance_path) / IRI_FILE
    try:
        return _checked(path.read_text("utf-8"), str(path))
    except FileNotFoundError:
        pass
    made = f"https://quizsvc-{secrets.token_hex(8)}.invalid/"
    # Written whole beside it, then linked into place: a worker racing this
    # one finds the file complete, or not at all.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{IRI_FILE}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as target:
            target.write(made + "\n")
        os.chmod(temporary, 0o644)
        try:
            os.link(temporary, path)
        except FileExistsError:
            return _checked(path.read_text("utf-8"), str(path))
    finally:
        os.unlink(temporary)
    return made
