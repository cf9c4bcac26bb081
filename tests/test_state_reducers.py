"""The batch reducers of the delta channels: one step's writes folded at once (R6, B1, L1).

LangGraph replays stored writes in batches of any size (DeltaChannel), so each
batch reducer must give what its pairwise reducer gives write by write.
"""

from __future__ import annotations

from typing import Any

from toolweave.state.documents import UniqueTextDocument, merge_documents
from toolweave.state.graph_state import (
    append_all,
    merge_all_buffers,
    merge_all_documents,
    merge_all_tasks,
)
from toolweave.state.task import PromptAndContext, TaskInfo, TaskNode


def merge_tasks(left: dict[str, TaskNode], right: dict[str, TaskNode]) -> dict[str, TaskNode]:
    return {**left, **right}


def merge_buffer(left: dict[str, list[Any]], right: dict[str, list[Any]]) -> dict[str, list[Any]]:
    return {**left, **{key: [*left.get(key, []), *entries] for key, entries in right.items()}}


def _doc(doc_id: str, score: float, sentence: int = 1) -> UniqueTextDocument:
    return UniqueTextDocument(
        document_id=doc_id, page=1, sentence_number=sentence, text=doc_id, sentence_score=score
    )


def _fold(pairwise: Any, value: Any, writes: list[Any]) -> Any:
    for write in writes:
        value = pairwise(value, write)
    return value


def test_R6_document_batch_keeps_first_position_and_highest_score_like_the_fold() -> None:
    stored = [_doc("a", 0.5), _doc("b", 0.9)]
    writes = [[_doc("c", 0.1), _doc("a", 0.7)], [_doc("b", 0.2), _doc("c", 0.3)], []]
    merged = merge_all_documents(stored, writes)
    assert merged == _fold(merge_documents, stored, writes)
    assert [(d.document_id, d.sentence_score) for d in merged] == [
        ("a", 0.7),
        ("b", 0.9),
        ("c", 0.3),
    ]
    assert [d.document_id for d in stored] == ["a", "b"]  # the stored value is not mutated


def test_R6_document_batch_reads_documents_stored_as_mappings() -> None:
    stored: list[Any] = [_doc("a", 0.5).model_dump()]
    merged = merge_all_documents(stored, [[_doc("a", 0.8).model_dump(), _doc("b", 0.1)]])
    assert all(isinstance(d, UniqueTextDocument) for d in merged)
    assert [(d.document_id, d.sentence_score) for d in merged] == [("a", 0.8), ("b", 0.1)]


def test_B1_buffer_batch_appends_entries_under_a_key_in_write_order() -> None:
    def entry(text: str) -> PromptAndContext:
        return PromptAndContext(prompt="p", context=text)

    stored = {"1:t": [entry("one")]}
    writes = [{"1:t": [entry("two")], "1.1:u": [entry("x")]}, {"1:t": [entry("three")]}]
    merged = merge_all_buffers(stored, writes)
    assert merged == _fold(merge_buffer, stored, writes)
    assert [e.context for e in merged["1:t"]] == ["one", "two", "three"]
    assert [e.context for e in stored["1:t"]] == ["one"]


def test_S2_task_batch_replaces_only_the_tasks_it_names_last_write_winning() -> None:
    def node(task_no: str, prompt: str) -> TaskNode:
        return TaskNode(task=TaskInfo(task_no=task_no, task_prompt=prompt))

    stored = {"1": node("1", "root"), "1.1": node("1.1", "old")}
    writes = [{"1.1": node("1.1", "mid")}, {"1.1": node("1.1", "new"), "1.2": node("1.2", "b")}]
    merged = merge_all_tasks(stored, writes)
    assert merged == _fold(merge_tasks, stored, writes)
    assert [merged[k].task.task_prompt for k in ("1", "1.1", "1.2")] == ["root", "new", "b"]
    assert stored["1.1"].task.task_prompt == "old"


def test_L1_append_batch_keeps_every_write_in_order_without_mutating_the_stored_list() -> None:
    stored = ["a"]
    merged = append_all(stored, [["b", "c"], [], ["d"]])
    assert merged == ["a", "b", "c", "d"]
    assert stored == ["a"]


def test_S2_a_state_channel_copies_as_langgraph_copies_it_without_its_constructor() -> None:
    """The route's state read copies every channel after every node (S2): same fields,
    a shallow copy of the value, and LangGraph's own copy for the no-value marker."""
    from langgraph.channels import DeltaChannel

    from toolweave.state.graph_state import StateDeltaChannel

    fresh = StateDeltaChannel(append_all)
    unset = fresh.copy()  # before any value: LangGraph's marker, kept by identity
    assert unset.value is fresh.value
    channel = fresh.from_checkpoint(None)
    channel.key = "ledger"
    channel.update([["a"], ["b"]])
    ours, theirs = channel.copy(), DeltaChannel.copy(channel)
    assert type(ours) is StateDeltaChannel
    assert ours == theirs
    for slot in ("key", "typ", "reducer", "snapshot_frequency", "value"):
        assert getattr(ours, slot) == getattr(theirs, slot), slot
    assert ours.value is not channel.value  # a copy: the node's writes do not leak back
    ours.update([["c"]])
    assert channel.get() == ["a", "b"]
    assert ours.get() == ["a", "b", "c"]
    mapping = StateDeltaChannel(merge_all_tasks).from_checkpoint({"1": "x"})
    copied = mapping.copy()
    assert copied.get() == {"1": "x"}
    assert copied.value is not mapping.value
