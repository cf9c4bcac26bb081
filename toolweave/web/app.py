"""The hospital demo page, as ``langgraph.json``'s custom app (``"http": {"app": ...}``).

Like :mod:`toolweave.studio`, this module exists for the LangGraph server: it
builds the app when imported. ``langgraph dev`` then serves the API and the page
at one address: http://127.0.0.1:2024/chat.
"""

from __future__ import annotations

from starlette.applications import Starlette

from toolweave.domains.korhaz.chat_page import appointment_panel
from toolweave.web.page import ChatPage, create_app

PAGE = ChatPage(
    assistant_id="korhaz",
    title="Példa Kórház · toolweave chat",
    panel_html=appointment_panel(),
)
"""The page: the ``korhaz`` graph of ``langgraph.json`` and the appointment form."""

app: Starlette = create_app(PAGE)
"""Mounted by the LangGraph server in front of its own API routes."""

__all__ = ["PAGE", "app"]
