"""The helpdesk's chat page, as its ``langgraph.json``'s custom app (``"http": {"app": ...}``).

``cd examples/pomoc && langgraph dev`` serves the API and the page at one address,
http://127.0.0.1:2024/chat, with form HR-01 beside the chat and the script of the
CLIENT tool that fills it.
"""

from __future__ import annotations

from starlette.applications import Starlette

from toolweave import as_chatbot_tools
from toolweave.web import ChatPage, client_scripts_for, create_app
from toolweave_pomoc.ai_tools import pomoc_ai_tools
from toolweave_pomoc.chat_page import leave_panel

PAGE = ChatPage(
    assistant_id="pomoc",
    title="Lumena · Pomoc",
    panel_html=leave_panel(),
    client_scripts=client_scripts_for(as_chatbot_tools(pomoc_ai_tools())),
    lang="pl",
)
"""The page: the ``pomoc`` graph, form HR-01 beside the chat, the form-filling script."""

app: Starlette = create_app(PAGE)
"""Mounted by the LangGraph server in front of its own API routes."""

__all__ = ["PAGE", "app"]
