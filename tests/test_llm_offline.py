"""OfflineAssistant: deterministic, Hungarian and English (A1, T5, T7, T10, D1)."""

from __future__ import annotations

import enum
from typing import Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel, Field

from toolweave.llm.lexical import matches
from toolweave.llm.offline import OFFLINE_LABEL, OfflineAssistant
from toolweave.llm.port import AnswerRequest
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.base import ChatbotTool
from toolweave.tools.text import STOPWORDS

offline = OfflineAssistant()


class Ward(enum.Enum):
    CARDIOLOGY = "kardiológia"
    NEUROLOGY = "neurológia"


class VisitingRequest(BaseModel):
    ward: Ward | None = None
    day: str | None = None
    visitors: int | None = None
    floor: str | None = Field(default=None, json_schema_extra={"known_values": ["földszint"]})
    kind: Literal["adult", "child"] | None = None
    note: str | None = None


class VisitingHours(ChatbotTool[VisitingRequest]):
    name = "visiting_hours"
    request_model = VisitingRequest
    executable_instruction = (
        "visiting_hours: igaz, ha a felhasználó a látogatási időről kérdez egy osztályon."
    )
    description = "Visiting hours of the hospital's wards."


class Parking(ChatbotTool[BaseModel]):
    name = "parking"
    executable_instruction = "parking: true when the user asks where to park or about parking fees."
    description = "Parking garage, fees, parkolás."


class DeepSearch(ChatbotTool[BaseModel]):
    name = "deep_search"
    executable_instruction = None
    description = "Searches everything about visiting hours and parking."


TOOLS = [VisitingHours(), Parking(), DeepSearch()]


def test_offline_label_says_no_llm():
    assert offline.label == OFFLINE_LABEL
    assert "no LLM" in offline.label


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("Mikor van a látogatási idő a kardiológián?", "hu"),
        ("When are the visiting hours at cardiology?", "en"),
        ("és pénteken?", "hu"),
        ("and on Friday?", "en"),
        ("Hol lehet parkolni?", "hu"),
    ],
)
def test_T10_language_is_detected_offline(message, lang):
    assert offline.normalize(message, [], default_lang="xx").user_lang == lang


def test_T10_undecidable_language_uses_default():
    assert offline.normalize("MRI 3T", [], default_lang="hu").user_lang == "hu"


def test_A1_followup_becomes_standalone_offline():
    history = [
        HumanMessage("When are visiting hours at cardiology on Monday?"),
        AIMessage("From 2 pm to 6 pm."),
    ]
    question = offline.normalize("and on Friday?", history).question
    assert "cardiology" in question
    assert "visiting hours" in question
    assert "Friday" in question
    assert "Monday" not in question


def test_A1_followup_becomes_standalone_offline_hungarian():
    history = [
        HumanMessage("Mikor van a látogatási idő a kardiológián hétfőn?"),
        AIMessage("14-18"),
    ]
    normalized = offline.normalize("és pénteken?", history)
    assert normalized.question == "Mikor van a látogatási idő a kardiológián pénteken?"
    assert normalized.user_lang == "hu"
    assert "pénteken" in normalized.important_words
    assert "hétfőn" not in normalized.important_words


def test_A1_chained_followups_and_subject_replacement():
    history = [
        HumanMessage("When are visiting hours at cardiology on Monday?"),
        AIMessage("2-6 pm."),
        HumanMessage("and on Friday?"),
        AIMessage("1-5 pm."),
    ]
    question = offline.normalize("What about neurology?", history).question
    assert question == "When are visiting hours at neurology on Friday?"


def test_A1_standalone_question_is_kept():
    history = [HumanMessage("When are visiting hours at cardiology on Monday?")]
    assert offline.normalize("Where can I park my car?", history).question == (
        "Where can I park my car?"
    )


def test_A1_current_message_already_in_history_is_not_its_own_context():
    history = [HumanMessage("Hol lehet parkolni?")]
    assert offline.normalize("Hol lehet parkolni?", history).question == "Hol lehet parkolni?"


def test_smalltalk_prompt_type():
    assert offline.normalize("Hello!", []).prompt_type == "smalltalk"
    assert offline.normalize("Hol lehet parkolni?", []).prompt_type == "factual"


def test_T5_offline_routing_matches_stems_across_suffixes():
    verdicts = {
        v.tool: v for v in offline.route("Mikor látogathatom a beteget a kardiológián?", TOOLS)
    }
    assert verdicts["visiting_hours"].run
    assert "matched" in verdicts["visiting_hours"].reason
    assert not verdicts["parking"].run


def test_T5_offline_routing_hungarian_parking():
    verdicts = {v.tool: v.run for v in offline.route("Hol tudok parkolni a kórháznál?", TOOLS)}
    assert verdicts == {"visiting_hours": False, "parking": True, "deep_search": False}


def test_T5_tool_without_routing_question_never_runs_offline():
    verdicts = offline.route("visiting hours and parking fees", TOOLS)
    assert [v.run for v in verdicts] == [True, True, False]


def test_T7_offline_extraction_fills_enum_known_values_numbers_and_weekday():
    out = offline.generate_tool_request(
        "Látogatás a kardiológián pénteken 3 fővel, a földszinten, gyereknek (child)",
        "{instruction}",
        None,
        VisitingHours(),
    )
    assert out == {
        "visiting_hours": {
            "ward": "kardiológia",
            "day": "Friday",
            "visitors": 3,
            "floor": "földszint",
            "kind": "child",
            "note": None,
        }
    }


def test_T7_offline_extraction_leaves_unknown_fields_none_and_takes_iso_dates():
    out = offline.generate_tool_request("Visit on 2025-03-14", "", None, VisitingHours())
    assert out["visiting_hours"] == {
        "ward": None,
        "day": "2025-03-14",
        "visitors": None,
        "floor": None,
        "kind": None,
        "note": None,
    }


DOCS = [
    UniqueTextDocument(
        document_id="visiting.md",
        document_name="Visiting rules",
        page=2,
        text="Visiting hours at cardiology are 14-18 on weekdays. Bring slippers.",
    ),
    UniqueTextDocument(
        document_id="food.md", document_name="Canteen", text="The canteen opens at 8."
    ),
]


def test_offline_answer_is_extractive_and_leaves_the_sources_to_the_caller():
    request = AnswerRequest(
        "When are visiting hours at cardiology?", "en", "", DOCS, ["Ward 3 is on floor 2."]
    )
    answer = offline.answer(request).text
    assert answer.startswith("Ward 3 is on floor 2.")
    assert "Visiting hours at cardiology are 14-18 on weekdays." in answer
    assert "canteen" not in answer
    assert answer.endswith("Visiting hours at cardiology are 14-18 on weekdays.")
    assert "Sources" not in answer
    assert "Visiting rules" not in answer  # the document's name is the caller's to print


def test_offline_answer_in_hungarian_and_without_context():
    request = AnswerRequest("Mikor van látogatás?", "hu", "", [], [])
    assert offline.answer(request).text == "Nem találtam erről információt az elérhető forrásokban."
    hu_doc = UniqueTextDocument(
        document_id="l", document_name="Látogatás", text="A látogatás 14-18 óra."
    )
    answer = offline.answer(AnswerRequest("Mikor van látogatás?", "hu", "", [hu_doc], [])).text
    assert answer == "A látogatás 14-18 óra."


def test_D1_offline_gatekeeper_covers_words_and_names_missing():
    assert offline.judge_context("visiting hours cardiology", DOCS, []).sufficient
    verdict = offline.judge_context("parking fees garage visiting", DOCS, [])
    assert not verdict.sufficient
    assert any("parking" in m for m in verdict.missing)
    assert not offline.judge_context("anything?", [], []).sufficient


def test_A7_two_inflected_forms_of_a_short_hungarian_stem_are_one_word():
    """ "egyek"/"egyen" (eszik): the fact "12 órán át ne egyen"."""
    assert matches("egyek", "egyen")
    assert not matches("opens", "operas")  # a two-letter stem ("op") joins nothing
    assert not matches("vér", "verset")  # a short word is no prefix of another word
    # the reflexive pronoun is a stop word, so "magammal" is no key word for "magát"
    assert {"magammal", "magát", "myself"} <= STOPWORDS
