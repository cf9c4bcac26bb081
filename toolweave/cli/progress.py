"""The command line's one progress bar (``ingest``, ``eval``), standard library only.

Not rich: installed, it makes every ``import langgraph.graph`` load its modules (about
0.1 s per ``toolweave ask``); see docs/dependencies.md.
"""

from __future__ import annotations

import time
from typing import TextIO

BAR_WIDTH = 28
REDRAW_SECONDS = 0.1


class ProgressBar:
    """A bar on a terminal (``ingesting [####....] 3/10 a.pdf``); silent when it is no TTY."""

    def __init__(self, stream: TextIO, *, label: str = "ingesting", width: int = BAR_WIDTH) -> None:
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
