"""The web chat page for the LangGraph server (``langgraph.json`` ``http.app``), on Starlette.

:func:`create_app` or :func:`chat_routes` put the page in front of any graph.
"""

from toolweave.web.page import ChatPage as ChatPage
from toolweave.web.page import ClientScript as ClientScript
from toolweave.web.page import chat_routes as chat_routes
from toolweave.web.page import client_scripts_for as client_scripts_for
from toolweave.web.page import create_app as create_app
from toolweave.web.page import render_page as render_page
