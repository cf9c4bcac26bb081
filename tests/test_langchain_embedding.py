"""The compiled graph is a LangChain ``Runnable``: it composes in LCEL and is an agent's tool."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from toolweave import build_graph
from toolweave.domains import load_domain
from toolweave.llm.offline import OfflineAssistant
from toolweave.testing import FunctionAssistant
from toolweave_korhaz.examples import EXAMPLE_QUESTIONS

CARDIOLOGY = next(q for q in EXAMPLE_QUESTIONS if "department_info" in q.expected_tools)
SCRIPTED_ANSWER = "Cardiology: Monday-Thursday 9:00-13:00 (scripted)."


@pytest.fixture(scope="module")
def offline_graph():
    return build_graph(*load_domain("korhaz"), assistant=OfflineAssistant())


@pytest.fixture(scope="module")
def scripted_graph():
    """The korhaz tools driven by a FunctionAssistant: routing and the answer are scripted."""
    assistant = FunctionAssistant(
        route=lambda text, tools: ["department_info"] if "kardiol" in text.lower() else [],
        extract=lambda text, tool: {"department": "kardiológia"},
        answer=lambda request: SCRIPTED_ANSWER,
    )
    return build_graph(*load_domain("korhaz"), assistant=assistant)


def as_question_chain(graph: Runnable[Any, Any]) -> Runnable[str, str]:
    """question → graph input → graph → answer text."""
    to_input = RunnableLambda(lambda q: {"messages": [HumanMessage(content=q)]})
    to_answer = RunnableLambda(lambda state: state["answer"])
    return to_input | graph | to_answer


def test_graph_in_an_lcel_chain_returns_the_answer_string(offline_graph):
    chain = as_question_chain(offline_graph)
    answer = chain.invoke(CARDIOLOGY.question)
    assert isinstance(answer, str)
    for expected in CARDIOLOGY.expected_substrings:
        assert expected in answer


def test_lcel_chain_batches_and_keeps_the_function_assistant(scripted_graph):
    chain = as_question_chain(scripted_graph)
    answers = chain.batch([CARDIOLOGY.question, "Mikor van rendelés a kardiológián?"])
    assert answers == [SCRIPTED_ANSWER, SCRIPTED_ANSWER]


def test_graph_streams_its_phase_updates_through_an_lcel_chain(offline_graph):
    to_input = RunnableLambda(lambda q: {"messages": [HumanMessage(content=q)]})
    chunks = list((to_input | offline_graph).stream(CARDIOLOGY.question))
    nodes = [node for chunk in chunks for node in chunk]  # a graph streams "updates" by default
    assert nodes[0] == "normalize"
    assert nodes[-1] == "answer"
    assert CARDIOLOGY.expected_substrings[0] in chunks[-1]["answer"]["answer"]


class AgentState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class ScriptedToolModel(GenericFakeChatModel):
    """A fake chat model that accepts tools (the fakes do not, LANGGRAPH_NOTES §7)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:
        return self


def run_agent(agent_tool: BaseTool, question: str) -> list[AnyMessage]:
    """A two-turn agent loop: the model calls ``agent_tool``, then answers from its result."""
    model = ScriptedToolModel(
        messages=iter(
            [
                AIMessage(
                    content="",
                    tool_calls=[
                        {"name": agent_tool.name, "args": {"question": question}, "id": "call_1"}
                    ],
                ),
                AIMessage(content="Here is what the hospital says."),
            ]
        ),
        disable_streaming=True,
    )
    bound = model.bind_tools([agent_tool])

    def agent(state: AgentState) -> dict[str, list[AnyMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(AgentState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([agent_tool]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, ["tools", END])
    graph.add_edge("tools", "agent")
    result = graph.compile().invoke({"messages": [HumanMessage(content=question)]})
    return list(result["messages"])


@pytest.mark.filterwarnings("ignore:This API is in beta")
def test_graph_as_tool_of_an_agent_via_as_tool(offline_graph):
    to_input = RunnableLambda(lambda args: {"messages": [HumanMessage(content=args["question"])]})
    chain = to_input | offline_graph | RunnableLambda(lambda state: state["answer"])
    hospital = chain.as_tool(
        name="ask_hospital",
        description="Answers questions about Példa Hospital: departments, hours, parking.",
        arg_types={"question": str},
    )
    messages = run_agent(hospital, CARDIOLOGY.question)
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1
    assert tool_messages[0].tool_call_id == "call_1"
    for expected in CARDIOLOGY.expected_substrings:
        assert expected in tool_messages[0].text
    assert messages[-1].text == "Here is what the hospital says."


def test_graph_inside_a_tool_function_of_an_agent(scripted_graph):
    @tool
    def ask_hospital(question: str) -> str:
        """Answer a question about Példa Hospital."""
        state = scripted_graph.invoke({"messages": [HumanMessage(content=question)]})
        return str(state["answer"])

    messages = run_agent(ask_hospital, CARDIOLOGY.question)
    tool_message = next(m for m in messages if isinstance(m, ToolMessage))
    assert tool_message.text == SCRIPTED_ANSWER
    assert tool_message.status == "success"
