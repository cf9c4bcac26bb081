"""The CLI tests' one helper: ``toolweave`` run in-process, its exit code and output."""

from __future__ import annotations

import pytest

from toolweave import cli

OFFLINE_UNSET = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "TOOLWEAVE_DATABASE_URL")
"""Variables the CLI tests clear: no model key (the offline model answers), no database."""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``toolweave *argv``: its exit code, stdout and stderr."""
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
