"""The helpdesk domain as a plugin: what its entry point names (W5).

``examples/pomoc/pyproject.toml`` declares it::

    [project.entry-points."toolweave.plugins"]
    pomoc = "toolweave_pomoc.plugin:plugin"
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolweave import ChatbotTool, Domain, Plugin

GOLDEN_FILE = Path(__file__).with_name("golden.jsonl")
"""The domain's golden file (odd lines dev, even lines held out), ``toolweave eval``'s default."""


def load() -> tuple[Domain, list[ChatbotTool[Any]]]:
    """The ``pomoc`` domain and its tools, built only when the domain is asked for."""
    from toolweave_pomoc import pomoc_domain_and_tools

    return pomoc_domain_and_tools()


def plugin() -> Plugin:
    """The plugin descriptor: the ``pomoc`` domain, its AI tool and its golden file."""
    from toolweave_pomoc.ai_tools import pomoc_ai_tools

    return Plugin(
        name="pomoc",
        domains={"pomoc": load},
        ai_tools=tuple(pomoc_ai_tools()),
        golden_files={"pomoc": GOLDEN_FILE},
    )


__all__ = ["GOLDEN_FILE", "load", "plugin"]
