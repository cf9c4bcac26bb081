"""The chat page for the office's graph (``langgraph.json``'s ``http.app``)."""

from pathlib import Path

from newuser7_domain.office import own_tools
from toolweave.web import ChatPage, client_scripts_for, create_app

app = create_app(
    ChatPage(
        assistant_id="permits",
        title="Riverton Permits Office",
        panel_html=Path(__file__).with_name("panel.html").read_text(encoding="utf-8"),
        client_scripts=client_scripts_for(own_tools()),
    )
)
