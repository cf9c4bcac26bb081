"""D7, D1, A10: ``Limits.deep_fallback_llm_calls=0`` means no model call in deep fallback.

The cap is "LLM calls deep fallback may spend per root task: gatekeeper and page
reading"; at 0 the gatekeeper was still asked (one model call a question, which with the
small local model said "insufficient" every time and paid for nothing measurable). Now
the offline model's lexical gatekeeper judges instead (free, in-process): the question's
words the context lacks are its pieces, searched without page reads. With a cap above 0
the run's model judges as before.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_d8_deep_fallback import Counting, ask, guide, lexical_reader
from toolweave import ContextVerdict, Domain, build_graph
from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.graph.context import Limits
from toolweave.graph.deep_fallback import JUDGED_LEXICALLY
from toolweave.tools.search import (
    ContextSearchTool,
    NeighborPageSearchTool,
    RetrievalTool,
    SqliteDocumentStore,
)

QUESTION = "When does the reading room open on Sundays?"


def _with_sunday_page() -> SqliteDocumentStore:
    store = guide()
    store.add_document(
        "weekend", ["# Weekend\nOn Sundays the reading room is closed."], name="Weekend", lang="en"
    )
    return store


def _graph(store: SqliteDocumentStore, assistant: Any, calls: int) -> Any:
    deep = DeepSearchCoordinator()
    domain = Domain(
        name="guide", default_retrieval_tool="guide_search", deep_fallback=lambda _: deep
    )
    tools = [
        RetrievalTool("guide_search", "guide", store, limit=1),
        deep,
        NeighborPageSearchTool("neighbor_search", "guide", store),
        ContextSearchTool("context_search", "guide", store),
    ]
    return build_graph(domain, tools, assistant=assistant, deep_fallback_llm_calls=calls)


def _insufficient(question: str, documents: Any, guaranteed: Any) -> ContextVerdict:
    return ContextVerdict(sufficient=False, missing=("anything",))


def test_D7_a_cap_of_0_asks_the_model_nothing_and_the_lexical_judge_still_finds_the_page() -> None:
    asked: list[str] = []
    assistant = Counting(judge=_insufficient, read=lexical_reader(asked))
    out = ask(_graph(_with_sunday_page(), assistant, calls=0), QUESTION)
    assert assistant.judged == 0  # no gatekeeper call
    assert asked == []  # no page read either
    assert out["deep_fallback_calls"] == 0
    (gate,) = [e for e in out["ledger"] if e.kind == "gatekeeper"]
    assert gate.verdict == "insufficient"
    assert JUDGED_LEXICALLY in gate.reason
    assert "On Sundays the reading room is closed." in " ".join(d.text for d in out["documents"])


def test_D7_a_cap_of_1_asks_the_runs_model_as_before() -> None:
    assistant = Counting(judge=_insufficient, read=lexical_reader([]))
    out = ask(_graph(_with_sunday_page(), assistant, calls=1), QUESTION)
    assert assistant.judged == 1
    assert out["deep_fallback_calls"] == 1
    (gate,) = [e for e in out["ledger"] if e.kind == "gatekeeper"]
    assert JUDGED_LEXICALLY not in gate.reason


def test_D7_X5_a_negative_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="deep_fallback_llm_calls must be 0 or more"):
        Limits(deep_fallback_llm_calls=-1)
