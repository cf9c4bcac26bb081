"""The nineteenth new user: Telemar, a European Portuguese telecom operator's support.

``tests/newuser19_domain`` is the domain (eight pt-PT pages with a front matter): a document
search (context), ``estado_servico`` (the network status by postcode, asked for when
missing, Q1, T6), ``mudar_tarifario`` (**acts**: changes the customer's plan once per
idempotency key, logged-in customers only, T4), ``fatura_atual`` (the customer's invoice,
guaranteed context, T4, R5) and ``linhas_apoio`` (the phone numbers, a finished answer, R3).
The back end counts every call and keeps one change per key: the worst bug is a plan changed
twice.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from newuser19_domain import BACKEND, STOPWORDS, telemar_domain_and_tools
from newuser19_domain.tools import MudarTarifario

from toolweave import NothingPendingError, RunContext, build_graph, pending_clarification, reply
from toolweave.tools.language import detect_language, own_language

ROOT = Path(__file__).resolve().parents[1]
CUSTOMER = RunContext(user_data={"cliente_id": "C-1001"})
_BUILT: dict[str, Any] = {}


def _domain() -> tuple[Any, list[Any]]:
    if "domain" not in _BUILT:  # ingest once per session
        _BUILT["domain"] = telemar_domain_and_tools()
    return _BUILT["domain"]


@pytest.fixture(autouse=True)
def backend() -> Iterator[Any]:
    BACKEND.reset()
    BACKEND.delay = 0.0
    yield BACKEND
    BACKEND.reset()
    BACKEND.delay = 0.0


@pytest.fixture
def graph() -> Any:
    domain, tools = _domain()
    return build_graph(domain, tools, checkpointer=InMemorySaver())


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _ask(graph: Any, text: str, thread: str = "t1", **kw: Any) -> dict[str, Any]:
    context = kw.pop("context", CUSTOMER)
    message = HumanMessage(text, **kw)
    return graph.invoke({"messages": [message]}, _config(thread), context=context)


def _lang(out: dict[str, Any]) -> str:
    return next(e.verdict for e in out["ledger"] if e.kind.value == "normalized")


# --- T10: Portuguese is the domain's language ------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Vou de férias a Espanha, o roaming é pago?",
        "Estou sem internet em casa.",
        "As lojas abrem ao domingo?",
        "Vou mudar de casa, o que tenho de fazer?",
        "Perdi o telemóvel",
    ],
)
def test_T10_N1_a_portuguese_message_is_portuguese_not_hungarian_or_english(
    graph: Any, question: str
) -> None:
    out = _ask(graph, question, thread=question)
    assert _lang(out) == "pt"
    said = out.get("answer") or out["__interrupt__"][0].value["question"]
    for foreign in ("Nem találtam", "Kérem", "I found no information"):
        assert foreign not in said


@pytest.mark.parametrize(
    "question", ["What does the Max plan cost?", "How do I cancel my contract?"]
)
def test_T10_english_questions_in_a_portuguese_domain_stay_english(
    graph: Any, question: str
) -> None:
    assert _lang(_ask(graph, question, thread=question)) == "en"


def test_T10_general_a_domains_stop_words_are_evidence_for_a_language_no_kit_knows() -> None:
    # a made-up language: its function words are what the domain names as stop words
    own = own_language("xx", ["ka", "lo", "mi", "te"])
    assert own is not None
    assert detect_language("mi lo ka vendo te á", own).lang == "xx"
    assert detect_language("mi lo ka vendo te á").lang != "xx"
    assert own_language("en", ["the"]) is None  # a kit language needs no evidence of its own
    assert detect_language("What is a plan?", own_language("pt", STOPWORDS)).lang == "en"


def test_T10_a_kit_language_on_one_accent_does_not_replace_the_domains_language(
    graph: Any,
) -> None:
    out = _ask(graph, "Perdi o telemóvel", thread="lost")
    assert _lang(out) == "pt"
    assert "16100" in out["answer"]


# --- S5, Q6, A9: the plan is changed once ------------------------------------------------


def test_S5_plan_change_made_once_when_message_resent(graph: Any, backend: Any) -> None:
    first = _ask(graph, "Quero mudar para o plano Max.", id="m1")
    assert first["answer"].startswith("Feito: o seu tarifário foi alterado para o plano Max")
    _ask(graph, "Quero mudar para o plano Max.", id="m1")  # the same message, its id
    _ask(graph, "quero mudar para o plano max")  # retyped, lower case, no full stop
    assert [c.plan for c in backend.changes] == ["Max"]


@pytest.mark.parametrize("follow_up", ["e para o plano Plus?", "E para o Base?", "e o Max?"])
def test_S5_A9_a_follow_up_after_a_plan_change_changes_nothing_more(
    graph: Any, backend: Any, follow_up: str
) -> None:
    _ask(graph, "Quero mudar para o plano Max.")
    out = _ask(graph, follow_up)
    assert "mudar_tarifario" not in str(out["activated"])
    assert "Feito" not in (out.get("answer") or "")
    assert [c.plan for c in backend.changes] == ["Max"]


def test_A9_N1_a_follow_ups_only_word_of_the_act_being_a_domain_stop_word_acts_not(
    backend: Any,
) -> None:
    domain, tools = _domain()

    class Worded(MudarTarifario):  # "para" in its routing question, a stop word of the store
        executable_instruction = (
            "mudar_tarifario: true when the user asks to change their plan (passar para o plano)"
        )

    own = [t for t in tools if t.name != "mudar_tarifario"] + [Worded()]
    graph = build_graph(domain, own, checkpointer=InMemorySaver())
    _ask(graph, "Quero passar para o plano Plus.")
    out = _ask(graph, "E para o Base?")
    held = [e.reason for e in out["ledger"] if e.verdict == "a9_acting_in_doubt"]
    assert held == [held[0]], [str(e) for e in out["ledger"]]
    assert "('Base?')" in held[0]  # the person's own words, without the stop words
    assert [c.plan for c in backend.changes] == ["Plus"]


def test_A9_a_tool_that_acts_needs_the_act_named_even_where_its_examples_explain_the_task(
    backend: Any,
) -> None:
    # a neutral tool whose examples explain "para o plano Plus" but whose name and routing
    # question hold neither word: the words are arguments of the act, not the act
    domain, tools = _domain()
    graph = build_graph(domain, tools)
    out = graph.invoke({"messages": [("human", "para o plano Plus?")]}, context=CUSTOMER)
    assert "mudar_tarifario" not in str(out["activated"])
    assert backend.changes == []


def test_S5_Q6_two_concurrent_invokes_of_one_message_change_the_plan_once(
    graph: Any, backend: Any
) -> None:
    backend.delay = 0.3
    outs: list[dict[str, Any]] = []

    def run() -> None:
        outs.append(_ask(graph, "Quero mudar para o plano Plus.", thread="c1", id="same"))

    workers = [threading.Thread(target=run) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(outs) == 2
    assert len(backend.changes) == 1
    assert len(backend.calls) == 1


def test_Q1_S5_a_resumed_clarification_changes_the_plan_once(graph: Any, backend: Any) -> None:
    out = _ask(graph, "Quero mudar de plano.", thread="q1")
    assert "answer" not in out
    asked = pending_clarification(graph, _config("q1"))
    assert asked is not None
    assert asked["question"] == "Qual plano?"
    assert asked["choices"] == ["Base", "Plus", "Max"]
    done = reply(graph, _config("q1"), "3", context=CUSTOMER)
    assert "plano Max" in done["answer"]
    _ask(graph, "3", thread="q1")  # the reply sent again as a message
    _ask(graph, "Max", thread="q1")
    assert [c.plan for c in backend.changes] == ["Max"]


def test_Q1_S5_the_question_sent_again_while_the_plan_is_asked_changes_nothing(
    graph: Any, backend: Any
) -> None:
    _ask(graph, "Quero mudar de plano.", thread="q2")
    _ask(graph, "Quero mudar de plano.", thread="q2")  # sent again while it waits
    assert pending_clarification(graph, _config("q2")) is not None
    reply(graph, _config("q2"), "Plus", context=CUSTOMER)
    assert [c.plan for c in backend.changes] == ["Plus"]


@pytest.mark.parametrize(
    "question",
    [
        "Quanto custa o plano Max?",
        "A mudança de plano é gratuita?",
        "Quando fica ativa a mudança para um plano inferior?",
        "Devo mudar para o plano Max?",
        "Posso mudar de plano a meio do mês?",
        "Vale a pena mudar para o Max?",
    ],
)
def test_A9_questions_about_plans_change_no_plan_and_ask_nothing(
    graph: Any, backend: Any, question: str
) -> None:
    out = _ask(graph, question, thread=question)
    assert "__interrupt__" not in out
    assert backend.changes == []


@pytest.mark.xfail(
    strict=True,
    reason="A9 gap: ADVICE_QUESTION knows should/must words of en, pl, fr, de, hu only; "
    "'Devo ...?' (pt) acts unless the tool lists such questions as not_for",
)
def test_A9_an_advice_question_without_a_not_for_changes_no_plan(backend: Any) -> None:
    domain, tools = _domain()

    class Bare(MudarTarifario):  # the same tool without the advice questions as not_for
        not_for = ("Quanto custa o plano Max?",)

    graph = build_graph(domain, [t for t in tools if t.name != "mudar_tarifario"] + [Bare()])
    graph.invoke({"messages": [("human", "Devo mudar para o plano Max?")]}, context=CUSTOMER)
    assert backend.changes == []


def test_T4_without_login_no_plan_is_changed_nor_asked_for(graph: Any, backend: Any) -> None:
    out = _ask(graph, "Quero mudar para o plano Max.", thread="anon", context=None)
    assert "__interrupt__" not in out
    assert "mudar_tarifario" not in str(out["activated"])
    assert backend.changes == []


def test_S5_ainvoke_changes_the_plan_once_and_the_resend_is_said_to_be_done(
    graph: Any, backend: Any
) -> None:
    async def both() -> list[dict[str, Any]]:
        inputs = {"messages": [HumanMessage("Quero mudar para o plano Base.", id="a1")]}
        first = await graph.ainvoke(inputs, _config("async"), context=CUSTOMER)
        second = await graph.ainvoke(inputs, _config("async"), context=CUSTOMER)
        return [first, second]

    first, second = asyncio.run(both())
    assert "plano Base" in first["answer"]
    assert [c.plan for c in backend.changes] == ["Base"]
    assert "plano Base" in second["answer"]


# --- Q1, T6: the network status needs a postcode ---------------------------------------


def test_T6_the_postcode_is_filled_from_the_message(graph: Any) -> None:
    out = _ask(graph, "Há alguma avaria no código postal 1000-100?", thread="s1")
    assert "avaria na rede fixa em Lisboa" in out["answer"]
    assert any(s.name == "Estado da rede" for s in out["sources"])


def test_Q1_T6_a_missing_postcode_is_asked_for_and_the_reply_fills_it(graph: Any) -> None:
    out = _ask(graph, "Estou sem internet em casa.", thread="s2")
    asked = out["__interrupt__"][0].value
    assert asked["question"] == "Qual código postal (por exemplo 1000-001)?"
    assert asked["choices"] == []
    done = reply(graph, _config("s2"), "4700-123", context=CUSTOMER)
    assert "4700-123" in done["answer"]
    assert "não há nenhuma avaria" in done["answer"]


# --- R3, R5, T4: the other tools ---------------------------------------------------------


def test_R3_the_phone_numbers_are_a_finished_answer_with_their_source(graph: Any) -> None:
    out = _ask(graph, "Qual é o número do apoio técnico?", thread="r3")
    assert out["activated"] == ["1:linhas_apoio"]
    assert "16100" in out["answer"]
    assert [s.name for s in out["sources"]] == ["Contactos"]


def test_R5_T4_the_invoice_reaches_a_logged_in_customer_only(graph: Any) -> None:
    out = _ask(graph, "Quanto é a minha última fatura?", thread="r5")
    assert "24,99 euros" in out["answer"]
    anon = _ask(graph, "Quanto é a minha última fatura?", thread="r5b", context=None)
    assert "24,99" not in anon["answer"]


# --- P1, P4: streaming -------------------------------------------------------------------


def test_P1_P4_the_stream_says_progress_in_portuguese(graph: Any) -> None:
    phrases: list[str] = []
    for mode, data in graph.stream(
        {"messages": [("human", "Há alguma avaria no código postal 4000-001?")]},
        _config("p1"),
        context=CUSTOMER,
        stream_mode=["custom", "messages"],
    ):
        if mode == "custom" and data.get("type") == "tool_progress":
            phrases.append(data["phrase"])
    assert "A verificar o estado da rede" in phrases
    assert "A procurar nos documentos" in phrases


# --- N2: the CLI through an entry point ---------------------------------------------------


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    plugin = tmp_path / "plugin" / "toolweave_telemar-0.0.0.dist-info"
    plugin.mkdir(parents=True, exist_ok=True)
    (plugin / "METADATA").write_text("Metadata-Version: 2.1\nName: toolweave-telemar\nVersion: 0\n")
    (plugin / "entry_points.txt").write_text(
        "[toolweave.plugins]\ntelemar = newuser19_domain:plugin\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TOOLWEAVE_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), str(plugin.parent)])
    env["TOOLWEAVE_DATA_DIR"] = str(tmp_path / "data")
    command = [sys.executable, "-m", "toolweave.cli", "ask", "--domain", "telemar", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_N2_T10_toolweave_ask_answers_in_portuguese_with_its_sources(tmp_path: Path) -> None:
    done = _cli(tmp_path, "Quanto custa o roaming fora da Europa?")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("as respostas vêm do modelo offline")
    assert "Fontes:" in done.stdout
    assert "Roaming no estrangeiro" in done.stdout
    assert "Mit tudunk" not in done.stdout


def test_N2_Q1_toolweave_ask_asks_for_the_plan_and_the_reply_changes_it(tmp_path: Path) -> None:
    me = ["--user-data", '{"cliente_id": "C-7"}']
    asked = _cli(tmp_path, *me, "--thread", "cli1", "Quero mudar de plano.")
    assert "Qual plano?" in asked.stdout, asked.stdout + asked.stderr
    assert "--thread cli1 --domain telemar" in asked.stdout
    done = _cli(tmp_path, *me, "--thread", "cli1", "Plus")
    assert "alterado para o plano Plus" in done.stdout, done.stdout + done.stderr


def test_P4_an_english_question_reads_the_search_lines_in_english_not_the_domains_language(
    graph: Any,
) -> None:
    # the domain gives its search phrases in Portuguese only; the library has them in English
    phrases: list[str] = []
    for _mode, data in graph.stream(
        {"messages": [("human", "What does the Max plan cost?")]},
        _config("p4"),
        stream_mode=["custom"],
    ):
        if data.get("type") == "tool_progress":
            phrases.append(data["phrase"])
    assert "Searching the documents" in phrases, phrases
    assert not [p for p in phrases if p.startswith("A procurar")]


def test_P4_general_the_persons_language_in_any_catalog_comes_before_another_language() -> None:
    from toolweave.tools.progress import progress_phrase

    domain = {"FOUND": {"xx": "Found-xx: {detail}"}, "OWN": {"xx": "Own-xx"}}
    assert progress_phrase("search", "FOUND", "3", "xx", domain) == "Found-xx: 3"
    assert progress_phrase("search", "FOUND", "3", "hu", domain).startswith("Talált")
    assert progress_phrase("search", "OWN", None, "en", domain) == "Own-xx"  # no other has it


def test_S5_two_concurrent_invokes_without_message_ids_change_the_plan_once(
    graph: Any, backend: Any
) -> None:
    backend.delay = 0.3
    workers = [
        threading.Thread(target=_ask, args=(graph, "Quero mudar para o plano Max.", "c2"))
        for _ in range(2)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert [c.plan for c in backend.changes] == ["Max"]


def test_Q1_S5_the_same_reply_sent_twice_at_once_changes_the_plan_once(
    graph: Any, backend: Any
) -> None:
    _ask(graph, "Quero mudar de plano.", thread="q3")
    backend.delay = 0.3
    errors: list[BaseException] = []

    def answer() -> None:
        try:
            reply(graph, _config("q3"), "Plus", context=CUSTOMER)
        except NothingPendingError as error:  # the second may be told nothing waits
            errors.append(error)

    workers = [threading.Thread(target=answer) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert [c.plan for c in backend.changes] == ["Plus"]
    assert len(backend.calls) == 1
    assert len(errors) <= 1


def test_Q6_S5_a_crash_right_after_the_change_is_finished_under_the_same_key(
    graph: Any, backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolweave import resume_interrupted

    real = backend.change_plan
    crashed: list[str] = []

    def change_then_die(key: str, customer: str, plan: str) -> Any:
        done = real(key, customer, plan)
        if not crashed:
            crashed.append(key)
            raise KeyboardInterrupt  # the process "dies" after the effect, before the step
        return done

    monkeypatch.setattr(backend, "change_plan", change_then_die)
    with pytest.raises(KeyboardInterrupt):
        _ask(graph, "Quero mudar para o plano Plus.", thread="crash")
    out = resume_interrupted(graph, _config("crash"), context=CUSTOMER)
    assert "plano Plus" in out["answer"]
    assert backend.calls == [crashed[0], crashed[0]]  # at least once, one key (Q6)
    assert [c.plan for c in backend.changes] == ["Plus"]


@pytest.mark.parametrize(
    ("follow_up", "resolved"),
    [
        ("E o Plus?", "Quanto custa o plano Plus?"),
        ("e o plano Base?", "Quanto custa o plano Base?"),
    ],
)
def test_A1_a_name_in_a_follow_up_takes_the_place_of_the_earlier_name(
    graph: Any, follow_up: str, resolved: str
) -> None:
    _ask(graph, "Quanto custa o plano Max?", thread=follow_up, context=None)
    out = _ask(graph, follow_up, thread=follow_up, context=None)
    normalized = next(e for e in out["ledger"] if e.kind.value == "normalized")
    assert f"question: {resolved!r}" in normalized.reason
    assert "19,99" in out["answer"] if "Plus" in resolved else "9,99" in out["answer"]


def test_A1_general_a_capitalised_word_after_the_first_takes_a_names_place() -> None:
    from toolweave.llm.offline_followup import resolve_followup

    # the name after a function word: "Sud" takes the place of "Nord", not of "ward"
    assert resolve_followup("So the Sud?", "When does the ward Nord open?") == (
        "When does the ward Sud open?"
    )
    assert resolve_followup("And the Plus?", "How much is the Max plan?") == (
        "How much is the Plus plan?"
    )


@pytest.mark.parametrize("after", ["Desculpe, queria dizer o Plus.", "Afinal quero o Plus."])
def test_S5_Q2_a_correction_after_the_change_changes_nothing_more(
    graph: Any, backend: Any, after: str
) -> None:
    _ask(graph, "Quero mudar para o plano Max.", thread=after)
    _ask(graph, after, thread=after)
    assert [c.plan for c in backend.changes] == ["Max"]


@pytest.mark.parametrize("message", ["Esqueça, obrigado.", "o último"])
def test_Q2_S5_a_message_the_plan_question_cannot_use_changes_no_plan(
    graph: Any, backend: Any, message: str
) -> None:
    _ask(graph, "Quero mudar de plano.", thread=message)
    _ask(graph, message, thread=message)
    assert backend.changes == []


@pytest.mark.parametrize(
    "question", ["Quanto custa o Max?", "O Max inclui roaming?", "What does Max include?"]
)
def test_Q2_A9_S5_a_question_about_a_choice_while_the_plan_is_asked_changes_no_plan(
    graph: Any, backend: Any, question: str
) -> None:
    _ask(graph, "Quero mudar de plano.", thread=question)
    out = _ask(graph, question, thread=question)
    closed = [e for e in out["ledger"] if e.kind.value == "clarification"]
    assert [e.verdict for e in closed] == ["closed"]
    assert backend.changes == []


@pytest.mark.parametrize("answer", ["Max?", "Max, por favor", "3"])
def test_Q2_a_choice_alone_still_replies_and_changes_the_plan_once(
    graph: Any, backend: Any, answer: str
) -> None:
    _ask(graph, "Quero mudar de plano.", thread=answer)
    _ask(graph, answer, thread=answer)
    assert [c.plan for c in backend.changes] == ["Max"]


def test_Q2_general_a_question_that_says_more_than_the_choice_is_a_new_question() -> None:
    from toolweave.llm.next_message import next_message_kind

    choices = ["Central", "Riverside"]
    assert next_message_kind("How late is Central open?", "Which branch?", choices) == (
        "new_question"
    )
    assert next_message_kind("The Central one?", "Which branch?", choices) == "reply"
    assert next_message_kind("Central", "Which branch?", choices) == "reply"


def test_D1_T10_the_deep_search_pieces_of_a_portuguese_question_are_no_kit_languages(
    graph: Any,
) -> None:
    details: list[str] = []
    for _mode, data in graph.stream(
        {"messages": [("human", "Vou de férias a Espanha, o roaming é pago?")]},
        _config("d1"),
        stream_mode=["custom"],
    ):
        if data.get("type") == "tool_progress" and data["event"] == "SEARCHING_FOR":
            details.append(data["phrase"])
    assert details, "the gatekeeper found the context short: the deep search ran"
    assert all(p.startswith("A procurar nos documentos: ") for p in details), details
    assert not [p for p in details if "What is known" in p or "Mit tudunk" in p]


def test_D1_T10_general_a_piece_in_a_language_no_kit_knows_is_the_word_alone() -> None:
    from toolweave.llm.offline import missing_template

    own = own_language("xx", ["ka", "lo", "mi", "te"])
    assert missing_template("mi lo ka vendo te?", own) == "{word}"
    assert missing_template("What is the price of the plan?", own).startswith("What is known")
    assert missing_template("Que sait-on du prix ?", own_language("fr", ["du"])).startswith(
        "Que sait-on"
    )


def test_T4_Q2_a_reply_without_user_data_names_the_tool_that_asked_only(tmp_path: Path) -> None:
    asked = _cli(
        tmp_path, "--user-data", '{"cliente_id": "C-7"}', "--thread", "r1", "Quero mudar de plano."
    )
    assert "Qual plano?" in asked.stdout, asked.stdout + asked.stderr
    done = _cli(tmp_path, "--thread", "r1", "Max")  # the reply, without --user-data
    refused = [line for line in done.stdout.splitlines() if "não chegou a" in line]
    assert refused, done.stdout
    assert "mudar_tarifario" in refused[0]
    assert "fatura_atual" not in refused[0]  # gated too, but it asked nothing
