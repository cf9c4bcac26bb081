"""The overall deadline of one graph run (X5), seen by every model call inside it.

A run is one ``invoke``/``stream`` (or their async twins) of the compiled graph,
recognised by LangGraph's run-scoped ``Runtime.control`` object. The graph calls
:func:`enforce` before each node's model calls (``graph.context.assistant_for``);
the first call of a run starts its clock. Inside the run, the model-call layer
asks :func:`remaining` to cut retry waits (and, on async paths, the request
itself) to the time left, and :func:`check` before each attempt. Outside a graph
run there is no deadline.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from langgraph.runtime import get_runtime

from toolweave.llm.errors import RunDeadlineError

MAX_RUNS = 4096
"""Runs whose clocks are remembered at once (the oldest are forgotten first)."""

_lock = threading.Lock()
_runs: OrderedDict[int, tuple[object, float, float]] = OrderedDict()
"""``id(control)`` → (control kept alive so the id is not reused, deadline, seconds)."""


def _run_control() -> object | None:
    try:
        runtime = get_runtime()
    except RuntimeError:
        return None
    return getattr(runtime, "control", None) if runtime is not None else None


def enforce(seconds: float | None) -> None:
    """Start the current run's clock on first use; raise once ``seconds`` have passed.

    Raises:
        RunDeadlineError: the run's deadline has passed.
    """
    if seconds is None:
        return
    control = _run_control()
    if control is None:
        return
    now = time.monotonic()
    with _lock:
        entry = _runs.get(id(control))
        if entry is None or entry[0] is not control:
            entry = (control, now + seconds, seconds)
            _runs[id(control)] = entry
            while len(_runs) > MAX_RUNS:
                _runs.popitem(last=False)
    check("the next step")


def _current() -> tuple[float, float] | None:
    control = _run_control()
    if control is None:
        return None
    entry = _runs.get(id(control))
    if entry is None or entry[0] is not control:
        return None
    return entry[1], entry[2]


def remaining() -> float | None:
    """Seconds left before the current run's deadline; ``None`` when it has none."""
    current = _current()
    return None if current is None else current[0] - time.monotonic()


def check(what: str) -> None:
    """Raise :class:`RunDeadlineError` when the current run's deadline has passed."""
    current = _current()
    if current is not None and time.monotonic() >= current[0]:
        raise RunDeadlineError(
            f"run deadline of {current[1]:g} s (Limits.run_deadline_s) passed before "
            f"{what}; the run stops here and the thread keeps its last completed step"
        )


def bound(timeout: float | None) -> float | None:
    """``timeout`` cut to the time left in the current run (``None``: no bound at all)."""
    left = remaining()
    if left is None:
        return timeout
    left = max(left, 0.0)
    return left if timeout is None else min(timeout, left)


__all__ = ["MAX_RUNS", "bound", "check", "enforce", "remaining"]
