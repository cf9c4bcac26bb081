"""The hospital's AI system tools, one of each scope (W1-W3, seed 002).

- ``fill_appointment_form`` (CLIENT): fills the page's appointment-request form
  (department, preferred day); its implementation is ``js/fill_appointment_form.js``,
  run in the user's browser. It never runs on the server.
- ``check_appointment_slots`` (SERVER): the free appointment slots of a
  department on a weekday, from the department registry's consultation hours.
- ``format_date`` (ALL): a date written out for the user's locale; the page
  formats it with the browser's ``Intl`` when it announced the tool, the server
  with its own Hungarian and English names otherwise.
"""

from __future__ import annotations

import datetime as dt
import json
from functools import cache
from typing import Any

from toolweave import AiTool, AiToolBuilder, AiToolScope, ai_tool_script
from toolweave.tools.text import readable
from toolweave_korhaz.departments import (
    WEEKDAYS,
    departments,
    known_department_names,
    parse_weekday,
    resolve_departments,
)

SLOT_MINUTES = 30
"""Length of one appointment slot."""


@cache
def _department_schema() -> dict[str, object]:
    return {
        "type": "string",
        "enum": sorted(set(known_department_names())),
        "description": "The department, as the user named it",
    }


@cache
def appointment_schema() -> str:
    """Input of the two appointment tools: a department and a preferred day."""
    return json.dumps(
        {
            "type": "object",
            "properties": {
                "department": _department_schema(),
                "day": {
                    "type": "string",
                    "description": "Preferred weekday in English (Monday ... Sunday)",
                },
            },
            "required": ["department"],
        },
        ensure_ascii=False,
    )


@ai_tool_script("js/fill_appointment_form.js")
class FillAppointmentFormTool(AiTool):
    """CLIENT: fill the appointment-request form in the user's page."""

    def define(self, builder: AiToolBuilder) -> None:
        """W1: id, names, descriptions, schema, scope CLIENT."""
        builder.id("fill_appointment_form").name("Appointment form").user_description(
            "Fills the appointment-request form on the page with the department and day."
        ).ai_description(
            "true when the user wants to request or book an appointment (időpontot kérni, "
            "foglalni) at a department: fills the appointment form (űrlap) on the "
            "user's page with the department and the preferred day."
        ).input_json_schema(appointment_schema()).scope(AiToolScope.CLIENT)

    def execute(self, input: str) -> str:
        """Never called: a CLIENT tool runs in the browser (W3)."""
        raise RuntimeError("fill_appointment_form runs in the client only")

    def result_text(self, output: str, *, user_lang: str) -> str:
        """What the page did with the form, for the answer (R10)."""
        data = _data(output)
        if data is None:
            return readable(output)
        hu = user_lang == "hu"
        if not data.get("filled"):
            return (
                "Az időpontkérő űrlapot nem sikerült kitölteni ezen az oldalon."
                if hu
                else "The appointment request form could not be filled on this page."
            )
        found = resolve_departments(str(data.get("department") or ""))
        dept = found[0].name(user_lang) if found else str(data.get("department") or "")
        day = _day_name(data.get("day"), user_lang)
        what = ", ".join(part for part in (dept, day) if part)
        return (
            f"Kitöltöttem az időpontkérő űrlapot az oldalon: {what}. Ellenőrizze, majd küldje el."
            if hu
            else f"I filled in the appointment request form on the page: {what}. "
            "Check it, then send it."
        )


class CheckAppointmentSlotsTool(AiTool):
    """SERVER: free appointment slots of a department on a weekday."""

    def define(self, builder: AiToolBuilder) -> None:
        """W1: id, names, descriptions, schema, scope SERVER."""
        builder.id("check_appointment_slots").name("Appointment slots").user_description(
            "Checks which appointment slots a department has on a day."
        ).ai_description(
            "true when the user wants to book an appointment (időpontot kérni, foglalni) or "
            "asks for a free slot: lists the free appointment slots of the department on the day."
        ).input_json_schema(appointment_schema()).scope(AiToolScope.SERVER)

    def execute(self, input: str) -> str:
        """The slots within the department's consultation hours on that day, as JSON."""
        data = json.loads(input)
        found = resolve_departments(str(data["department"]))
        if not found:
            return json.dumps({"error": f"unknown department {data['department']!r}"})
        dept = found[0]
        day = parse_weekday(data.get("day"))
        days = [day] if day is not None else [d for d in WEEKDAYS if dept.consultation_hours.get(d)]
        result = []
        for weekday in days:
            hours = dept.consultation_hours.get(weekday)
            result.append({"day": weekday.capitalize(), "hours": hours, "slots": _slots(hours)})
        return json.dumps(
            {"department": dept.name_en, "phone": dept.phone, "days": result}, ensure_ascii=False
        )

    def result_text(self, output: str, *, user_lang: str) -> str:
        """The free slots in words, for the answer (R10)."""
        data = _data(output)
        if data is None or "days" not in data:
            return readable(output)
        hu = user_lang == "hu"
        found = resolve_departments(str(data.get("department") or ""))
        dept = found[0].name(user_lang) if found else str(data.get("department"))
        lines = [
            f"{_day_name(day.get('day'), user_lang)}: "
            + (", ".join(day["slots"]) if day.get("slots") else ("nincs" if hu else "none"))
            for day in data["days"]
        ]
        phone = data.get("phone")
        head = f"Szabad időpontok ({dept})" if hu else f"Free appointment slots ({dept})"
        tail = (
            f" Időpontot a {phone} telefonszámon lehet kérni."
            if hu
            else f" Book one by phone: {phone}."
        )
        return f"{head}: {'; '.join(lines)}.{tail if phone else ''}"


def _slots(hours: str | None) -> list[str]:
    if not hours:
        return []
    start, _, end = hours.partition("-")
    begin = dt.datetime.strptime(start.strip(), "%H:%M")
    stop = dt.datetime.strptime(end.strip(), "%H:%M")
    slots: list[str] = []
    while begin + dt.timedelta(minutes=SLOT_MINUTES) <= stop:
        slots.append(begin.strftime("%H:%M"))
        begin += dt.timedelta(minutes=SLOT_MINUTES)
    return slots


_MONTHS_HU = tuple(
    [
        "január",
        "február",
        "március",
        "április",
        "május",
        "június",
        "július",
        "augusztus",
        "szeptember",
        "október",
        "november",
        "december",
    ]
)
_DAYS_HU = tuple(["hétfő", "kedd", "szerda", "csütörtök", "péntek", "szombat", "vasárnap"])


@ai_tool_script("js/format_date.js")
class FormatDateTool(AiTool):
    """ALL: a date written out for the user's locale (browser ``Intl``, else the server)."""

    def define(self, builder: AiToolBuilder) -> None:
        """W1: id, names, descriptions, schema, scope ALL."""
        builder.id("format_date").name("Date for your locale").user_description(
            "Writes a date out in the user's language and format."
        ).ai_description(
            "true when the user gives a calendar date (dátum, 2026-12-24) and asks "
            "which weekday it is or how to write it: writes the date out for the user's locale."
        ).input_json_schema(
            json.dumps(
                {
                    "type": "object",
                    "properties": {
                        "date": {"type": "string", "format": "date", "description": "ISO date"},
                        "locale": {"type": "string", "description": "BCP 47 locale, e.g. hu-HU"},
                    },
                    "required": ["date"],
                }
            )
        ).scope(AiToolScope.ALL)

    def execute(self, input: str) -> str:
        """The date in Hungarian (``"2026. december 24., csütörtök"``) or English."""
        data = json.loads(input)
        try:
            day = dt.date.fromisoformat(str(data["date"]))
        except ValueError:
            return json.dumps({"error": f"not an ISO date: {data['date']!r}"})
        locale = str(data.get("locale") or "hu")
        if locale.lower().startswith("hu"):
            text = f"{day.year}. {_MONTHS_HU[day.month - 1]} {day.day}., {_DAYS_HU[day.weekday()]}"
        else:
            text = f"{day.strftime('%A')}, {day.day} {day.strftime('%B')} {day.year}"
        return json.dumps(
            {"date": day.isoformat(), "locale": locale, "text": text}, ensure_ascii=False
        )

    def result_text(self, output: str, *, user_lang: str) -> str:
        """``"2026-12-24: 2026. december 24., csütörtök."``, for the answer (R10)."""
        data = _data(output)
        if data is None or not data.get("text"):
            return readable(output)
        return f"{data.get('date')}: {data['text']}."


def _data(output: str) -> dict[str, Any] | None:
    """A tool output's JSON object, or ``None``."""
    try:
        data = json.loads(output)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _day_name(value: object, lang: str) -> str:
    day = parse_weekday(value)
    if day is None:
        return str(value or "")
    return _DAYS_HU[WEEKDAYS.index(day)] if lang == "hu" else day.capitalize()


def korhaz_ai_tools() -> list[AiTool]:
    """New instances of the hospital's AI tools, one of each scope."""
    return [FillAppointmentFormTool(), CheckAppointmentSlotsTool(), FormatDateTool()]


__all__ = [
    "CheckAppointmentSlotsTool",
    "FillAppointmentFormTool",
    "FormatDateTool",
    "appointment_schema",
    "departments",
    "korhaz_ai_tools",
]
