"""The chat page for the client-tool probe graph, with test client scripts (W4).

``tests/test_web_page.py`` points a private ``langgraph dev`` at it; the page
loads ``tests/web_tools/*.js`` through ``/chat/tools.js`` like real tools' scripts.
"""

from __future__ import annotations

from pathlib import Path

from toolweave.web import ChatPage, ClientScript, create_app
from toolweave_korhaz.chat_page import appointment_panel

TOOLS = Path(__file__).with_name("web_tools")

app = create_app(
    ChatPage(
        assistant_id="client_probe",
        title="client-tool probe",
        panel_html=appointment_panel(),
        client_scripts=[
            ClientScript.from_file(name, TOOLS / f"{name}.js")
            for name in ("fill_appointment_form", "slow_echo", "never_answers")
        ],
    )
)
