"""How fast ``toolweave --help`` answers (issue 12 item 7): a table of process start-ups.

Each command is started as a process, in turn (A B C A B C ...), and its wall time
measured from outside; the table gives medians and the ratio to the anchor, a bare
``python -c pass`` measured in the same run. ``import toolweave._public`` is what
every command paid before the package's public API was loaded lazily.

Run: ``python bench/cli_startup.py [--runs 15]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS: dict[str, list[str]] = {
    "python -c pass (anchor)": [sys.executable, "-c", "pass"],
    "toolweave --help": [sys.executable, "-m", "toolweave", "--help"],
    "toolweave ask --help": [sys.executable, "-m", "toolweave", "ask", "--help"],
    "import toolweave._public (eager API)": [sys.executable, "-c", "import toolweave._public"],
}
TARGET_S = 0.5


def _wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    """Print the start-up table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    for argv in COMMANDS.values():  # warm the file cache and the bytecode
        _wall(argv)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, argv in COMMANDS.items():
            times[name].append(_wall(argv))
    anchor = statistics.median(times["python -c pass (anchor)"])
    print(f"| command | median wall s | x anchor | under {TARGET_S} s |")
    print("|---|---:|---:|:---:|")
    for name, walls in times.items():
        median = statistics.median(walls)
        ok = "yes" if median < TARGET_S else "no"
        print(f"| {name} | {median:.3f} | {median / anchor:.1f} | {ok} |")


if __name__ == "__main__":
    main()
