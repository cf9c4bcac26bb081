"""The web chat page, served by the LangGraph server itself (``langgraph.json`` ``http.app``).

This subpackage needs Starlette (it comes with ``langgraph-api``, the LangGraph
server); nothing else in toolweave imports it. ``toolweave.web.app:app`` is the
hospital demo page; :func:`create_app` or :func:`chat_routes` put the same page
in front of any graph.
"""

from toolweave.web.page import (
    ChatPage,
    ClientScript,
    chat_routes,
    client_scripts_for,
    create_app,
    render_page,
)

__all__ = [
    "ChatPage",
    "ClientScript",
    "chat_routes",
    "client_scripts_for",
    "create_app",
    "render_page",
]
