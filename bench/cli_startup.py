"""``toolweave ask``'s start-up against ``import langgraph.graph`` (issue 16 item 4).

Each command runs as its own process, in turn (A B C A B C ...), after one warm-up
round that also writes the bytecode caches (``PYTHONDONTWRITEBYTECODE`` is dropped
for the children: an installed package has its ``.pyc`` files, a bare checkout
would otherwise compile every module on every start). A process's CPU time (user +
system, from ``getrusage``) is the measure: it does not move with the machine's
load as much as wall time does. The table gives the median and the minimum.

The ratio is ``toolweave ask "<question>"`` (the offline model, in memory, a fresh
data directory: the whole command, imports and answer) over ``import
langgraph.graph``; the goal is at most 1.1. A row imports exactly the modules that
``ask`` imported (from ``python -X importtime``) without answering and without the
CLI's start-up pause of the garbage collector (``toolweave.cli._start_up``): what
``ask`` would cost without that pause. Then ``ask`` run after ``import langgraph.graph`` under ``-X
importtime`` (the least of three runs per module) names what it loads beyond
LangGraph, grouped by package: the gap's cause when the goal is missed.

Run: ``python bench/cli_startup.py [--runs 9] [--top 12]``
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping

QUESTION = "Hol lehet parkolni?"
TARGET_RATIO = 1.1
HELP_TARGET_S = 0.5
BASELINE = "import langgraph.graph"
DOMAIN = "korhaz"
"""Named, since with several domains installed `ask` picks none by itself (N2)."""
ASK = f"toolweave ask --domain {DOMAIN} {QUESTION!r}"
ASK_IMPORTS = "ask's imports alone, collector on"


def _commands(ask_modules: list[str]) -> dict[str, list[str]]:
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        BASELINE: [py, "-c", "import langgraph.graph"],
        "toolweave --help": [py, "-m", "toolweave", "--help"],
        ASK: [py, "-m", "toolweave", "ask", "--domain", DOMAIN, QUESTION],
    }
    if ask_modules:  # every module ask imported, in its order: ask without its run
        loop = (
            "import importlib\n"
            f"for m in {ask_modules!r}:\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except ImportError:\n        pass\n"  # importtime lists tried imports too
        )
        commands[ASK_IMPORTS] = [py, "-c", loop]
    return commands


def _env(data_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("OPENAI_API_KEY", None)  # the offline model: no network, no key
    env["TOOLWEAVE_DATA_DIR"] = data_dir
    return env


def _run(argv: list[str], env: Mapping[str, str]) -> tuple[float, float]:
    """One process: (CPU seconds, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _import_times(argv: list[str], env: Mapping[str, str], repeat: int = 3) -> dict[str, int]:
    """Module → self import time in µs, from ``python -X importtime`` (the least of runs)."""
    times: dict[str, int] = {}
    for _ in range(repeat):
        done = subprocess.run(
            [argv[0], "-X", "importtime", *argv[1:]], capture_output=True, text=True, env=env
        )
        for line in done.stderr.splitlines():
            match = _LINE.match(line)
            if match:
                times[match[4]] = min(times.get(match[4], 10**12), int(match[1]))
    return times


def _group(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "toolweave" and len(parts) > 1:
        return ".".join(parts[:3] if parts[1] in ("domains", "tools") else parts[:2])
    return parts[0]


def _beyond(ask: Mapping[str, int], baseline: Mapping[str, int]) -> list[tuple[str, int, int]]:
    """(group, self µs, modules) of what ``ask`` imports and the baseline does not."""
    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for module, micros in ask.items():
        if module not in baseline:
            groups[_group(module)][0] += micros
            groups[_group(module)][1] += 1
    return sorted(((g, us, n) for g, (us, n) in groups.items()), key=lambda row: -row[1])


def main() -> None:
    """Print the start-up table, the ratio and what ``ask`` imports beyond LangGraph."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolweave-bench-") as data_dir:
        env = _env(data_dir)
        probe = _commands([])
        _run(probe[ASK], env)  # writes the bytecode caches
        ask_modules = [m for m in _import_times(probe[ASK], env) if m != "__main__"]
        commands = _commands(ask_modules)
        base_times = _import_times(probe[BASELINE], env)
        # the same ask with LangGraph imported first: each module is charged only what it
        # adds (the first pydantic model built pays pydantic's set-up, whoever builds it)
        ask_after_langgraph = [
            sys.executable,
            "-c",
            "import sys, runpy, langgraph.graph\n"
            f"sys.argv = ['toolweave', 'ask', {QUESTION!r}]\n"
            "runpy.run_module('toolweave', run_name='__main__')\n",
        ]
        ask_times = _import_times(ask_after_langgraph, env)
        for argv in commands.values():
            _run(argv, env)
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        wall: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                c, w = _run(argv, env)
                cpu[name].append(c)
                wall[name].append(w)
    base = statistics.median(cpu[BASELINE])
    print(f"| command | median CPU s | min CPU s | median wall s | × `{BASELINE}` |")
    print("|---|---:|---:|---:|---:|")
    for name in commands:
        median = statistics.median(cpu[name])
        print(
            f"| `{name}` | {median:.3f} | {min(cpu[name]):.3f} | "
            f"{statistics.median(wall[name]):.3f} | {median / base:.2f} |"
        )
    ratio = statistics.median(cpu[ASK]) / base
    help_wall = statistics.median(wall["toolweave --help"])
    print()
    print(
        f"toolweave --help: {help_wall:.3f} s wall "
        f"({'under' if help_wall < HELP_TARGET_S else 'over'} the {HELP_TARGET_S} s target)"
    )
    verdict = "target met" if ratio <= TARGET_RATIO else f"gap {ratio - TARGET_RATIO:+.2f}"
    print(f"ask / {BASELINE} (CPU, median): {ratio:.2f} (target ≤ {TARGET_RATIO}: {verdict})")
    beyond = _beyond(ask_times, base_times)
    total = sum(us for _, us, _ in beyond)
    print(f"\n`ask` imports {sum(n for *_, n in beyond)} modules beyond LangGraph, ")
    print(f"{total / 1000:.0f} ms of self import time; the largest groups:\n")
    print("| imported by ask, not by LangGraph | modules | self import ms |")
    print("|---|---:|---:|")
    for group, micros, count in beyond[: args.top]:
        print(f"| `{group}` | {count} | {micros / 1000:.1f} |")


if __name__ == "__main__":
    main()
