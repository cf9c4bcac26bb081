"""The bundled korhaz domain: department_info, emergency_numbers, korhaz_search (R1-R3, P1, T11)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from toolweave.state.results import ResultMode, ToolResult
from toolweave.state.task import TaskInfo
from toolweave.tools.base import EmptyRequest, ToolCallContext
from toolweave.tools.progress import ProgressEmitter
from toolweave.tools.search import RetrievalTool, SqliteDocumentStore
from toolweave_korhaz import (
    EXAMPLE_QUESTIONS,
    DepartmentInfoRequest,
    DepartmentInfoTool,
    EmergencyNumbersTool,
    korhaz_corpus,
    korhaz_domain,
    korhaz_tools,
    parse_markdown_document,
)
from toolweave_korhaz.departments import resolve_departments


def make_ctx(
    q: str, lang: str = "hu", tool: str = "department_info", writer: Any = None
) -> ToolCallContext:
    return ToolCallContext(
        task=TaskInfo(task_no="1", task_prompt=q),
        text=q,
        user_lang=lang,
        progress=ProgressEmitter(tool, writer),
    )


@pytest.fixture(scope="module")
def tools() -> dict[str, Any]:
    return {tool.name: tool for tool in korhaz_tools()}


def run_department(q: str, lang: str = "hu", **fields: Any) -> ToolResult | None:
    return DepartmentInfoTool().execute(DepartmentInfoRequest(**fields), make_ctx(q, lang))


def joined(result: ToolResult | None) -> str:
    assert result is not None
    return " ".join(d.text for d in result.documents)


def test_domain_and_tools_fit_together(tools):
    domain = korhaz_domain()
    assert domain.name == "korhaz"
    assert domain.default_retrieval_tool == "korhaz_search"
    assert set(tools) == {
        "department_info",
        "emergency_numbers",
        "korhaz_search",
        "drug_interaction",
        "substance_lookup",
        "doctor_finder",
        "doctor_directory",
        "callback_request",
        "korhaz_deep_search",
        "korhaz_neighbor_search",
        "korhaz_context_search",
    }
    assert all(t.domain == "korhaz" for t in tools.values())
    assert domain.deep_fallback_tool("factual") is not None
    assert domain.deep_fallback_tool("smalltalk") is None  # D2
    assert tools["korhaz_search"].executable_instruction is None  # never routed (A5)
    for name in ("department_info", "emergency_numbers", "callback_request"):
        assert tools[name].executable_instruction.startswith(f"{name}:")  # T5


@pytest.mark.parametrize(
    "name", ["kardiológián", "kardiológiára", "Kardiológiai osztály", "KARDIOLOGIA", "cardiology"]
)
def test_department_names_resolve_inflected_and_in_both_languages(name):
    assert [d.id for d in resolve_departments(name)] == ["kardiologia"]


@pytest.mark.parametrize(
    ("text", "dept"),
    [
        ("Mikor van rendelés a sebészeten?", "sebeszet"),
        ("Hányadik emeleten van a belgyógyászat?", "belgyogyaszat"),
        ("When are visiting hours on the surgery ward?", "sebeszet"),
        ("Who is the head of the paediatrics department?", "gyermekgyogyaszat"),
        ("Mikor van vérvétel a laborban?", "laboratorium"),
    ],
)
def test_departments_resolve_from_questions(text, dept):
    assert resolve_departments(text)[0].id == dept


def test_unrelated_words_resolve_no_department():
    assert resolve_departments("Szívesen segítek, hol lehet parkolni?") == []
    assert resolve_departments("Where can I park?") == []


def test_department_info_answers_consultation_hours_from_the_request():
    result = run_department("Mikor van rendelés a kardiológián?", department="kardiológián")
    assert result is not None
    assert result.mode is ResultMode.CONTEXT
    best = max(result.documents, key=lambda d: d.sentence_score)
    assert "9:00-13:00" in best.text
    assert all(d.document_id == "departments.json#kardiologia" for d in result.documents)


def test_department_info_answers_in_the_users_language():
    hu = joined(run_department("Mi a sebészet telefonszáma?", department="sebészet"))
    en = joined(run_department("Surgery phone?", lang="en", department="Surgery"))
    assert "telefonszáma: +36 1 555 0140" in hu
    assert "The phone number of Surgery is +36 1 555 0140" in en


def test_department_info_falls_back_to_the_task_prompt_when_extraction_missed():
    assert "+36 1 555 0130" in joined(run_department("Mi a kardiológia telefonszáma?"))


def test_R9_a_department_named_by_another_word_is_titled_with_that_word():
    """The source says which department answered "szívgyógyászat": Kardiológia."""
    other = run_department("Szívgyógyászat látogatási ideje?", department="szívgyógyászat")
    assert other is not None
    assert {d.document_name for d in other.documents} == {"Osztályok: Kardiológia (szívgyógyászat)"}
    xray = run_department("Where is the x-ray department?", lang="en")
    assert xray is not None
    assert {d.document_name for d in xray.documents} == {"Departments: Radiology (x-ray)"}
    # its own name, inflected or with a word of it ("kardiológiai osztály"): the plain title
    for question, name in (
        ("Mikor van rendelés a kardiológián?", "Kardiológia"),
        ("Mi a kardiológiai osztály száma?", "Kardiológia"),
        ("Milyen számon érem el a bőrgyógyászatot?", "Bőrgyógyászat"),  # not "bőrgyógyász"
        ("Mikor rendel a kardiológus?", "Kardiológia"),  # a kin word: not "kardiológus"
    ):
        own = run_department(question)
        assert own is not None
        assert {d.document_name for d in own.documents} == {f"Osztályok: {name}"}


def test_department_info_weekday_sentence():
    text = joined(run_department("Van rendelés pénteken a kardiológián?", department="kardiológia"))
    assert "rendelési ideje pénteken: nincs rendelés" in text
    en = joined(run_department("x", lang="en", department="Surgery", day="Thursday"))
    assert "On Thursday the consultation hours of Surgery are 10:00-14:00." in en


def test_T7_the_topic_the_question_writes_decides_over_the_models_pick():
    """A small model filled topic=consultation_hours for a visiting question."""
    asked = "When can I visit a patient in surgery?"
    result = run_department(asked, lang="en", department="surgery", topic="consultation_hours")
    assert result is not None
    heads = [d.text.split(":")[0] for d in result.documents]
    assert heads == ["Visiting hours on the Surgery ward"]


def test_T7_a_question_that_writes_no_topic_gets_every_fact_the_models_pick_ranked_first():
    asked = "Tell me about Surgery."
    result = run_department(asked, lang="en", department="Surgery", topic="phone")
    assert result is not None
    assert len(result.documents) == 5
    best = max(result.documents, key=lambda d: d.sentence_score)
    assert best.text.startswith("The phone number of Surgery")


def test_request_model_lists_known_departments_and_normalises_values():
    schema = DepartmentInfoRequest.model_json_schema()["properties"]
    assert "Kardiológia" in schema["department"]["examples"]
    assert "Cardiology" in schema["department"]["examples"]
    assert "kardiológiai osztály" in schema["department"]["known_values"]
    request = DepartmentInfoRequest(department="x", topic="rendelési idő", day="hétfőn")
    assert (request.topic, request.day) == ("consultation_hours", "monday")
    assert DepartmentInfoRequest(topic="nonsense", day="someday").topic is None


@pytest.mark.parametrize(
    "question",
    [
        "Hol lehet parkolni a kórháznál?",
        "Where can I park?",
        "What is the wifi password?",
        "Where is the pharmacy and when is it open?",
        "Mi a telefonszám?",
        "Hol rendel dr. Kovács Anna?",
        "When are Dr. Ilona Fehér's office hours?",
        "Hol rendel az endokrinológus vendég szakorvos?",  # a guest specialist, no ward
        "Where does the visiting specialist see patients?",
    ],
)
def test_R1_department_info_returns_none_when_the_question_is_not_about_a_department(question):
    # Asking "which department?" (Q1) is only for department topics; these go to RAG.
    lang = "en" if question.isascii() else "hu"
    assert run_department(question, lang) is None


def test_R1_department_info_returns_none_for_a_named_unknown_department():
    assert run_department("Mikor van rendelés a fogászaton?", department="fogászat") is None


def test_Q1_department_info_asks_instead_of_r1_when_hours_are_asked_without_a_department():
    result = run_department("Mikor van rendelés?")
    assert result is not None
    assert result.mode is ResultMode.CLARIFICATION


def test_P1_department_info_emits_fetching_data():
    events: list[dict[str, Any]] = []
    ctx = make_ctx("Mikor van rendelés a kardiológián?", writer=events.append)
    DepartmentInfoTool().execute(DepartmentInfoRequest(department="kardiológia"), ctx)
    assert [e["text"] for e in events] == ["TOOL_PROGRESS:DEPARTMENT_INFO:FETCHING_DATA"]


@pytest.mark.parametrize(("lang", "word"), [("hu", "mentők"), ("en", "ambulance")])
def test_R3_emergency_numbers_is_a_finished_answer(lang, word):
    result = EmergencyNumbersTool().execute(EmptyRequest(), make_ctx("112?", lang))
    assert result is not None
    assert result.mode is ResultMode.ANSWER
    assert result.is_terminal
    assert result.text is not None
    assert "112" in result.text
    assert word in result.text
    assert "+36 1 555 0199" in result.text


def test_emergency_tool_runs_before_department_info():
    # R8: on "Mi a sürgősségi telefonszám?" both may be routed; the terminal answer comes first
    # (and A8 lets only one of them run then).
    assert EmergencyNumbersTool.priority < DepartmentInfoTool.priority


def test_R2_retrieval_returns_context_and_reports_progress(tools):
    events: list[dict[str, Any]] = []
    q = "Hol lehet parkolni a kórháznál?"
    result = tools["korhaz_search"].execute(
        EmptyRequest(), make_ctx(q, tool="korhaz_search", writer=events.append)
    )
    assert result is not None
    assert result.mode is ResultMode.CONTEXT
    assert result.tool_name == "korhaz_search"
    assert "Gyógyító utca 14" in result.documents[0].text
    assert result.documents[0].document_url == "https://korhaz.example/parkolas"
    assert [e["event"] for e in events] == ["SEARCHING", "FOUND"]
    assert events[1]["detail"] == str(len(result.documents))


def test_R1_retrieval_returns_none_when_nothing_matches():
    # Keywords only: with an embedding model (D9) the nearest passages always exist.
    store = SqliteDocumentStore(embeddings=None)
    store.add_documents(korhaz_corpus())
    search = RetrievalTool("korhaz_search", "korhaz", store)
    assert search.execute(EmptyRequest(), make_ctx("xyzzy qwerty")) is None


@pytest.mark.parametrize("example", [e for e in EXAMPLE_QUESTIONS if "korhaz_search" in e[2]])
def test_retrieval_examples_passages_hold_the_answer(tools, example):
    question, expected, _ = example
    result = tools["korhaz_search"].execute(EmptyRequest(), make_ctx(question))
    assert result is not None
    # D9: passages, best first; the first passage is the best hit with its neighbours
    first = [d for d in result.documents if d.document_id == result.documents[0].document_id]
    assert any(all(s in d.text for s in expected) for d in first[:3])


@pytest.mark.parametrize("example", [e for e in EXAMPLE_QUESTIONS if "department_info" in e[2]])
def test_department_examples_best_sentence_holds_the_answer(example):
    question, expected, _ = example
    lang = "en" if question.isascii() else "hu"
    result = run_department(question, lang)
    assert result is not None
    best = max(result.documents, key=lambda d: d.sentence_score)
    assert all(s in best.text for s in expected), best.text


def test_examples_cover_both_languages_and_every_tool():
    assert len(EXAMPLE_QUESTIONS) >= 8
    assert any(q.isascii() for q, _, _ in EXAMPLE_QUESTIONS)
    assert any(not q.isascii() for q, _, _ in EXAMPLE_QUESTIONS)
    assert {t for _, _, ts in EXAMPLE_QUESTIONS for t in ts} == {
        "department_info",
        "emergency_numbers",
        "korhaz_search",
    }


def test_T11_tools_keep_no_per_request_state(tools):
    dept = tools["department_info"]
    search = tools["korhaz_search"]
    before = (dict(vars(dept)), dict(vars(search)))
    questions = [
        ("Mi a kardiológia telefonszáma?", "+36 1 555 0130"),
        ("Mi a sebészet telefonszáma?", "+36 1 555 0140"),
    ] * 8

    def ask(item: tuple[str, str]) -> bool:
        q, phone = item
        text = joined(dept.execute(DepartmentInfoRequest(), make_ctx(q)))
        hits = search.execute(EmptyRequest(), make_ctx(q))
        return phone in text and hits is not None

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(ask, questions))
    first = joined(dept.execute(DepartmentInfoRequest(department="kardiológia"), make_ctx("a")))
    second = joined(dept.execute(DepartmentInfoRequest(department="sebészet"), make_ctx("b")))
    assert "Kardiológia" in first
    assert "Sebészet" not in first
    assert "Sebészet" in second
    assert "Kardiológia" not in second
    assert (dict(vars(dept)), dict(vars(search))) == before


def test_corpus_has_multi_page_documents_in_both_languages():
    corpus = korhaz_corpus()
    assert len(corpus) >= 20
    assert {d.lang for d in corpus} == {"hu", "en"}
    assert sum(len(d.pages) > 1 for d in corpus) >= 2
    assert all(d.url and d.url.startswith("https://korhaz.example/") for d in corpus)


def test_front_matter_and_page_breaks_parse():
    doc = parse_markdown_document(
        "---\ntitle: T\nurl: https://x\nlang: en\n---\nOne.\n<!-- page -->\nTwo.\n", "d"
    )
    assert (doc.name, doc.url, doc.lang, doc.pages) == ("T", "https://x", "en", ("One.", "Two."))


def test_korhaz_tools_uses_a_given_store():
    store = SqliteDocumentStore()
    store.add_document("only", "A parkolás ingyenes.", lang="hu")
    search = next(t for t in korhaz_tools(store) if isinstance(t, RetrievalTool))
    result = search.execute(EmptyRequest(), make_ctx("parkolás"))
    assert result is not None
    assert [d.document_id for d in result.documents] == ["only"]
