"""The hospital domain as a plugin: what its entry point names (W5, issue 9, issue 16).

``examples/korhaz/pyproject.toml`` declares it the way any domain package would::

    [project.entry-points."toolweave.plugins"]
    korhaz = "toolweave_korhaz.plugin:plugin"
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolweave.tools.base import ChatbotTool
from toolweave.tools.domain import Domain
from toolweave.tools.plugins import Plugin

GOLDEN_FILE = Path(__file__).with_name("golden.jsonl")
"""The domain's routing golden file, what ``toolweave eval`` runs by default."""


def load() -> tuple[Domain, list[ChatbotTool[Any]]]:
    """The ``korhaz`` domain and its tools, its AI tools among them as chatbot tools (W6 a)."""
    from toolweave import as_chatbot_tools
    from toolweave_korhaz import korhaz_domain, korhaz_tools
    from toolweave_korhaz.ai_tools import korhaz_ai_tools

    domain = korhaz_domain()
    ai_tools = as_chatbot_tools(korhaz_ai_tools(), domain=domain.name)
    return domain, [*korhaz_tools(), *ai_tools]


def plugin() -> Plugin:
    """The plugin descriptor: the ``korhaz`` domain, its AI tools and its golden file."""
    from toolweave_korhaz.ai_tools import korhaz_ai_tools

    return Plugin(
        name="korhaz",
        domains={"korhaz": load},
        ai_tools=tuple(korhaz_ai_tools()),
        golden_files={"korhaz": GOLDEN_FILE},
    )


__all__ = ["GOLDEN_FILE", "load", "plugin"]
