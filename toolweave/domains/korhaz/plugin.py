"""The hospital domain as a plugin: what its entry points name (W5, issue 9).

``pyproject.toml`` declares them the way a third-party package would::

    [project.entry-points."toolweave.domains"]
    korhaz = "toolweave.domains.korhaz.plugin:load"

    [project.entry-points."toolweave.plugins"]
    korhaz = "toolweave.domains.korhaz.plugin:plugin"
"""

from __future__ import annotations

from typing import Any

from toolweave.tools.base import ChatbotTool
from toolweave.tools.domain import Domain
from toolweave.tools.plugins import Plugin


def load() -> tuple[Domain, list[ChatbotTool[Any]]]:
    """The ``korhaz`` domain and its tools, its AI tools among them as chatbot tools (W6 a)."""
    from toolweave.domains.korhaz import korhaz_domain, korhaz_tools
    from toolweave.domains.korhaz.ai_tools import korhaz_ai_tools
    from toolweave.tools.ai import as_chatbot_tools

    domain = korhaz_domain()
    ai_tools = as_chatbot_tools(korhaz_ai_tools(), domain=domain.name)
    return domain, [*korhaz_tools(), *ai_tools]


def plugin() -> Plugin:
    """The plugin descriptor: it provides the ``korhaz`` domain and its AI tools."""
    from toolweave.domains.korhaz.ai_tools import korhaz_ai_tools

    return Plugin(name="korhaz", domains={"korhaz": load}, ai_tools=tuple(korhaz_ai_tools()))


__all__ = ["load", "plugin"]
