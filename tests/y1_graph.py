"""A test-only graph for the multi-process deployment's crash test (Y1), served by GraphHarbor.

The tree of ``side_effect_worker.py`` (two callback requests, one of which asks which
department, and a parking question) with the bundled key-deduping callback tool over a
SQLite ledger every worker process shares. Configured by the environment the deployment
inherits:

- ``TOOLWEAVE_Y1_LEDGER``: the ledger file;
- ``TOOLWEAVE_Y1_PROBE``: a file that gets ``"attempt <key> <pid>"`` before each insert
  and ``"effect <key> <pid>"`` after each commit;
- ``TOOLWEAVE_Y1_PAUSE``: a flag file; the first process to reach an effect while it
  exists removes it, appends ``"paused <key> <pid>"`` and sleeps, so the test SIGKILLs
  that worker mid-run, after a side effect and before the step's writes are saved.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from side_effect_worker import Parking, Planner

from toolweave import ToolweaveGraph, build_graph
from toolweave.testing import FunctionAssistant
from toolweave_korhaz import CallbackLedger, CallbackRecord, CallbackRequestTool

PAUSE_S = 120.0
"""How long the paused worker sleeps; the test kills it long before."""


class PausingLedger(CallbackLedger):
    """A shared callback ledger that reports each attempt and pauses once on request."""

    def __init__(self, path: str, probe: str | None, flag: str | None) -> None:
        super().__init__(path)
        self.probe = Path(probe) if probe else None
        self.flag = Path(flag) if flag else None

    def _note(self, line: str) -> None:
        if self.probe is None:
            return
        with self.probe.open("a", encoding="utf-8") as out:
            out.write(f"{line} {os.getpid()}\n")

    def record(self, idempotency_key: str, department: str, phone: str) -> CallbackRecord:
        self._note(f"attempt {idempotency_key}")
        stored = super().record(idempotency_key, department, phone)
        self._note(f"effect {idempotency_key}")
        if self.flag is None:
            return stored
        try:
            self.flag.unlink()
        except FileNotFoundError:
            return stored
        self._note(f"paused {idempotency_key}")
        time.sleep(PAUSE_S)  # SIGKILLed here
        return stored


graph: ToolweaveGraph = build_graph(
    "korhaz",
    [
        Planner(),
        CallbackRequestTool(
            PausingLedger(
                os.environ.get("TOOLWEAVE_Y1_LEDGER", ":memory:"),
                os.environ.get("TOOLWEAVE_Y1_PROBE"),
                os.environ.get("TOOLWEAVE_Y1_PAUSE"),
            )
        ),
        Parking(),
    ],
    assistant=FunctionAssistant(),
    name="y1_callbacks",
)
"""The graph ``y1_callbacks`` of the crash test's deployment (no checkpointer: the server's)."""
