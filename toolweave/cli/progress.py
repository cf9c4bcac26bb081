"""The command line's one progress bar (``ingest``, ``eval``), standard library only.

Hand-written on purpose (see docs/dependencies.md): rich would draw it, but having
rich installed makes every ``import langgraph.graph`` load rich's console, progress,
syntax and table modules (httpx's command-line module imports them when it can),
about 0.1 s of CPU on each start of ``toolweave ask``, for a one-line bar.
"""

from __future__ import annotations

import time
from typing import TextIO

BAR_WIDTH = 28
REDRAW_SECONDS = 0.1


class ProgressBar:
    """A carriage-return progress bar on a terminal; silent when the stream is not a TTY.

    Pipes and files get nothing (the command's report says what happened), so the
    output a script reads is the same with and without a terminal.
    """

    def __init__(self, stream: TextIO, *, label: str, width: int = BAR_WIDTH) -> None:
        self.stream = stream
        self.label = label
        self.width = width
        self.enabled = bool(getattr(stream, "isatty", lambda: False)())
        self._drawn = 0.0

    def __call__(self, done: int, total: int, note: str = "") -> None:
        """Redraw the bar (at most every 0.1 s, and always at the end) with a short note."""
        now = time.monotonic()
        if not self.enabled or (done < total and now - self._drawn < REDRAW_SECONDS):
            return
        self._drawn = now
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        line = f"\r{self.label} [{bar}] {done}/{total} {note[:30]:<30}"
        self.stream.write(line + ("\n" if done >= total else ""))
        self.stream.flush()
