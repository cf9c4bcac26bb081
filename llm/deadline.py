"""The overall deadline of one graph run (X5), seen by every model call inside it."""

from __future__ import annotations

from toolweave.llm.errors import RunDeadlineError
from toolweave.state.run_scope import run_deadline


def remaining() -> float | None:
    """Seconds left before the current run's deadline; ``None`` when it has none."""
    deadline = run_deadline()
    return None if deadline is None else deadline.remaining()


def check(what: str) -> None:
    """Raise :class:`RunDeadlineError` when the current run's deadline has passed."""
    deadline = run_deadline()
    if deadline is not None and deadline.remaining() <= 0:
        raise RunDeadlineError(
            f"run deadline of {deadline.seconds:g} s (Limits.run_deadline_s) passed before "
            f"{what}; the run stops here and the thread keeps its last completed step"
        )


def bound(timeout: float | None) -> float | None:
    """``timeout`` cut to the time left in the current run (``None``: no bound at all)."""
    left = remaining()
    if left is None:
        return timeout
    left = max(left, 0.0)
    return left if timeout is None else min(timeout, left)
