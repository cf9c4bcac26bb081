"""The hospital's AI tools, one per scope (W1-W3): routing offline, the pause, the JS script."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from toolweave import ClientToolRegistry, OfflineAssistant, build_graph, run_with_client_tools
from toolweave.domains import load_domain
from toolweave.state.serde import checkpoint_serde
from toolweave.tools.ai.base import AiToolScope
from toolweave.tools.ai.orchestration import ai_definitions, client_scripts
from toolweave_korhaz.ai_tools import CheckAppointmentSlotsTool, FormatDateTool

QUESTION = "Szeretnék időpontot kérni a kardiológiára hétfőre"


def _graph() -> Any:
    domain, tools = load_domain("korhaz")
    saver = InMemorySaver(serde=checkpoint_serde())
    return build_graph(domain, tools, assistant=OfflineAssistant(), checkpointer=saver)


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_W3_one_tool_of_each_scope_with_client_scripts_shipped() -> None:
    _, tools = load_domain("korhaz")
    found = {d.id: d for d in ai_definitions(tools)}
    assert {d.scope for d in found.values()} == set(AiToolScope)
    script = found["fill_appointment_form"].client_script_source() or ""
    assert 'AiTools.register("fill_appointment_form"' in script
    assert "appointment-department" in script
    assert "appointment-day" in script
    assert found["check_appointment_slots"].client_script_source() is None
    assert 'AiTools.register("format_date"' in (found["format_date"].client_script_source() or "")
    assert sorted(client_scripts(tools)) == ["fill_appointment_form", "format_date"]


def test_W3_offline_ask_without_a_client_never_pauses_on_the_form() -> None:
    out = _graph().invoke({"messages": [("human", QUESTION)]}, _config("cli"))
    assert "__interrupt__" not in out
    assert "1:check_appointment_slots" in out["context_buffer"]
    slots = json.loads(out["context_buffer"]["1:check_appointment_slots"][0].context)
    assert slots["department"] == "Cardiology"
    assert slots["days"] == [
        {
            "day": "Monday",
            "hours": "9:00-13:00",
            "slots": [f"{h:02d}:{m:02d}" for h in range(9, 13) for m in (0, 30)],
        }
    ]
    skipped = [
        e for e in out["ledger"] if e.tool == "fill_appointment_form" and e.verdict == "skipped"
    ]
    assert skipped


def test_W4_the_page_fills_the_form_and_the_run_continues() -> None:
    form: dict[str, Any] = {}

    def fill(input: str) -> str:
        form.update(json.loads(input))
        return json.dumps({"filled": True, **form})

    client = ClientToolRegistry()
    client.register("fill_appointment_form", fill)
    out = run_with_client_tools(
        _graph(), {"messages": [("human", QUESTION)]}, _config("web"), client
    )
    assert form == {"department": "Kardiológia", "day": "Monday"}
    assert json.loads(out["context_buffer"]["1:fill_appointment_form"][0].context)["filled"] is True
    assert out["answer"]


def test_W1_server_tools_of_the_hospital() -> None:
    slots = json.loads(
        CheckAppointmentSlotsTool().execute('{"department": "Neurology", "day": "Tuesday"}')
    )
    assert slots["days"] == [{"day": "Tuesday", "hours": None, "slots": []}]
    unknown = json.loads(CheckAppointmentSlotsTool().execute('{"department": "Astrology"}'))
    assert "unknown department" in unknown["error"]
    hu = json.loads(FormatDateTool().execute('{"date": "2026-12-24", "locale": "hu-HU"}'))
    assert hu["text"] == "2026. december 24., csütörtök"
    en = json.loads(FormatDateTool().execute('{"date": "2026-12-24", "locale": "en-GB"}'))
    assert en["text"] == "Thursday, 24 December 2026"


FAKE_PAGE = """
const fields = {};
function field(id, tag, options) {
  const f = { id, tagName: tag, value: "", options: options || [], events: [],
              dispatchEvent(e) { this.events.push(e.type); } };
  fields[id] = f; return f;
}
field("appointment-department", "SELECT", [
  { value: "", text: "Choose" }, { value: "kardiologia", text: "Kardiológia" },
  { value: "neurologia", text: "Neurológia" }]);
field("appointment-day", "INPUT");
globalThis.document = { getElementById: (id) => fields[id] || null };
globalThis.Event = class { constructor(type) { this.type = type; } };
let registered = {};
globalThis.AiTools = { register: (id, impl) => { registered[id] = impl; } };
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_W4_fill_appointment_form_script_fills_the_page_fields() -> None:
    _, tools = load_domain("korhaz")
    script = {d.id: d for d in ai_definitions(tools)}[
        "fill_appointment_form"
    ].client_script_source()
    run = """
const input = JSON.stringify({department: "Kardiológia", day: "Monday"});
const out = registered["fill_appointment_form"].execute(input);
console.log(JSON.stringify({out: JSON.parse(out), dept: fields["appointment-department"].value,
  day: fields["appointment-day"].value, events: fields["appointment-day"].events}));
"""
    done = subprocess.run(
        ["node", "-e", FAKE_PAGE + (script or "") + run], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["dept"] == "kardiologia"
    assert result["day"] == "Monday"
    assert result["events"] == ["input", "change"]
    assert result["out"] == {"filled": True, "department": "kardiologia", "day": "Monday"}


def test_W3_all_scope_tool_answers_on_the_server_when_no_client_announced_it() -> None:
    out = _graph().invoke({"messages": [("human", "Milyen napra esik 2026-12-24?")]}, _config("d"))
    [entry] = out["context_buffer"]["1:format_date"]
    assert json.loads(entry.context)["text"] == "2026. december 24., csütörtök"
    assert "csütörtök" in out["answer"]
