"""The CLI's start-up: imports with the garbage collector paused, once (issue 16 item 4)."""

from __future__ import annotations

import subprocess
import sys

from toolweave import cli


def test_start_up_imports_the_commands_modules_and_leaves_the_collector_on() -> None:
    probe = (
        "import gc, sys\n"
        "from toolweave import cli\n"
        "cli._start_up('tools')\n"
        "assert 'toolweave.cli.session' not in sys.modules  # only ask, chat and explain\n"
        "cli._start_up('ask')\n"
        "assert gc.isenabled()\n"
        "assert 'toolweave.cli.session' in sys.modules and 'langgraph.graph' in sys.modules\n"
        "assert gc.get_freeze_count() > 0\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "ok"


def test_start_up_runs_once_and_keeps_an_applications_disabled_collector() -> None:
    import gc

    cli._start_up("ask")  # already imported in this process: nothing to do
    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        cli._start_up("chat")
        assert not gc.isenabled()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.enable()
