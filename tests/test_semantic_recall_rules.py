"""T12: semantic recall by default over large catalogues (the ``embeddings`` extra)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage
from test_prefilter_rules import KeywordBlindEmbeddings, library, make

from toolweave import build_graph
from toolweave.state.ledger import LedgerKind
from toolweave.testing import FunctionAssistant
from toolweave.tools import embeddings as semantic
from toolweave.tools.domain import Domain
from toolweave.tools.prefilter import COSINE_WEIGHT, RRF_K, CandidateIndex, embedding_text

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
        + COSINE_WEIGHT / (RRF_K + by_cosine.index(n) + 1)
        for n in known
    }
    expected = sorted(known, key=lambda n: -fused[n])
    assert [r.tool for r in ranked] == [*expected, "unknown_tool"]
    assert [r.score for r in ranked[:-1]] == pytest.approx([fused[n] for n in expected])


def _text(tools: Any, name: str) -> str:
    return embedding_text(next(t for t in tools if t.name == name))


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every batch of texts the bundled static model embeds, in order."""
    batches: list[list[str]] = []
    real = semantic.StaticEmbeddings.matrix

    def recording(self: Any, texts: Any) -> Any:
        batches.append(list(texts))
        return real(self, texts)

    monkeypatch.setattr(semantic.StaticEmbeddings, "matrix", recording)
    return batches


class LeaningEmbeddings(Embeddings):
    """2-d unit vectors: a tool's cosine with every query is the lean its name is given."""

    def __init__(self, lean: dict[str, float], default: float) -> None:
        self.lean = lean
        self.default = default

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            lean = self.lean.get(text.splitlines()[0], self.default)
            rows.append([lean, (1 - lean * lean) ** 0.5])
        return rows

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def test_T12_the_cosine_ranking_outweighs_the_keyword_ranking():
    """The best by cosine, sharing no word, beats the only keyword hit that cosine ranks last.

    Equal weights (plain RRF) put the keyword hit first: 1/61 + 1/(60 + 40) > 1/61.
    """
    tools = [make(f"tool_{i}", f"subject number {i}") for i in range(40)]
    tools[5] = make("tool_5", "car park garage fees")
    names = [t.name for t in tools]
    embeddings = LeaningEmbeddings({"tool 9": 1.0, "tool 5": -0.5}, default=0.5)
    index = CandidateIndex(tools, embeddings)
    question = "garage fees"
    keyword = index.scores(question, names)
    assert [n for n in names if keyword[n] > 0] == ["tool_5"]
    assert [r.tool for r in index.rank(question, names, limit=1)] == ["tool_9"]
    weight = COSINE_WEIGHT
    assert weight / (RRF_K + 1) > 1 / (RRF_K + 1) + weight / (RRF_K + len(tools))


def test_T12_tools_are_embedded_without_boilerplate_or_the_repeated_name(embedded):
    """An adapted tool's routing question repeats its description around stock phrasing."""
    from toolweave.adapters.langchain import ROUTING_QUESTION

    def adapted(name: str, description: str) -> Any:
        tool = make(name, description)
        type(tool).executable_instruction = ROUTING_QUESTION.format(
            name=name, description=description
        )
        type(tool).description = f"Use this tool to {description}"
        return tool

    tools = [*library(), adapted("weather_now", "current conditions for a city")]
    names = [t.name for t in tools]
    CandidateIndex(tools, "auto").rank(QUESTION, names)
    texts = embedded[-1]
    assert len(texts) == len(tools)
    (weather,) = [t for t in texts if "conditions" in t]
    assert weather == "weather now\ncurrent conditions for a city"
    assert not any("true when the user" in t or "Use this tool" in t for t in texts)
    assert next(t for t in texts if t.startswith("parking")) == "parking\ncar park garage fees."


def test_T12_the_static_model_embeds_the_prompt_without_stopwords(embedded):
    tools = library()
    names = [t.name for t in tools]
    index = CandidateIndex(tools, "auto")
    assert index.rank(QUESTION, names, limit=1)[0].tool == "parking"
    assert embedded[0] == ["somewhere put automobile"]  # "is there", "to", "my" dropped
    index.rank("Hol lehet a kórháznál parkolni?", names, limit=1)
    assert embedded[-1] == ["kórháznál parkolni"]  # Hungarian function words too
    index.rank("Is it there?", names, limit=1)
    assert embedded[-1] == ["is it there"]  # nothing but stopwords: all kept


def test_T12_other_embeddings_get_the_whole_prompt():
    """Only the word-averaging static model gets the prompt without stopwords."""
    seen: list[str] = []

    class Recording(KeywordBlindEmbeddings):
        def embed_query(self, text: str) -> list[float]:
            seen.append(text)
            return super().embed_query(text)

    tools = library()
    CandidateIndex(tools, Recording()).rank(QUESTION, [t.name for t in tools])
    assert seen == [QUESTION]


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
