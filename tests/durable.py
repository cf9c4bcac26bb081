"""Helpers for the durable-thread tests: the Postgres URL rule and worker processes."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

TEST_DATABASE_URL_ENV = "TOOLWEAVE_TEST_DATABASE_URL"
WORKER = Path(__file__).with_name("crash_worker.py")
REPLY_TIMEOUT_S = 60.0
MISSING_IN_CI = (
    f"{TEST_DATABASE_URL_ENV} is not set but CI is: the Postgres tests must run in CI, not "
    "skip (.ci/run starts a server with scripts/postgres.sh)"
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def postgres_url() -> str:
    """The test database URL; skips locally without one, fails in CI (the tests must run)."""
    url = os.environ.get(TEST_DATABASE_URL_ENV, "").strip()
    if url:
        return url
    if in_ci():
        pytest.fail(MISSING_IN_CI)
    pytest.skip(f'{TEST_DATABASE_URL_ENV} is not set (eval "$(bash scripts/postgres.sh start)")')


def target_for(backend: str, tmp_path: Path) -> str:
    """A checkpointer target: a SQLite file in ``tmp_path`` or the test Postgres."""
    if backend == "sqlite":
        return str(tmp_path / "threads.db")
    return postgres_url()


def thread_id(prefix: str) -> str:
    """A thread id no other test (or earlier run on the same database) uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class Worker:
    """A ``crash_worker.py`` process: send JSON commands, read JSON answers, SIGKILL it."""

    def __init__(
        self, target: str, calls_file: Path, *, script: Path = WORKER, args: tuple[str, ...] = ()
    ) -> None:
        env = {k: v for k, v in os.environ.items() if k != "TOOLWEAVE_DATABASE_URL"}
        self.proc = subprocess.Popen(
            [sys.executable, str(script), target, str(calls_file), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.pid = self.proc.pid
        ready = self.read()
        assert ready == {"ready": self.pid}, ready

    def send(self, op: str, thread: str, text: str = "") -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, "thread": thread, "text": text}) + "\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ)
            if not selector.select(REPLY_TIMEOUT_S):
                self.kill()
                raise AssertionError(f"worker {self.pid} did not answer in {REPLY_TIMEOUT_S}s")
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"worker {self.pid} died: {self._stderr()}")
        return json.loads(line)  # type: ignore[no-any-return]

    def ask(self, op: str, thread: str, text: str = "") -> dict[str, Any]:
        self.send(op, thread, text)
        return self.read()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> int:
        """SIGKILL: no cleanup, no atexit, no flushing, no closing of connections.

        Returns the exit status (``-SIGKILL`` when the worker was alive).
        """
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
        return self.proc.wait(timeout=30)

    def close(self) -> None:
        """Close stdin (the worker exits) and wait."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def _stderr(self) -> str:
        self.proc.wait(timeout=30)
        return self.proc.stderr.read() if self.proc.stderr is not None else ""


def read_calls(path: Path, thread: str) -> list[tuple[int, str]]:
    """The ``(pid, call)`` lines the workers recorded for ``thread``."""
    if not path.exists():
        return []
    rows = [line.split(" ", 2) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(int(pid), call) for pid, on, call in rows if on == thread]
