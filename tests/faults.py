"""Fault injection for tests of served apps: small disks, private servers, hangs.

Everything here is private to the test that uses it: a tmpfs mounted in the
test's folder, a Redis or PostgreSQL server of its own on a free port (the
shared ones are never touched), and a listener that accepts connections and
never answers. Each one skips the test, saying why, where the machine cannot
provide it (not root, no `mount`, no `redis-server` or `initdb`).

- `small_disk(folder, size_kib)`: a tmpfs of that size; `fill(folder)` fills
  it until the disk is full and returns the filler to delete.
- `PrivateRedis`: `redis-server` with no persistence; `freeze()`/`thaw()`
  (SIGSTOP/SIGCONT: a server that hangs), `stop()`/`start()` (one that is gone).
- `PrivatePostgres`: an `initdb` cluster run as the `postgres` user;
  `freeze()`/`thaw()` stop every process of the cluster, `stop()`/`start()`.
- `silent_listener()`: a port whose connections are accepted by the kernel and
  never answered, the way a frozen server looks from outside.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path

import pytest


def free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {seconds:g} s")
        time.sleep(0.05)


# --- disks ---------------------------------------------------------------------


@contextmanager
def small_disk(folder: Path, size_kib: int, *, read_only: bool = False):
    """Mount a tmpfs of `size_kib` KiB on `folder` (made if missing); unmount after."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small disk needs root and mount(8)")
    folder.mkdir(parents=True, exist_ok=True)
    options = f"size={size_kib}k,mode=0755" + (",ro" if read_only else "")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        # Lazily: a server that still holds a file open must not fail the test.
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Write a file in `folder` until its disk is full; return it (delete to free)."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        # Ever smaller writes, so the last partial blocks are taken too.
        for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9):
            block = b"\0" * size
            try:
                while os.write(fd, block):
                    pass
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    finally:
        os.close(fd)
    return filler


# --- servers -------------------------------------------------------------------


class PrivateRedis:
    """A redis-server of this test only, on a free port, keeping nothing on disk."""

    def __init__(self, folder: Path):
        if not shutil.which("redis-server"):
            pytest.skip("redis-server is not installed")
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self.answers, 10, "redis-server answering")

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as c:
                c.sendall(b"PING\r\n")
                return c.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.thaw()
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def freeze(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)


@contextmanager
def private_redis(folder: Path) -> Iterator[PrivateRedis]:
    redis = PrivateRedis(folder)
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


class PrivatePostgres:
    """A PostgreSQL cluster of this test only, run as the `postgres` user."""

    def __init__(self, folder: Path):
        self.initdb = shutil.which("initdb")
        self.pg_ctl = shutil.which("pg_ctl")
        if not (self.initdb and self.pg_ctl and shutil.which("runuser")):
            pytest.skip("initdb, pg_ctl or runuser is not installed")
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("there is no postgres user to run a private cluster")
        if os.geteuid() != 0:
            pytest.skip("a private cluster is started as the postgres user (root)")
        self.folder = folder
        self.data = folder / "data"
        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self, *command: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *command],
            check=True,
            capture_output=True,
        )

    def init(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        shutil.chown(self.folder, "postgres")
        self._as_postgres(
            self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres"
        )

    def start(self) -> None:
        self._as_postgres(
            self.pg_ctl,
            "-D",
            str(self.data),
            "-l",
            str(self.folder / "server.log"),
            "-w",
            "-o",
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
            "-c fsync=off",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self.thaw()
        self._as_postgres(self.pg_ctl, "-D", str(self.data), "-m", mode, "-w", "stop")

    def _pids(self) -> list[int]:
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(postmaster)],
            capture_output=True,
            text=True,
        ).stdout.split()
        return [postmaster, *map(int, children)]

    def freeze(self) -> None:
        for pid in self._pids():
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        if (self.data / "postmaster.pid").exists():
            for pid in self._pids():
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    # A folder of its own in the system's temporary folder: the postgres user
    # must reach it, and pytest's folders are the test runner's only (0700).
    folder = Path(tempfile.mkdtemp(prefix="quizsvc-pg-"))
    try:
        cluster = PrivatePostgres(folder)
        cluster.init()
        cluster.start()
        try:
            yield cluster
        finally:
            with suppress(subprocess.CalledProcessError):
                cluster.stop("immediate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def silent_listener() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with closing(socket.socket()) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield listener.getsockname()[1]
