"""The answer a user can trust: its sources as data (R9), tool results as text (R10).

Every surface reads the state's ``sources``; none re-derives it from the context.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from tests.support import ask, doc, graph_of, make_tool
from toolweave import OfflineAssistant, ToolResult, build_graph
from toolweave.adapters.langchain import answer_with_sources
from toolweave.cli.render import source_lines
from toolweave.domains import load_domain
from toolweave.llm.port import AnswerRequest, cited_documents
from toolweave.state.documents import Source, UniqueTextDocument, sources_of
from toolweave.testing import FunctionAssistant
from toolweave.tools.base import ChatbotTool, ToolCallContext
from toolweave.tools.text import readable

CONTEXT = [
    doc("pharmacy", "The pharmacy opens at 8."),
    doc("cardiology", "Cardiology is on floor 2."),
]
CONTEXT += [doc("parking", "Parking costs 500 Ft.", page=3)]


@pytest.fixture(scope="module")
def korhaz() -> Any:
    domain, tools = load_domain("korhaz")
    return build_graph(domain, tools, assistant=OfflineAssistant())


def _context_tool(name: str = "search") -> ChatbotTool[Any]:
    return make_tool(name, result=lambda n, ctx: ToolResult.as_context(n, CONTEXT))


def _answered(answer: Callable[[AnswerRequest], str], question: str) -> Any:
    """A run over the search tool's CONTEXT whose model answers with ``answer``."""
    assistant = FunctionAssistant(route=lambda text, tools: ["search"], answer=answer)
    return ask(graph_of([_context_tool()], assistant=assistant), question)


# -- R9: the answering step says which documents it used --------------------------------------


def test_R9_a_model_answer_lists_only_the_documents_it_cites() -> None:
    assistant = FunctionAssistant(
        route=lambda text, tools: ["search"], answer=lambda request: "Floor 2 [2], 8:00 [1]."
    )
    out = ask(graph_of([_context_tool()], assistant=assistant), "search: where and when?")
    assert [s.document_id for s in out["sources"]] == ["cardiology", "pharmacy"]  # answer order


def test_R9_an_answer_citing_nothing_lists_nothing() -> None:
    assistant = FunctionAssistant(
        route=lambda text, tools: ["search"], answer=lambda request: "The context does not say."
    )
    out = ask(graph_of([_context_tool()], assistant=assistant), "search: is there a pool?")
    assert out["documents"]  # the context was there
    assert out["sources"] == []


def test_R9_citation_markers_are_read_by_number_within_range() -> None:
    assert cited_documents("See [3] and [1, 3]; also [9] and [0].", CONTEXT) == [
        CONTEXT[2],
        CONTEXT[0],
    ]
    assert cited_documents("no markers", CONTEXT) == []


def test_R9_offline_sources_are_the_documents_of_the_quoted_sentences() -> None:
    request = AnswerRequest("When does the pharmacy open?", "en", "", CONTEXT, ())
    offline = OfflineAssistant()
    answer = offline.answer(request).text
    assert answer == "The pharmacy opens at 8."
    assert offline.answer_sources(request, answer) == [CONTEXT[0]]


def test_R9_no_information_lists_no_sources(korhaz: Any) -> None:
    out = korhaz.invoke({"messages": [HumanMessage("Can I bring my dog to the hospital?")]})
    assert out["answer"].startswith("I found no information")
    assert out["documents"]  # retrieval found something, the answer used none of it
    assert out["sources"] == []


def test_R9_a_quoted_answer_lists_its_documents_with_pages_and_address(korhaz: Any) -> None:
    question = "How much does parking cost at the hospital?"
    out = korhaz.invoke({"messages": [HumanMessage(question)]})
    assert out["sources"], out["answer"]
    assert len(out["sources"]) < len({d.document_id for d in out["documents"]})
    for source in out["sources"]:
        assert isinstance(source, Source)
        assert source.url
        assert source.url.startswith("https://")
    quoted = {d.document_id for d in out["documents"] if d.text.strip() in out["answer"]}
    assert {s.document_id for s in out["sources"]} <= quoted | {
        d.document_id for g in out["guaranteed"] for d in g.documents
    }


def test_R9_a_finished_answer_lists_the_tools_own_sources_or_none() -> None:
    own = doc("rules", "Rule 7.", page=2)
    cited = make_tool("cited", result=lambda n, ctx: ToolResult.as_answer(n, "Rule 7.", [own]))
    plain = make_tool("plain", result=lambda n, ctx: ToolResult.as_answer(n, "Done."))
    searched = _context_tool()
    out = ask(graph_of([searched, cited]), "search cited")
    assert out["answer"] == "Rule 7."
    assert out["sources"] == [Source(document_id="rules", name="rules", pages=(2,))]
    out = ask(graph_of([searched, plain]), "search plain")
    assert out["answer"] == "Done."
    assert out["sources"] == []  # the search's context is not the finished answer's source


def test_R9_a_new_message_starts_without_the_last_answers_sources() -> None:
    assistant = FunctionAssistant(
        route=lambda text, tools: ["search"] if "search" in text else [],
        answer=lambda request: "[1]" if request.documents else "nothing",
    )
    graph = graph_of([_context_tool()], assistant=assistant, checkpointer=_saver())
    assert ask(graph, "search it", thread_id="r9")["sources"]
    assert ask(graph, "hello", thread_id="r9")["sources"] == []


def test_R9_every_surface_shows_the_states_sources() -> None:
    sources = sources_of([doc("v", "a", page=2), doc("v", "b", page=5), doc("d", "c", page=None)])
    state = {"answer": "Open 8-16.", "sources": [s.model_dump() for s in sources]}  # as over an API
    assert source_lines(state["sources"], "en") == ["Sources:", "  - v, p. 2, 5", "  - d"]
    assert answer_with_sources(state) == "Open 8-16.\n\nSources:\n- v, p. 2, 5\n- d"
    # documents in the state that are no source are never shown
    assert "x" not in answer_with_sources({**state, "documents": [doc("x", "y")]})


def test_R9_the_cli_json_lists_the_state_sources(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from toolweave import cli

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path / "data"))
    assert cli.main(["ask", "--json", "Can I bring my dog to the hospital?"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["sources"] == []
    assert cli.main(["ask", "--json", "How much does parking cost at the hospital?"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["sources"]
    assert {"document_id", "name", "pages", "url", "page_count"} == payload["sources"][0].keys()


def _saver() -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    from toolweave.state.serde import checkpoint_serde

    return InMemorySaver(serde=checkpoint_serde())


# -- R10: a structured result reaches the answer as text ---------------------------------------


def test_R10_json_is_written_out_field_by_field() -> None:
    text = readable('{"free_slots": ["9:00", "9:30"], "phone": null, "open": true}')
    assert text == "Free slots: 9:00, 9:30\nOpen: yes"
    assert readable("Plain {text}.") == "Plain {text}."
    assert readable("{not json") == "{not json"


class _Booking(ChatbotTool[Any]):
    name = "booking"
    executable_instruction = "booking: true when the user books"

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_guaranteed_context(self.name, json.dumps({"slot": "10:30"}))

    def result_text(self, text: str, *, user_lang: str) -> str:
        return f"Your slot: {json.loads(text)['slot']}."


def test_R10_a_tool_declares_how_its_result_reads_and_the_buffer_keeps_the_data() -> None:
    seen: list[AnswerRequest] = []

    def answer(request: AnswerRequest) -> str:
        seen.append(request)
        return "\n".join(request.guaranteed)

    out = ask(
        graph_of([_Booking()], assistant=FunctionAssistant(route=_routes, answer=answer)), "booking"
    )
    assert list(seen[0].guaranteed) == ["Your slot: 10:30."]  # what the model sees
    assert out["answer"] == "Your slot: 10:30."
    assert json.loads(out["context_buffer"]["1:booking"][0].context) == {"slot": "10:30"}  # B1


def test_R10_raw_json_never_becomes_a_finished_answer() -> None:
    raw = make_tool("raw", result=lambda n, ctx: ToolResult.as_answer(n, '{"status": "booked"}'))
    out = ask(graph_of([raw]), "raw")
    assert out["answer"] == "Status: booked"


def _routes(text: str, tools: Any) -> list[str]:
    return [t.name for t in tools if t.name in text]


def test_R10_the_date_tool_answers_in_words_offline(korhaz: Any) -> None:
    out = korhaz.invoke({"messages": [HumanMessage("Milyen napra esik 2026-12-24?")]})
    assert "2026. december 24., csütörtök" in out["answer"]
    assert "{" not in out["answer"]
    assert '"' not in out["answer"]


def test_R10_the_slots_found_are_in_the_answer_offline_and_for_a_model(korhaz: Any) -> None:
    question = "Szeretnék időpontot foglalni a kardiológiára hétfőn"
    out = korhaz.invoke({"messages": [HumanMessage(question)]})
    assert "Szabad időpontok (Kardiológia): hétfő: 09:00, 09:30" in out["answer"]
    assert "{" not in out["answer"]
    # a model gets the same text as guaranteed context (always relevant)
    texts = [g.context for g in out["guaranteed"]]
    assert any(t.startswith("Szabad időpontok") for t in texts)
    assert not any(t.lstrip().startswith("{") for t in texts)
    assert "Appointment slots" in [s.name for s in out["sources"]]


def test_R10_the_filled_form_is_in_the_answer() -> None:
    from toolweave.client_tools import ClientToolRegistry, run_with_client_tools

    client = ClientToolRegistry()
    client.register(
        "fill_appointment_form",
        lambda input: json.dumps({"filled": True, **json.loads(input)}),
    )
    domain, tools = load_domain("korhaz")
    graph = build_graph(domain, tools, assistant=OfflineAssistant(), checkpointer=_saver())
    out = run_with_client_tools(
        graph,
        {"messages": [HumanMessage("Szeretnék időpontot foglalni a kardiológiára hétfőn")]},
        {"configurable": {"thread_id": "form"}},
        client,
    )
    assert "Kitöltöttem az időpontkérő űrlapot az oldalon: Kardiológia, hétfő." in out["answer"]


def test_R9_a_chat_model_citing_one_of_six_passages_lists_that_one() -> None:
    from toolweave.llm.chat_model import ChatModelAssistant
    from toolweave.testing import ScriptedChatModel

    six = [doc(f"page{n}", f"Fact number {n}.") for n in range(1, 7)]
    model = ScriptedChatModel(script=["Cardiology sees patients Monday to Thursday [4]."])
    assistant = ChatModelAssistant(model, initial_backoff=0)
    request = AnswerRequest("When does cardiology see patients?", "en", "", six, ())
    answer = assistant.answer(request).text
    sent = "\n".join(str(m.content) for m in model.calls[0].messages)
    assert "page4, p. 1:\n[4] Fact number 4." in sent  # the model sees numbered passages
    assert assistant.answer_sources(request, answer) == [six[3]]


EXISTENCE_CONTEXT = [
    doc("szolgaltatasok", "A kórházban büfé és gyógyszertár működik."),
    doc("parkolas", "A parkolás első 30 perce ingyenes."),
]


def _existence_graph(answer: Any, guaranteed: str | None = None) -> Any:
    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        if guaranteed is not None:
            return ToolResult.as_guaranteed_context(name, guaranteed)
        return ToolResult.as_context(name, EXISTENCE_CONTEXT)

    assistant = FunctionAssistant(route=lambda text, tools: ["search"], answer=answer)
    return graph_of([make_tool("search", result=result)], assistant=assistant)


def test_R9_an_existence_question_no_context_document_names_is_not_covered_without_a_call() -> None:
    """The 1.5B model's "Igen, a kórházban van fodrász." over a context with no hairdresser.

    The rule is the answer node's, so it holds for every assistant (offline, chat model,
    a test double): none is asked, no call is counted, no source is listed.
    """
    from toolweave.llm.prompts import no_information_answer

    asked: list[str] = []

    def answer(request: AnswerRequest) -> str:
        asked.append(request.question)
        return "Igen, a kórházban van fodrász."

    out = ask(_existence_graph(answer), "Van fodrász a kórházban?")
    assert out["documents"]  # the context was there, and it names no hairdresser
    assert out["answer"] == no_information_answer("hu")
    assert asked == []  # nothing was generated
    assert out["sources"] == []
    assert [e.verdict for e in out["ledger"] if e.kind == "answer"] == ["not_covered"]

    # Named by the context, or answered by a guaranteed context: the assistant answers.
    named = ask(_existence_graph(answer), "Van büfé a kórházban?", thread_id="named")
    assert named["answer"] == "Igen, a kórházban van fodrász."  # the double's reply
    assert named["llm_calls"] == out["llm_calls"] + 1  # the answer call, counted only when made
    given = ask(
        _existence_graph(answer, "Van: B épület."), "Van fodrász a kórházban?", thread_id="g"
    )
    # a yes that says the question back gives way to what the guaranteed context says (R9)
    assert given["answer"] == "Van: B épület."
    assert asked == ["Van büfé a kórházban?", "Van fodrász a kórházban?"]
    # A tool's own data (no page sentence) says it in its own words: the assistant reads it.
    data = UniqueTextDocument(document_id="free_beds", text="kardiológia: 3 free beds")
    tool = make_tool("free_beds", result=lambda n, ctx: ToolResult.as_context(n, [data]))
    graph = graph_of(
        [tool], assistant=FunctionAssistant(route=lambda t, ts: ["free_beds"], answer=answer)
    )
    assert (
        ask(graph, "Van szabad ágy a kardiológián?")["answer"] == "Igen, a kórházban van fodrász."
    )


def test_R9_an_answer_of_markers_alone_quotes_the_passages_it_cites() -> None:
    """The 1.5B model answered "Which phone number do I call to book a CT scan?" with "[3]"."""
    assistant = FunctionAssistant(route=lambda text, tools: ["search"], answer=lambda r: " [3] ")
    out = ask(graph_of([_context_tool()], assistant=assistant), "search: parking price?")
    assert out["answer"] == "Parking costs 500 Ft."  # the marker is data now (R9)
    assert [s.document_id for s in out["sources"]] == ["parking"]
    assert [s.sources for s in out["answer_sentences"]] == [(1,)]
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert entry.verdict == "generated"
    assert "citation markers only" in entry.reason
    assert out["messages"][-1].content == out["answer"]  # the thread keeps the quoted answer


def test_R9_markers_that_cite_no_passage_are_no_information() -> None:
    from toolweave.llm.prompts import no_information_answer

    assistant = FunctionAssistant(route=lambda text, tools: ["search"], answer=lambda r: "[9]")
    out = ask(graph_of([_context_tool()], assistant=assistant), "search: parking price?")
    assert out["answer"] == no_information_answer("en")
    assert out["sources"] == []


def test_R9_an_answer_with_words_and_markers_is_kept_as_written_without_its_markers() -> None:
    answer = "Parking costs 500 Ft [3]."
    assistant = FunctionAssistant(route=lambda text, tools: ["search"], answer=lambda r: answer)
    out = ask(graph_of([_context_tool()], assistant=assistant), "search: parking price?")
    assert out["answer"] == "Parking costs 500 Ft."  # its words as written; the marker is data
    assert [(s.text, s.sources) for s in out["answer_sentences"]] == [(out["answer"], (1,))]


def test_R9_the_cli_holds_back_markers_alone_and_prints_the_stored_answer() -> None:
    import io

    from toolweave.cli.session import NOT_KEPT, Turn, _print_end, _print_tokens

    def shown(tokens: list[str], answer: str) -> str:
        out, printed, seen = io.StringIO(), 0, []
        for token in tokens:
            seen.append(token)
            printed = _print_tokens(seen, printed, out)
        _print_end(Turn(values={"answer": answer}, streamed="".join(tokens)), printed, out)
        return out.getvalue()

    quoted = "Parking costs 500 Ft."  # the stored answer: no marker (R9)
    assert shown(["[", "3", "]"], quoted) == quoted + "\n"  # "[3]" never reaches the screen
    # a marker in a streamed answer never reaches the screen either (R9)
    assert shown(["Parking", " costs", " 500 Ft [", "3]."], quoted) == quoted + "\n"
    assert shown(["[1] ", "Open", " at 8."], "Open at 8.") == "Open at 8.\n"
    cut = "Parking costs … [answer cut]"
    assert shown(["Parking costs ", "…"], cut) == cut + "\n"  # the stored rest is printed
    retried = "Parking costs 500 Ft."  # a stream that broke off, then the whole retry
    assert shown(["Parking is fr"], retried) == "Parking is fr\n" + NOT_KEPT + "\n" + retried + "\n"


def test_X3_the_cli_says_which_text_counts_when_a_loop_that_streamed_was_replaced() -> None:
    import io

    from toolweave.cli.session import NOT_KEPT, Turn, _print_end, _print_tokens

    out, printed, seen = io.StringIO(), 0, []
    tokens = ["szabad "] * 30
    for token in tokens:
        seen.append(token)
        printed = _print_tokens(seen, printed, out)
    stored = "Parking costs 500 Ft."
    _print_end(Turn(values={"answer": stored}, streamed="".join(tokens)), printed, out)
    shown = out.getvalue()
    assert shown.endswith("\n" + NOT_KEPT + "\n" + stored + "\n")
    assert shown.startswith("szabad szabad")  # what streamed cannot be taken back


DEPARTMENT_CONTEXT = [
    doc("sebeszet", "The head of Surgery is dr. Szabó András."),
    doc("kardiologia", "The head of Cardiology is dr. Kiss Péter."),
    doc("parking", "The first 30 minutes of parking are free."),
]


def test_R9_a_kind_of_a_named_thing_the_context_never_qualifies_so_is_not_covered() -> None:
    """ "plastic surgery" over pages that name Surgery and never "plastic" (every assistant)."""
    from toolweave.llm.prompts import no_information_answer

    asked: list[str] = []

    def answer(request: AnswerRequest) -> str:
        asked.append(request.question)
        return "The head of Surgery is dr. Szabó András [1]."

    def graph() -> Any:
        tool = make_tool(
            "search", result=lambda n, ctx: ToolResult.as_context(n, DEPARTMENT_CONTEXT)
        )
        assistant = FunctionAssistant(route=lambda text, tools: ["search"], answer=answer)
        return graph_of([tool], assistant=assistant)

    out = ask(graph(), "Who is the head of the plastic surgery department?")
    assert out["answer"] == no_information_answer("en")
    assert asked == []
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert (entry.verdict, "plastic" in entry.reason) == ("not_covered", True)
    # The named thing itself, or a missing word before a common noun: the assistant answers.
    assert ask(graph(), "Who is the head of the surgery department?")["sources"]
    ask(graph(), "Are the first thirty minutes of parking free?")
    assert asked == [
        "Who is the head of the surgery department?",
        "Are the first thirty minutes of parking free?",
    ]


def test_A7_a_phone_question_is_answered_by_the_sentence_that_gives_the_number() -> None:
    """Golden k134: "phone", "number" and "call" are what the number in the sentence answers."""
    radiology = [
        doc("radiology", "CT and MRI examinations are done by appointment only.", sentence=2),
        doc("radiology", "You can book a CT or MRI appointment on +36 1 555 0170.", sentence=3),
        doc("radiology", "Before an MRI tell the staff if you have a pacemaker.", sentence=5),
    ]
    assistant = OfflineAssistant()
    question = "Which phone number do I call to book a CT scan?"
    request = AnswerRequest(question, "en", "", radiology, ())
    assert assistant.answer(request).text == radiology[1].text
    assert assistant.answer_sources(request, radiology[1].text) == [radiology[1]]
    # A sentence with no number does not answer a phone question by its other words alone.
    without = AnswerRequest(question, "en", "", [radiology[0], radiology[2]], ())
    assert "+36" not in assistant.answer(without).text


def test_R9_an_answer_that_writes_back_the_prompt_is_replaced_by_the_reading_of_its_context() -> (
    None
):
    """The 0.5B model answered a visiting-hours question with its prompt's context block."""
    from toolweave.llm.chat_messages import format_context

    echo = lambda r: "Guaranteed context: (none)\n\nContext:\n" + format_context(r.documents)  # noqa: E731
    out = _answered(echo, "How much is parking?")
    assert out["answer"] == "Parking costs 500 Ft."  # the offline reading's pick
    assert [s.document_id for s in out["sources"]] == ["parking"]
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert "copied the prompt's context block" in entry.reason
    # One passage's label copied in front of its text is an echo too.
    label = lambda r: "[3] parking, p. 3: Parking costs 500 Ft."  # noqa: E731
    out = _answered(label, "How much is parking?")
    assert out["answer"] == "Parking costs 500 Ft."
    # Its label without the number too, when it names a page (the 0.5B model, 4 Dec).
    bare = lambda r: "parking, p. 3: Parking costs 500 Ft."  # noqa: E731
    out = _answered(bare, "How much is parking?")
    assert out["answer"] == "Parking costs 500 Ft."
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert "copied the prompt's context block" in entry.reason
    # A document named without a page, as an answer may begin: kept as written.
    named = lambda r: "pharmacy: The pharmacy opens at 8 [1]."  # noqa: E731
    out = _answered(named, "When does the pharmacy open?")
    assert out["answer"] == "pharmacy: The pharmacy opens at 8."


def test_R9_the_cli_holds_back_an_answer_that_begins_as_the_prompt_does() -> None:
    import io

    from toolweave.cli.session import Turn, _print_end, _print_tokens

    out, printed, seen = io.StringIO(), 0, []
    tokens = ["Guar", "anteed context: (none)\n\n", "Context:\n[1] Parking: Parking costs 500 Ft."]
    for token in tokens:
        seen.append(token)
        printed = _print_tokens(seen, printed, out)
    stored = "Parking costs 500 Ft."
    _print_end(Turn(values={"answer": stored}, streamed="".join(tokens)), printed, out)
    assert out.getvalue() == stored + "\n"  # the echo never reached the screen


def test_R9_a_line_that_is_a_code_placeholder_alone_is_dropped_from_the_answer() -> None:
    """The 1.5B model began an answer with a line "null" (its routing reply's no)."""
    said = lambda r: "null\nParking costs 500 Ft [3]."  # noqa: E731
    out = _answered(said, "How much is parking?")
    assert out["answer"] == "Parking costs 500 Ft."
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert "code placeholder" in entry.reason
    # an answer that was nothing else is replaced by the reading of its context
    nothing = lambda r: "None"  # noqa: E731
    out = _answered(nothing, "How much is parking?")
    assert out["answer"] == "Parking costs 500 Ft."
    # a word in a sentence is kept: "None of the wards allow flowers." is an answer
    # (cited to no passage: a sentence citing one that does not say it is dropped, R9)
    # (asked whether, not how much: an answer without a figure may stand)
    kept = lambda r: "None of the wards charge for parking."  # noqa: E731
    out = _answered(kept, "Do the wards charge for parking?")
    assert out["answer"] == "None of the wards charge for parking."


def test_R9_an_answer_that_only_asks_or_says_the_question_back_is_replaced_by_the_reading() -> None:
    """A small model may answer with the question, or a question made of its words."""
    for back in (
        lambda r: r.question,  # the question itself, word for word
        lambda r: "Does the pharmacy open at all? [1]",  # a question of its own
        lambda r: "The pharmacy opens [1].",  # the question said back as a statement
    ):
        out = _answered(back, "When does the pharmacy open?")
        assert out["answer"] == "The pharmacy opens at 8."  # the offline reading's pick
        assert [s.document_id for s in out["sources"]] == ["pharmacy"]
        (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
        assert "only asked, or said back the question" in entry.reason
    # An answer that tells something stands as the model wrote it.
    told = lambda r: "The pharmacy opens at 8 [1]. Anything else?"  # noqa: E731
    out = _answered(told, "When does the pharmacy open?")
    assert out["answer"].startswith("The pharmacy opens at 8.")
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert "only asked" not in entry.reason


@pytest.mark.parametrize(
    ("answer", "question"),
    [
        ("Yes, the pharmacy is open.", "Is the pharmacy open?"),
        ("No, the pharmacy is open.", "Is the pharmacy open?"),
        ("Igen, van kápolna a kórházban.", "Van kápolna a kórházban?"),
        ("The pharmacy opens at 8.", "When does the pharmacy open?"),
        ("The pharmacy is on the ground floor.", "When does the pharmacy open?"),
        ("Parking is free on Sundays.", "Is parking free?"),
    ],
)
def test_R9_an_answer_that_adds_a_yes_a_figure_or_a_word_tells_something(
    answer: str, question: str
) -> None:
    from toolweave.llm.answer_rules import says_only_the_question

    assert not says_only_the_question(answer, question)
    assert says_only_the_question(question, question)


def test_R9_an_answer_without_the_figure_its_question_asks_for_is_replaced_by_the_reading() -> None:
    """A *when* / *how much* answer with no figure, where a passage gives one, told else."""
    for missing in (
        lambda r: "The pharmacy is on the ground floor [1].",  # where, asked when
        lambda r: "You can visit the pharmacy during its opening hours.",
        # a phone number says whom to call, not when (dev k065: a doctor's "when?"
        # answered with the number that books her)
        lambda r: "Call the pharmacy on +36 1 555 0100 for its hours [1].",
    ):
        out = _answered(missing, "When does the pharmacy open?")
        assert out["answer"] == "The pharmacy opens at 8."  # the offline reading's pick
        assert [s.document_id for s in out["sources"]] == ["pharmacy"]
        (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
        assert "gave no figure" in entry.reason
    out = _answered(lambda r: "Parking is paid at the gate [3].", "How much is parking?")
    assert out["answer"] == "Parking costs 500 Ft."


def test_R9_a_figure_the_reading_quotes_after_its_first_sentence_is_not_missed() -> None:
    """Fixed (dev k088): the price was the reading's third sentence, the answer named a leaflet."""
    from toolweave.llm.answer_rules import misses_the_figure

    rooms = [
        doc("rooms", "A single room can be asked for at extra cost, with its own bathroom."),
        doc("rooms", "The fee for a single room is in the fees leaflet.", sentence=2),
        doc("fees", "Single room: 14 000 Ft a night, breakfast included."),
        doc("house", "Quiet hours in the wards are 22:00-6:00."),
    ]
    asked = AnswerRequest("How much does a single room cost?", "en", "", rooms, ())
    assert misses_the_figure("The fee for a single room is in the fees leaflet [2].", asked)
    assert not misses_the_figure("A single room costs 14 000 Ft a night [3].", asked)
    # a figure about something else the question does not name is no figure it misses
    other = AnswerRequest("How much does a single room cost?", "en", "", [*rooms[:2], rooms[3]], ())
    assert not misses_the_figure("The fee for a single room is in the fees leaflet [2].", other)


def test_R9_a_when_answer_with_a_day_and_no_date_misses_the_date_the_reading_quotes() -> None:
    """Fixed (dev p019): "Wszystkich Świętych wypada w poniedziałek 2027." for a page giving
    "2027-11-01 (poniedziałek)": a weekday and a year counted as the figure asked for."""
    from toolweave.llm.answer_rules import misses_the_figure

    holidays = [
        doc("holidays", "2027-11-01 (Monday): All Saints' Day, a day off."),
        doc("holidays", "2027-11-11 (Thursday): Independence Day.", sentence=2),
        doc("office", "The reception is open 8:00-17:00."),
    ]
    asked = AnswerRequest("When is All Saints' Day?", "en", "", holidays, ())
    assert misses_the_figure("All Saints' Day falls on a Monday in 2027 [1].", asked)
    for dated in (
        "All Saints' Day is on 1 November 2027 [1].",
        "All Saints' Day is on November 1 [1].",
        "All Saints' Day is on 2027-11-01, a Monday [1].",
    ):
        assert not misses_the_figure(dated, asked)
    # a page with no date: a weekday answers a *when*
    hours = [doc("office", "The reception is open on Monday.")]
    asked = AnswerRequest("When is the reception open?", "en", "", hours, ())
    assert not misses_the_figure("The reception is open on Monday [1].", asked)


@pytest.mark.parametrize(
    ("answer", "question"),
    [
        ("The pharmacy opens at 8 [1].", "When does the pharmacy open?"),  # a figure
        ("The pharmacy opens on Mondays [1].", "When does the pharmacy open?"),  # a day
        ("The pharmacy is next to cardiology [1].", "Where is the pharmacy?"),  # not asked
        ("Cardiology is on the second floor [2].", "How do I find cardiology?"),
    ],
)
def test_R9_an_answer_with_a_figure_or_to_a_question_asking_none_stands(
    answer: str, question: str
) -> None:
    from toolweave.llm.answer_rules import misses_the_figure

    request = AnswerRequest(question, "en", "", CONTEXT, ())
    assert not misses_the_figure(answer, request)
    # the same context, asked when, an answer with no figure misses it
    asked = AnswerRequest("When does the pharmacy open?", "en", "", CONTEXT, ())
    assert misses_the_figure("The pharmacy is next to cardiology [1].", asked)
    # a context whose reading quotes no figure leaves the answer to the citation check
    bare = AnswerRequest(
        "When does the pharmacy open?", "en", "", [doc("pharmacy", "The pharmacy is open.")], ()
    )
    assert not misses_the_figure("The pharmacy is next to cardiology.", bare)


def test_R9_a_yes_that_says_the_question_back_is_replaced_by_what_the_context_says() -> None:
    """ "Yes, the pharmacy opens on weekdays." tells nothing the person can check."""
    for bare in (
        lambda r: "Yes, the pharmacy opens [1].",
        lambda r: "Yes. The pharmacy opens.",
    ):
        out = _answered(bare, "Does the pharmacy open?")
        assert out["answer"] == "The pharmacy opens at 8."  # the offline reading's pick
        (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
        assert "a yes or a no and the question said back" in entry.reason


@pytest.mark.parametrize(
    "answer",
    [
        "Yes, the pharmacy opens at 8 [1].",  # a figure of its own
        "No, the pharmacy is closed today [1].",  # words of its own
        "Does the pharmacy open? [1]",  # a question, no yes: another rule's
    ],
)
def test_R9_a_yes_with_something_of_its_own_is_no_bare_yes(answer: str) -> None:
    from toolweave.llm.answer_rules import says_yes_and_no_more

    request = AnswerRequest("Does the pharmacy open?", "en", "", CONTEXT, ())
    assert not says_yes_and_no_more(answer, request)
    assert says_yes_and_no_more("Yes, the pharmacy opens.", request)
    # nothing in the context about it: the bare yes stands (no reading to put instead)
    pool = AnswerRequest("Is there a pool?", "en", "", CONTEXT, ())
    assert not says_yes_and_no_more("Yes, there is a pool.", pool)
