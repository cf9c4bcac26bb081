"""MCP servers' tools as ChatbotTools: a real FastMCP server over stdio and HTTP (issue 12)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from toolweave import build_graph
from toolweave.adapters.mcp import aload_mcp_tools, load_mcp_tools
from toolweave.testing import FunctionAssistant

SERVER = Path(__file__).parent / "servers" / "mcp_beds.py"
STDIO = {"beds": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER), "stdio"]}}

pytestmark = pytest.mark.network


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def http_server() -> Iterator[dict[str, Any]]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the MCP HTTP server did not start within 20 s")
        yield {"beds": {"transport": "streamable_http", "url": f"http://127.0.0.1:{port}/mcp"}}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def beds_assistant() -> FunctionAssistant:
    return FunctionAssistant(
        route=lambda text, tools: [t.name for t in tools if t.name == "free_beds"],
        extract=lambda text, tool: {"department": "kardiológia"},
        answer=lambda request: " | ".join(d.text for d in request.documents),
    )


QUESTION = {"messages": [HumanMessage(content="Van szabad ágy a kardiológián?")]}


def test_T6_mcp_tool_over_stdio_becomes_a_chatbot_tool() -> None:
    (tool,) = load_mcp_tools(STDIO, domain="korhaz")
    assert tool.name == "free_beds"
    assert tool.domain == "korhaz"
    assert "free beds" in (tool.executable_instruction or "")
    assert set(tool.request_model.model_fields) == {"department"}


def test_R2_question_routed_to_an_mcp_tool_over_stdio() -> None:
    tools = load_mcp_tools(STDIO, domain="korhaz")
    out = build_graph("korhaz", tools, assistant=beds_assistant()).invoke(QUESTION)
    assert out["activated"] == ["1:free_beds"]
    assert "kardiológia: 3 free beds" in out["answer"]


def test_R2_question_routed_to_an_mcp_tool_over_http(http_server) -> None:
    async def run() -> dict[str, Any]:
        tools = await aload_mcp_tools(http_server, domain="korhaz")
        graph = build_graph("korhaz", tools, assistant=beds_assistant())
        return await graph.ainvoke(QUESTION)

    out = asyncio.run(run())
    assert out["activated"] == ["1:free_beds"]
    assert "kardiológia: 3 free beds" in out["answer"]


def test_T2_mcp_tools_pass_the_domain_gate(http_server) -> None:
    tools = asyncio.run(aload_mcp_tools(http_server, domain="pharmacy"))
    out = build_graph("korhaz", tools, assistant=beds_assistant()).invoke(QUESTION)
    assert out["activated"] == []


def test_T1_server_prefix_keeps_tool_names_apart() -> None:
    (tool,) = load_mcp_tools(STDIO, prefix_server_name=True)
    assert tool.name == "beds_free_beds"
