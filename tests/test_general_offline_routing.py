"""G1 with T5 and T12: offline routing rules that hold for any domain (issue 36 item 3)."""

from __future__ import annotations

from tests.test_routing_decision_rules import tool
from toolweave.llm.lexical import is_generic
from toolweave.llm.offline_routing import RoutingRule, offline_decision

TOOLS = [
    tool("allowance", "the user asks about the remote work allowance"),
    tool("canteen", "the user asks about the canteen menu"),
]


def test_T12_a_clear_winner_of_the_ranking_needs_a_word_that_is_evidence() -> None:
    assert is_generic("work")
    # "work" is the only word the task shares with any tool: no evidence, nothing runs
    found = offline_decision("Is there a parking spot near work?", TOOLS, RoutingRule())
    assert found.routed == set()
    assert found.winner is None
    # a subject word is evidence
    assert offline_decision("How much is the allowance?", TOOLS, RoutingRule()).routed == {
        "allowance"
    }


def test_T5_polish_need_and_work_are_generic_as_their_english_words_are() -> None:
    assert all(is_generic(word) for word in ("trzeba", "pracę", "need", "work"))
