"""The LangChain/LangGraph edges users reach for (issue 18 item 2, observations 3-5).

Real components: an LCEL chain from ``ChatPromptTemplate``, ``create_agent`` with a
tool-calling scripted reply, the offline model over the hospital domain. The page
``docs/guides/embedding.md`` shows the six ways to embed the graph; each cites a test.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver

from toolweave import InvalidRequestError, build_graph
from toolweave.adapters.langchain import as_agent_tool
from toolweave.domains import load_domain
from toolweave.llm.offline import OfflineAssistant

ROOT = Path(__file__).parents[1]
PAGE = ROOT / "docs" / "guides" / "embedding.md"
CARDIOLOGY = "Mikor van rendelés a kardiológián?"
HOURS = "9:00-13:00"
ASKS = "Mikor van rendelés?"  # the department tool asks which department (Q1)


@pytest.fixture(scope="module")
def graph() -> Any:
    return build_graph(*load_domain("korhaz"), assistant=OfflineAssistant())


def answer(state: Any) -> str:
    return str(state["answer"])


# --- what LCEL hands the graph (observation 3) --------------------------------------


def test_X1_a_prompt_template_pipes_straight_into_the_graph(graph: Any) -> None:
    """Observation 3: ``prompt | graph`` got "the input must be a mapping"."""
    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    chain = prompt | graph | RunnableLambda(answer)
    assert HOURS in chain.invoke({"question": CARDIOLOGY})


@pytest.mark.parametrize(
    "value",
    [
        CARDIOLOGY,
        HumanMessage(content=CARDIOLOGY),
        [HumanMessage(content=CARDIOLOGY)],
        [("human", "Szia"), ("ai", "Jó napot!"), ("human", CARDIOLOGY)],
    ],
    ids=["text", "message", "list of messages", "list of pairs"],
)
def test_X1_a_text_a_message_or_a_list_of_them_is_a_message_input(graph: Any, value: Any) -> None:
    assert HOURS in graph.invoke(value)["answer"]


def test_X1_X5_coerced_inputs_keep_the_input_rules(graph: Any) -> None:
    with pytest.raises(InvalidRequestError, match="empty"):
        graph.invoke("   ")
    with pytest.raises(InvalidRequestError, match="human message"):
        graph.invoke([HumanMessage(content=CARDIOLOGY), AIMessage(content="a reply")])
    with pytest.raises(InvalidRequestError, match="unknown input key"):
        graph.invoke({"question": CARDIOLOGY})  # a mapping keeps today's rules


# --- the graph as an agent's tool (observations 4, 5) --------------------------------


class ScriptedToolModel(GenericFakeChatModel):
    """A fake chat model that accepts tools (the fakes do not, LANGGRAPH_NOTES §7)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:
        return self


def calling(tool_name: str, *questions: str) -> ScriptedToolModel:
    """A model that calls ``tool_name`` once per question, then answers."""
    replies = [
        AIMessage(
            content="",
            tool_calls=[{"name": tool_name, "args": {"question": q}, "id": f"call_{n}"}],
        )
        for n, q in enumerate(questions, start=1)
    ]
    replies.append(AIMessage(content="Here is what the hospital says."))
    return ScriptedToolModel(messages=iter(replies), disable_streaming=True)


def tool_texts(out: dict[str, Any]) -> list[str]:
    return [m.text for m in out["messages"] if isinstance(m, ToolMessage)]


def test_R9_graph_as_tool_is_the_agent_tool_inside_create_agent(graph: Any) -> None:
    """Observation 4: ``graph.as_tool()`` failed with ``KeyError: 'tool_call_id'``."""
    hospital = graph.as_tool(name="ask_hospital", description="Hospital questions")
    assert hospital.args == as_agent_tool(graph).args
    agent = create_agent(calling("ask_hospital", CARDIOLOGY), [hospital])
    out = agent.invoke({"messages": [HumanMessage(content=CARDIOLOGY)]})
    (text,) = tool_texts(out)
    assert HOURS in text
    assert "Sources:" in text
    assert out["messages"][-1].text == "Here is what the hospital says."


@pytest.mark.filterwarnings("ignore:This API is in beta")
def test_graph_as_tool_with_arg_types_is_langchains_own(graph: Any) -> None:
    tool = graph.as_tool(name="raw", arg_types={"messages": list})
    assert set(tool.args) == {"messages"}


def test_Q1_the_agent_tools_clarification_carries_its_choices_numbered(graph: Any) -> None:
    """Observation 5: "Type its name or its number in the list." came with no list."""
    text = graph.as_tool().invoke({"question": ASKS})
    assert "needs to know more" in text
    assert "1. Belgyógyászat" in text
    assert "2. Kardiológia" in text
    assert "again with the whole question" in text  # a fresh thread cannot take "2"


@pytest.mark.parametrize("reply", ["2", "Kardiológia"], ids=["by number", "by text"])
def test_Q2_the_agent_resumes_the_question_by_number_or_text(reply: str) -> None:
    inner = build_graph(
        *load_domain("korhaz"), assistant=OfflineAssistant(), checkpointer=InMemorySaver()
    )
    hospital = as_agent_tool(inner, name="ask_hospital", thread="agent")
    agent = create_agent(
        calling("ask_hospital", ASKS, reply), [hospital], checkpointer=InMemorySaver()
    )
    out = agent.invoke(
        {"messages": [HumanMessage(content=ASKS)]}, {"configurable": {"thread_id": "a1"}}
    )
    asked, answered = tool_texts(out)
    assert "2. Kardiológia" in asked
    assert "again with the whole question" not in asked
    assert HOURS in answered
    state = inner.get_state({"configurable": {"thread_id": "a1:ask_hospital"}})
    assert "1:department_info" in state.values["activated"]  # the paused run went on


# --- the page: six ways, each backed by a test ---------------------------------------


WAYS = (
    "invoke",
    "LCEL chain",
    "agent tool",
    "A node of your own LangGraph graph",
    "Studio",
    "notebook",
)
CITED = re.compile(r"`(tests/test_\w+\.py)::(test_\w+)")


def test_embedding_page_shows_six_ways_each_backed_by_a_test_that_exists() -> None:
    page = PAGE.read_text(encoding="utf-8")
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    assert [s.splitlines()[0] for s in sections][: len(WAYS)] == [
        f"{n}. {way}" for n, way in enumerate(WAYS, start=1)
    ]
    for section in sections[: len(WAYS)]:
        cited = CITED.findall(section)
        assert cited, f"no test cited under {section.splitlines()[0]!r}"
        for path, name in cited:
            source = (ROOT / path).read_text(encoding="utf-8")
            assert f"def {name}(" in source, f"{path}::{name} does not exist"


def test_embedding_page_python_runs_offline(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    page = PAGE.read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page, re.DOTALL) if "agent" not in b]
    module = types.ModuleType("embedding_page")  # a module: LangGraph reads a state's hints
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace: dict[str, Any] = module.__dict__
    exec(compile("\n".join(blocks), str(PAGE), "exec"), namespace)
    assert HOURS in namespace["out"]["answer"]
    assert HOURS in namespace["chain"].invoke({"question": CARDIOLOGY})
    assert namespace["done"]["reply_text"].startswith("[hospital] ")  # the parent graph's
    assert HOURS in namespace["done"]["reply_text"]
