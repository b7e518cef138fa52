"""The tool's RSA keys: kept in the instance folder, published as a JWKS.

Each key is a PEM file `instance/lti_keys/<created>-<kid>.pem` (mode 0600),
created on first use. The newest key signs (client-credentials assertions,
deep-linking responses); every key in the folder is published at /lti/jwks,
so a platform that cached the old key set still verifies during a rotation.
Rotating: `quizsvc lti rotate-key` adds a new key that signs from then on;
after a day (platforms cache key sets for hours), `quizsvc lti retire-keys`
removes all but the newest. Keys never enter the database or the logs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pylti1p3.registration import Registration

KEY_FOLDER = "lti_keys"
KEY_BITS = 2048


@dataclass(frozen=True)
class ToolKey:
    """One of the tool's keys: its id, PEM texts, and the file it lives in."""

    kid: str
    private_pem: str
    public_pem: str
    path: Path

    def jwk(self) -> dict[str, Any]:
        """The public key as a JWK (RS256, for signatures)."""
        return dict(Registration.get_jwk(self.public_pem))

    def __repr__(self) -> str:  # the private key never reaches a log line
        return f"<ToolKey {self.kid} {self.path.name}>"


def key_folder(instance_path: str | Path) -> Path:
    """Where the instance keeps its LTI keys."""
    return Path(instance_path) / KEY_FOLDER


def _public_pem(private_pem: str) -> str:
    private = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return (
        private.public_key()
        .public_bytes(
            serialization.Encoding.PEM,
            serialization.PublicFormat.SubjectPublicKeyInfo,
        )
        .decode()
    )


def _load(path: Path) -> ToolKey:
    private_pem = path.read_text()
    public_pem = _public_pem(private_pem)
    kid = Registration.get_jwk(public_pem)["kid"]
    return ToolKey(kid, private_pem, public_pem, path)


def tool_keys(instance_path: str | Path) -> list[ToolKey]:
    """Every key in the folder, oldest first (creating the first one if none)."""
    folder = key_folder(instance_path)
    paths = sorted(folder.glob("*.pem")) if folder.is_dir() else []
    if not paths:
        return [new_key(instance_path)]
    return [_load(path) for path in paths]


def signing_key(instance_path: str | Path) -> ToolKey:
    """The newest key: the one that signs."""
    return tool_keys(instance_path)[-1]


def jwks(instance_path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """The public key set published at /lti/jwks."""
    return {"keys": [key.jwk() for key in tool_keys(instance_path)]}


def new_key(instance_path: str | Path) -> ToolKey:
    """Generate a key and store it; it signs from now on."""
    folder = key_folder(instance_path)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    private = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    kid = Registration.get_jwk(_public_pem(private_pem))["kid"]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{stamp}-{kid}.pem"
    # Written under a temporary name and renamed: a reader never sees half a key,
    # and two workers starting at once each write a whole one.
    partial = folder / f".{path.name}.{os.getpid()}.tmp"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(private_pem)
    partial.rename(path)
    return _load(path)


def retire_old_keys(instance_path: str | Path) -> list[ToolKey]:
    """Delete every key but the newest; return the ones deleted."""
    keys = tool_keys(instance_path)
    for key in keys[:-1]:
        key.path.unlink()
    return keys[:-1]
