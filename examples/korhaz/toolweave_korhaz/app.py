"""The hospital demo page, as ``langgraph.json``'s custom app (``"http": {"app": ...}``).

Like :mod:`toolweave_korhaz.studio`, this module exists for the LangGraph server: it
builds the app when imported. ``langgraph dev`` then serves the API and the page
at one address: http://127.0.0.1:2024/chat.
"""

from __future__ import annotations

from starlette.applications import Starlette

from toolweave import as_chatbot_tools
from toolweave.web.page import ChatPage, client_scripts_for, create_app
from toolweave_korhaz import korhaz_domain
from toolweave_korhaz.ai_tools import korhaz_ai_tools
from toolweave_korhaz.chat_page import appointment_panel

PAGE = ChatPage(
    assistant_id="korhaz",
    title="Példa Kórház · toolweave chat",
    panel_html=appointment_panel(),
    client_scripts=client_scripts_for(as_chatbot_tools(korhaz_ai_tools())),
    lang=korhaz_domain().default_language,  # the page's own strings when the browser's have none
)
"""The page: the ``korhaz`` graph of ``langgraph.json``, the appointment form beside the
chat, and the client scripts of the hospital's AI tools (``fill_appointment_form``,
``format_date``) that the page runs in the browser."""

app: Starlette = create_app(PAGE)
"""Mounted by the LangGraph server in front of its own API routes."""

__all__ = ["PAGE", "app"]
