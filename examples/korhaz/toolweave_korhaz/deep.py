"""Deep fallback of the korhaz domain (SPEC §13): its deep-search coordinator and search tools.

The gatekeeper judges the retrieved context after the root task closes (D1);
when it falls short, :class:`KorhazDeepSearch` reads the pages next to the
context first (``korhaz_neighbor_search``, D6) and runs the full search
(``korhaz_context_search``, D5) only for pieces the neighbours did not answer.
"""

from __future__ import annotations

from typing import ClassVar

from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.tools.domain import DeepFallbackFactory

CONTEXT_SEARCH_TOOL_NAME = "korhaz_context_search"
"""The full search of deep fallback."""
NEIGHBOR_SEARCH_TOOL_NAME = "korhaz_neighbor_search"
"""The neighbour-page search of deep fallback."""
NO_DEEP_SEARCH = frozenset({"smalltalk"})
"""Prompt types that get no deep search (D2)."""


class KorhazDeepSearch(DeepSearchCoordinator):
    """The domain's deep-search coordinator: neighbour pages first, then the full search."""

    name: ClassVar[str] = "korhaz_deep_search"
    domain: ClassVar[str | None] = "korhaz"
    search_tool: ClassVar[str] = CONTEXT_SEARCH_TOOL_NAME
    neighbor_search_tool: ClassVar[str | None] = NEIGHBOR_SEARCH_TOOL_NAME
    description: ClassVar[str] = (
        "Deep fallback: searches the documents for what the retrieved context lacks."
    )


def deep_fallback() -> DeepFallbackFactory:
    """D2: the coordinator for every prompt type but small talk."""
    coordinator = KorhazDeepSearch()

    def for_prompt_type(prompt_type: str | None) -> KorhazDeepSearch | None:
        return None if prompt_type in NO_DEEP_SEARCH else coordinator

    return for_prompt_type
