"""The second example domain ``pomoc`` through the public API, offline (G1, §19 N1-N4).

One test per path a tool of the helpdesk takes: the plugin, context (R2), finished
answer (R3), streamed answer (R4), guaranteed context (R5), the gate on user data
(T4), the system filter (T3), the coordinator's forced and conditional subtasks
(C1, F1, K1, K3), the clarification round (Q1, Q2), the CLIENT AI tool (W3) and the
deep fallback the domain gets from ``documents_domain`` (D1, D6).
"""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from toolweave_pomoc.ai_tools import FillLeaveRequestFormTool

from toolweave import (
    ChatbotTool,
    ClientToolRegistry,
    ContextVerdict,
    Domain,
    OfflineAssistant,
    Plugin,
    TaskInfo,
    ToolCallContext,
    build_graph,
    checkpoint_serde,
    pending_clarification,
    reply,
    run_with_client_tools,
)
from toolweave.domains import load_domain
from toolweave.testing import FunctionAssistant

ANNA = {"employee_id": "E1001"}
"""A logged-in employee of the helpdesk's table: 17 days of leave left."""


@pytest.fixture(scope="module")
def pomoc() -> tuple[Domain, list[ChatbotTool[Any]]]:
    """The domain as the CLI loads it: through the plugin's entry point."""
    return load_domain("pomoc")


def _graph(pomoc: tuple[Domain, list[ChatbotTool[Any]]], **kwargs: Any) -> Any:
    domain, tools = pomoc
    return build_graph(domain, tools, assistant=OfflineAssistant(), **kwargs)


def _ask(graph: Any, question: str, **inputs: Any) -> dict[str, Any]:
    out: dict[str, Any] = graph.invoke({"messages": [("human", question)], **inputs})
    return out


def _verdicts(out: dict[str, Any], tool: str) -> list[str]:
    return [entry.verdict for entry in out["ledger"] if entry.tool == tool]


def _tool(pomoc: tuple[Domain, list[ChatbotTool[Any]]], name: str) -> ChatbotTool[Any]:
    return next(tool for tool in pomoc[1] if tool.name == name)


def test_W5_pomoc_plugin_provides_its_domain_golden_file_and_client_tool(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    (entry,) = entry_points(group="toolweave.plugins", name="pomoc")
    plugin = entry.load()()
    assert isinstance(plugin, Plugin)
    assert set(plugin.domains) == {"pomoc"}
    assert plugin.golden_files["pomoc"].name == "golden.jsonl"
    assert [type(tool) for tool in plugin.ai_tools] == [FillLeaveRequestFormTool]
    domain, tools = pomoc
    assert domain.default_retrieval_tool == "pomoc_search"
    names = {tool.name for tool in tools}
    assert {
        "holiday_calendar",
        "leave_balance",
        "it_account_help",
        "phone_directory",
        "invoice_approval",
        "leave_planner",
        "fill_leave_request_form",
    } <= names


def test_G1_pomoc_golden_file_alternates_dev_and_heldout_lines() -> None:
    from toolweave_pomoc.plugin import GOLDEN_FILE

    rows = [json.loads(line) for line in Path(GOLDEN_FILE).read_text("utf-8").splitlines()]
    assert len(rows) >= 80
    assert [row["split"] for row in rows] == [
        "dev" if number % 2 else "heldout" for number in range(1, len(rows) + 1)
    ]
    assert {row["lang"] for row in rows} == {"pl", "en"}


def test_T4_leave_balance_needs_employee_id(pomoc: tuple[Domain, list[ChatbotTool[Any]]]) -> None:
    graph = _graph(pomoc)
    logged_in = _ask(graph, "Ile dni urlopu mi zostało?", user_data=ANNA)
    assert "1:leave_balance" in logged_in["activated"]
    assert "zostało 17 dni urlopu" in logged_in["answer"]
    anonymous = _ask(graph, "Ile dni urlopu mi zostało?")
    assert _verdicts(anonymous, "leave_balance") == ["refused: eligibility"]
    assert "17 dni" not in anonymous["answer"]


def test_R5_leave_balance_is_guaranteed_context(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    tool = _tool(pomoc, "leave_balance")
    ctx = ToolCallContext(
        task=TaskInfo(task_no="1", task_prompt="saldo"), text="saldo", user_data=ANNA
    )
    result = tool.execute(tool.request_model(), ctx)
    assert result is not None
    assert result.mode == "guaranteed_context"
    assert "17" in result.context_text()


def test_R2_holiday_calendar_gives_context_for_a_named_holiday(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    out = _ask(_graph(pomoc), "Kiedy jest Boże Ciało w 2027 roku?")
    assert "1:holiday_calendar" in out["activated"]
    assert "2027-05-27" in out["answer"]
    assert any(doc.document_id == "kalendarz-swiat" for doc in out["documents"])


def test_R3_phone_directory_finishes_the_answer(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    out = _ask(_graph(pomoc), "Jaki jest numer wewnętrzny do działu kadr?")
    assert out["answer"] == "Dział kadr: telefon wewnętrzny 2200, e-mail kadry@example.pl."
    assert [source.document_id for source in out["sources"]] == ["kontakty"]


def test_T3_invoice_approval_runs_only_where_the_system_filter_allows(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    graph = _graph(pomoc)
    question = "Kto akceptuje fakturę na 12 000 zł netto?"
    workflow = _ask(graph, question, systems=["obieg"])
    assert workflow["answer"] == (
        "Fakturę na 12 000 zł netto akceptuje kolejno: kierownik działu, dyrektor finansowy."
    )
    elsewhere = _ask(graph, question, systems=["hr"])
    assert _verdicts(elsewhere, "invoice_approval") == ["refused: system"]


def test_T3_A5_the_documents_answer_under_a_system_filter_that_skips_a_tool(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    """The document tools of ``documents_domain`` are ``ALL``: a filter never hides the pages."""
    out = _ask(_graph(pomoc), "Kto akceptuje fakturę na 12 000 zł netto?", systems=["hr"])
    assert _verdicts(out, "invoice_approval") == ["refused: system"]
    assert "pomoc_search" in {key.split(":")[-1] for key in out["activated"]}
    assert "dyrektor finansowy" in out["answer"]


def test_Q1_it_account_help_asks_which_account_then_streams_the_steps(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    graph = _graph(pomoc, checkpointer=InMemorySaver(serde=checkpoint_serde()))
    config = {"configurable": {"thread_id": "password"}}
    graph.invoke({"messages": [("human", "Nie pamiętam hasła.")]}, config)
    asked = pending_clarification(graph, config)
    assert asked is not None
    assert asked["question"] == "Którego konta dotyczy pytanie: poczta e-mail, VPN czy ERP?"
    assert list(asked["choices"]) == ["poczta e-mail", "VPN", "ERP"]
    out = reply(graph, config, "2")  # the number of an offered choice: VPN
    assert "Microsoft Authenticator" in out["answer"]


def test_R4_it_account_help_streams_its_answer(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    tool = _tool(pomoc, "it_account_help")
    chunks: list[str] = []
    ctx = ToolCallContext(
        task=TaskInfo(task_no="1", task_prompt="hasło ERP"),
        text="Zapomniałem hasła do ERP",
        stream_answer=lambda parts: chunks.extend(parts),
    )
    result = tool.execute(tool.request_model(), ctx)
    assert result is not None
    assert result.mode == "answered"
    assert "Konta ERP" in "".join(chunks)


def test_K1_leave_planner_checks_the_balance_when_the_leave_costs_days(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    question = "Chcę wziąć urlop od 8 do 12 listopada 2027, czy wystarczy mi dni?"
    out = _ask(_graph(pomoc), question, user_data=ANNA)
    assert out["activated"] == ["1.1:holiday_calendar", "1.2:leave_balance", "1:leave_planner"]
    assert "(do wzięcia urlopu): 4" in out["answer"]
    assert "Wystarczy: zostanie 13 dni urlopu." in out["answer"]


def test_K3_leave_planner_skips_the_balance_when_the_period_is_all_days_off(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    question = "Czy muszę brać urlop od 24 do 26 grudnia 2027 i czy mam na to dość dni?"
    out = _ask(_graph(pomoc), question, user_data=ANNA)
    assert out["activated"] == ["1.1:holiday_calendar", "1:leave_planner"]
    assert "Nie trzeba brać urlopu" in out["answer"]


def test_W3_fill_leave_request_form_runs_in_the_client_only(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    question = "Wypełnij mi wniosek urlopowy od 2 do 6 sierpnia 2027."
    graph = _graph(pomoc, checkpointer=InMemorySaver(serde=checkpoint_serde()))
    without_client = graph.invoke(
        {"messages": [("human", question)]}, {"configurable": {"thread_id": "cli"}}
    )
    assert "__interrupt__" not in without_client
    assert not any(n.endswith("fill_leave_request_form") for n in without_client["activated"])
    client = ClientToolRegistry()
    client.register("fill_leave_request_form", lambda _input: '{"filled": true}')
    out = run_with_client_tools(
        graph, {"messages": [("human", question)]}, {"configurable": {"thread_id": "page"}}, client
    )
    assert "Wypełniłem wniosek urlopowy HR-01 na stronie" in out["answer"]


def test_D6_a_short_context_sends_the_neighbor_search_to_the_next_page(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]],
) -> None:
    verdicts = iter([ContextVerdict(sufficient=False, missing=("zaległy urlop",))])
    assistant = FunctionAssistant(
        judge=lambda question, documents, guaranteed: next(verdicts, True),
        read=lambda question, page: "30 września" if "30 września" in page else None,
    )
    domain, tools = pomoc
    # "termin" is on a page the first retrieval left out: the gatekeeper is asked (A10)
    question = "Co z urlopem z zeszłego roku, jaki jest termin?"
    graph = build_graph(domain, tools, assistant=assistant, deep_fallback_llm_calls=6)  # reads
    out = graph.invoke(question)
    read = [e.tool for e in out["ledger"] if e.kind.value == "tool_result" and e.task_no == "1.1"]
    assert read == ["pomoc_neighbor_search"]  # the neighbour pages were read first (D6)
    # D8: what it read ("30 września") the retrieved context already says, so it found
    # nothing and the conditional full search runs (K3)
    assert out["activated"] == ["1:pomoc_search", "1.2:pomoc_context_search"]
    decided = [e.verdict for e in out["ledger"] if e.kind.value == "conditional"]
    assert decided == ["run"]
    # the full search's read comes back as the page's sentence saying it (R9)
    assert out["answer"].splitlines()[0].endswith("do 30 września następnego roku.")


NODE_HARNESS = """
const fields = {"leave-start": {value: ""}, "leave-end": {value: ""}, "leave-type": {value: ""}};
for (const f of Object.values(fields)) { f.dispatchEvent = () => true; }
global.Event = class { constructor(type) { this.type = type; } };
global.document = { getElementById: (id) => fields[id] || null };
const registered = {};
global.AiTools = { register: (id, impl) => { registered[id] = impl; } };
require(process.argv[1]);
const out = registered["fill_leave_request_form"].execute(process.argv[2]);
console.log(JSON.stringify({out: JSON.parse(out), start: fields["leave-start"].value}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_W3_the_leave_form_script_fills_the_form_fields_in_the_page() -> None:
    from toolweave_pomoc.ai_tools import FillLeaveRequestFormTool

    script = Path(inspect.getfile(FillLeaveRequestFormTool)).with_name("js")

    def run(tool_input: dict[str, str]) -> dict[str, Any]:
        done = subprocess.run(
            [
                "node",
                "-e",
                NODE_HARNESS,
                str(script / "fill_leave_request_form.js"),
                json.dumps(tool_input),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    result = run({"start_date": "2027-08-02", "end_date": "2027-08-06"})
    assert result["out"] == {"filled": True, "start_date": "2027-08-02", "end_date": "2027-08-06"}
    assert result["start"] == "2027-08-02"
    assert run({})["out"]["filled"] is False  # nothing to fill is not "filled"


def test_W3_pomoc_chat_page_carries_form_hr01_and_the_script_that_fills_it() -> None:
    from starlette.testclient import TestClient
    from toolweave_pomoc.app import app

    client = TestClient(app)
    page = client.get("/chat")
    assert page.status_code == 200
    for field in ("leave-start", "leave-end", "leave-type"):
        assert f'id="{field}"' in page.text
    assert 'src="/chat/tools/fill_leave_request_form.js"' in page.text
    script = client.get("/chat/tools/fill_leave_request_form.js")
    assert 'AiTools.register("fill_leave_request_form"' in script.text


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Nie pamiętam hasła.", True),
        ("My account is locked.", True),
        ("Jaki jest adres serwera VPN?", False),  # names an account, asks about no access
        ("Ile kosztuje nowy laptop?", False),
    ],
)
def test_Q1_it_account_help_asks_only_about_getting_into_an_account(
    pomoc: tuple[Domain, list[ChatbotTool[Any]]], text: str, asks: bool
) -> None:
    """The clarification page's pattern: not about its subject is not mine (R1)."""
    tool = _tool(pomoc, "it_account_help")
    ctx = ToolCallContext(task=TaskInfo(task_no="1", task_prompt=text), text=text)
    result = tool.execute(tool.request_model(), ctx)
    if asks:
        assert result is not None
        assert result.mode == "clarification"
    else:
        assert result is None
