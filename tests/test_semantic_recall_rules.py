"""T12: semantic recall by default over large catalogues (the ``embeddings`` extra)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from test_prefilter_rules import KeywordBlindEmbeddings, library, make

from toolweave import build_graph
from toolweave.state.ledger import LedgerKind
from toolweave.testing import FunctionAssistant
from toolweave.tools import embeddings as semantic
from toolweave.tools.domain import Domain
from toolweave.tools.prefilter import RRF_K, CandidateIndex

pytest.importorskip("wordllama")  # the dev extra installs it

QUESTION = "Is there somewhere to put my automobile?"


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLWEAVE_CACHE_DIR", str(tmp_path / "cache"))


def test_T12_auto_uses_the_bundled_model_and_finds_a_paraphrase():
    tools = library()
    names = [t.name for t in tools]
    names = names[::-1]  # the keyword ranking's ties follow this order: parking last
    fused = CandidateIndex(tools, "auto")
    assert fused.semantic
    assert CandidateIndex(tools).scores(QUESTION, ["parking"]) == {"parking": 0.0}
    assert fused.rank(QUESTION, names, limit=3)[0].tool == "parking"


def test_T12_without_the_extra_auto_is_keywords_alone(monkeypatch):
    monkeypatch.setattr(semantic, "extra_installed", lambda: False)
    tools = library()
    names = [t.name for t in tools]
    index = CandidateIndex(tools, "auto")
    assert not index.semantic
    assert index.rank(QUESTION, names) == CandidateIndex(tools).rank(QUESTION, names)


def test_T12_default_domain_fuses_above_the_cap_only(monkeypatch):
    loads: list[int] = []
    real = semantic.StaticEmbeddings.matrix

    def counting(self: Any, texts: Any) -> Any:
        loads.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(semantic.StaticEmbeddings, "matrix", counting)
    seen: list[list[str]] = []

    def route(text: str, offered: Any) -> list[str]:
        seen.append([t.name for t in offered])
        return []

    def graph(cap: int) -> Any:
        return build_graph(
            Domain(name="d"),
            library(),
            assistant=FunctionAssistant(route=route),
            max_routing_candidates=cap,
        )

    graph(100).invoke({"messages": [HumanMessage(QUESTION)]})
    assert loads == []  # under the cap: nothing ranked, no model used
    out = graph(3).invoke({"messages": [HumanMessage(QUESTION)]})
    assert "parking" in seen[-1]
    assert len(seen[-1]) == 3
    (entry,) = [e for e in out["ledger"] if e.kind == LedgerKind.PREFILTER]
    assert entry.details["parking"].startswith("kept: ranked 1st")
    assert loads == [1, len(library())]  # one query, the tool texts once


def test_T12_tool_vectors_are_cached_on_disk_keyed_by_the_tool_texts(tmp_path, monkeypatch):
    embedded: list[int] = []
    real = semantic.StaticEmbeddings.matrix

    def counting(self: Any, texts: Any) -> Any:
        embedded.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(semantic.StaticEmbeddings, "matrix", counting)
    folder = tmp_path / "vectors"
    tools = library()
    names = [t.name for t in tools]
    first = CandidateIndex(tools, semantic.StaticEmbeddings(folder)).rank(QUESTION, names)
    assert embedded == [1, len(tools)]
    assert len(list(folder.glob("tool-vectors-*.npy"))) == 1
    again = CandidateIndex(tools, semantic.StaticEmbeddings(folder)).rank(QUESTION, names)
    assert again == first
    assert embedded == [1, len(tools), 1]  # the query only: the tool vectors came from disk
    changed = [*tools[:-1], make("filler_last", "a different text")]
    CandidateIndex(changed, semantic.StaticEmbeddings(folder)).rank(QUESTION, names)
    assert embedded[-1] == len(changed)  # a changed text is a new key: embedded afresh
    assert len(list(folder.glob("tool-vectors-*.npy"))) == 2


def test_T12_an_unreadable_cache_only_costs_the_embedding(tmp_path):
    folder = tmp_path / "vectors"
    tools = library()
    names = [t.name for t in tools]
    ranked = CandidateIndex(tools, semantic.StaticEmbeddings(folder)).rank(QUESTION, names)
    for path in folder.glob("*.npy"):
        path.write_bytes(b"not an array")
    again = CandidateIndex(tools, semantic.StaticEmbeddings(folder)).rank(QUESTION, names)
    assert [r.tool for r in again] == [r.tool for r in ranked]


def test_T12_vectorised_fusion_is_reciprocal_rank_fusion():
    """The numpy fusion against the definition, over LangChain embeddings of the domain."""
    tools = library()
    names = [t.name for t in tools]
    subset = [*names[::2], "unknown_tool"]
    index = CandidateIndex(tools, KeywordBlindEmbeddings())
    question = "car park lunch"
    ranked = index.rank(question, subset)
    keyword = index.scores(question, names)
    embedder = KeywordBlindEmbeddings()
    query = embedder.embed_query(question)

    def cosine(name: str) -> float:
        (vector,) = embedder.embed_documents([_text(tools, name)])
        norm = sum(x * x for x in vector) ** 0.5 * sum(x * x for x in query) ** 0.5
        return sum(a * b for a, b in zip(vector, query, strict=True)) / norm

    known = [n for n in names if n in subset]  # ties in registry order
    by_keyword = sorted((n for n in known if keyword[n] > 0), key=lambda n: -keyword[n])
    by_cosine = sorted(known, key=lambda n: -cosine(n))
    assert 0 < len(by_keyword) < len(known)  # a tool sharing no word is not keyword-ranked
    fused = {
        n: (1 / (RRF_K + by_keyword.index(n) + 1) if n in by_keyword else 0.0)
        + 1 / (RRF_K + by_cosine.index(n) + 1)
        for n in known
    }
    expected = sorted(known, key=lambda n: -fused[n])
    assert [r.tool for r in ranked] == [*expected, "unknown_tool"]
    assert [r.score for r in ranked[:-1]] == pytest.approx([fused[n] for n in expected])


def _text(tools: Any, name: str) -> str:
    from toolweave.tools.prefilter import tool_text

    return tool_text(next(t for t in tools if t.name == name))


def test_T12_missing_numpy_says_how_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_numpy(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "numpy":
            raise ImportError("no numpy")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_numpy)
    with pytest.raises(semantic.EmbeddingsExtraMissingError, match=r"toolweave\[embeddings\]"):
        semantic.numpy_module()
