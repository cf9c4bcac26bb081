"""The desk's chat page, with the replacement ID card form the client tool fills."""

from newuser20_domain.tools import own_tools
from toolweave.web import ChatPage, client_scripts_for, create_app

PANEL = """<form><label>Reason for a new card
<select id="id-card-reason"><option>lost</option><option>damaged</option>
<option>name change</option></select></label></form>"""

app = create_app(
    ChatPage(
        assistant_id="northfield",
        title="Northfield University student services",
        panel_html=PANEL,
        client_scripts=client_scripts_for(own_tools()),
    )
)
