"""The helpdesk's AI system tool that the page runs: filling the leave request form (W1-W3).

``fill_leave_request_form`` has scope CLIENT: the browser runs it
(``js/fill_leave_request_form.js``, the HR-01 form's fields ``#leave-start``,
``#leave-end`` and ``#leave-type``); the server never does, and a client that did
not announce it (``toolweave ask``) skips it.
"""

from __future__ import annotations

import json

from toolweave import AiTool, AiToolBuilder, AiToolScope, ai_tool_script

LEAVE_TYPES = ("wypoczynkowy", "na żądanie", "okolicznościowy", "bezpłatny")
"""The leave types of form HR-01."""

FORM_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "start_date": {"type": "string", "description": "First day of leave, YYYY-MM-DD"},
            "end_date": {"type": "string", "description": "Last day of leave, YYYY-MM-DD"},
            "leave_type": {
                "type": "string",
                "enum": list(LEAVE_TYPES),
                "description": "Type of leave (rodzaj urlopu)",
            },
        },
    },
    ensure_ascii=False,
)
"""The form's fields as the model fills them."""


@ai_tool_script("js/fill_leave_request_form.js")
class FillLeaveRequestFormTool(AiTool):
    """CLIENT: fills form HR-01 "Wniosek urlopowy" in the user's page."""

    def define(self, builder: AiToolBuilder) -> None:
        """W1: id, names, descriptions, schema, scope CLIENT."""
        builder.id("fill_leave_request_form").name("Wniosek urlopowy HR-01").user_description(
            "Wypełnia formularz wniosku urlopowego HR-01 na stronie."
        ).ai_description(
            "true when the user asks to fill in (wypełnij, uzupełnij) the leave request form "
            "(wniosek urlopowy, formularz HR-01, leave request form) with the dates and "
            "the type of leave."
        ).input_json_schema(FORM_SCHEMA).scope(AiToolScope.CLIENT)

    def execute(self, input: str) -> str:
        """Never called: a CLIENT tool runs in the browser (W3)."""
        raise RuntimeError("fill_leave_request_form runs in the client only")

    def result_text(self, output: str, *, user_lang: str) -> str:
        """What the page did with the form, for the answer (R10)."""
        try:
            data = json.loads(output)
        except json.JSONDecodeError:
            return output
        if not isinstance(data, dict) or not data.get("filled"):
            return (
                "The leave request form could not be filled on this page."
                if user_lang == "en"
                else "Nie udało się wypełnić wniosku urlopowego na tej stronie."
            )
        what = ", ".join(
            str(data[k]) for k in ("start_date", "end_date", "leave_type") if data.get(k)
        )
        return (
            f"I filled in the leave request form HR-01 on the page: {what}. Check it and send it."
            if user_lang == "en"
            else f"Wypełniłem wniosek urlopowy HR-01 na stronie: {what}. Sprawdź go i wyślij."
        )


def pomoc_ai_tools() -> list[AiTool]:
    """New instances of the helpdesk's AI system tools."""
    return [FillLeaveRequestFormTool()]


__all__ = ["FORM_SCHEMA", "LEAVE_TYPES", "FillLeaveRequestFormTool", "pomoc_ai_tools"]
