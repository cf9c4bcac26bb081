"""Deep-fallback example questions of the korhaz domain (SPEC §13), answered offline.

One question the first retrieval answers (the gatekeeper finds the context
sufficient), one whose answer continues on the next page of a two-page
document (the neighbour-page search finds it, the full search is skipped), and
one that needs the full search (the answer is on a page no retrieved page is
next to). ``expected_tools`` is the exact ``activated`` order (tools that returned
something: a search that found nothing counts as not activated, R1);
``tests/test_korhaz_deep.py`` runs them through the real graph.
"""

from __future__ import annotations

from typing import NamedTuple


class DeepExample(NamedTuple):
    """A question, the gatekeeper's verdict, the activated order and answer substrings."""

    question: str
    gatekeeper: str
    """``"sufficient"`` or ``"insufficient"`` (D1)."""
    expected_tools: tuple[str, ...]
    expected_substrings: tuple[str, ...]


DEEP_EXAMPLES: list[DeepExample] = [
    DeepExample(
        "What is the wifi password?",
        "sufficient",
        ("1:korhaz_search",),
        ("gyogyulas2024",),
    ),
    DeepExample(
        "Mikor vannak a kezelések a Dialízis Központban?",
        "insufficient",
        ("1:korhaz_search", "1.1:korhaz_neighbor_search"),
        ("hétfő, szerda és péntek 7:00-11:30", "kedd, csütörtök és szombat 12:30-17:00"),
    ),
    DeepExample(
        "Mennyi a térítési díj, ha a hozzátartozóm bent alszik?",
        "insufficient",
        ("1:korhaz_search", "1.2:korhaz_context_search"),
        ("6 000 Ft éjszakánként",),
    ),
]
"""The three deep-fallback examples: sufficient, neighbour page, full search."""
