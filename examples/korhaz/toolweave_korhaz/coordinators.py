"""The korhaz coordinators: ``drug_interaction`` and ``doctor_finder`` (C1, K1-K3, B4, M6).

Both decide from a structured extraction by the model, as seed 001's example
coordinator does (§6.1): each declares a decomposition schema that the engine
fills through the LLM port from the task prompt (the offline model fills it
from the schema's known values and cue words), and builds its subtasks from
the filled object. The deterministic parts stay tools: the substance table
(``substance_lookup``) and the staff directory (``doctor_directory``).

``drug_interaction`` (seed 001's ``InteractionAnalysisTool``) splits "can I take
A with B?" into one ``substance_lookup`` subtask per medicine, then, forced on
the parent, applies the bundled interaction table to the subtasks' guaranteed
results and answers (R3). ``doctor_finder`` splits "where does dr. X see
patients?" into a cheap ``doctor_directory`` lookup and a conditional full-text
search that runs only when the directory knows no such doctor (K3).

Both leave a task they are not meant for unchanged (C1), and both leave a task
alone that another coordinator already split or forced.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from toolweave.coordinators.base import CompletedSoFar, DecomposingCoordinator, SubtaskDecision
from toolweave.llm.lexical import detect_language, fold, matches, words
from toolweave.llm.offline_extract import extract_request
from toolweave.state.results import ToolResult
from toolweave.state.task import PromptAndContext, TaskInfo
from toolweave.tools.base import EmptyRequest, PriorContext, ToolCallContext
from toolweave.tools.consumers import ContextConsumerTool
from toolweave.tools.domain import WithheldKind
from toolweave_korhaz.corpus import DOMAIN_NAME
from toolweave_korhaz.doctors import Doctor, doctor_by_id, doctors
from toolweave_korhaz.interactions import interaction_report
from toolweave_korhaz.lookup_tools import DOCTOR_DIRECTORY, SUBSTANCE_LOOKUP
from toolweave_korhaz.substances import (
    Substance,
    bundled_json,
    find_mentions,
    substance_by_id,
    substances,
)

MAX_SUBSTANCES = 5
"""Most substances one question is split into (X3)."""
MAX_NAME_CHARS = 80
"""Longest medicine or doctor name taken from the model into a subtask prompt (X3)."""

TOGETHER_CUES = (
    *("együtt", "egyszerre", "interakció", "kölcsönhatás", "kombinál"),
    *("szed", "bevesz", "bevehet", "használ", "biztonságos"),
    *("together", "with", "alongside", "while", "plus", "interaction", "interact", "combine"),
    *("take", "use", "safe", "mix"),
)
"""What the offline model reads as "asks about taking medicines together" (a real model
reads the field's description)."""

DOCTOR_TITLES = ("dr", "doktor", "prof", "professzor")
"""Titles a doctor's name follows; the offline model takes the words after one."""

_SUBSTANCE_PROMPT = {
    "hu": "Melyik hatóanyag ez, és milyen kölcsönhatási csoportokba tartozik: {surface}?",
    "en": "Which active substance is {surface}, and which interaction classes does it have?",
}
_DIRECTORY_PROMPT = {
    "hu": "{name} adatai az orvos-névjegyzékben: osztály, szoba, rendelési idő, telefonszám.",
    "en": "{name} in the staff directory: department, room, consultation hours, phone.",
}
_SEARCH_PROMPT = {
    "hu": "Hol és mikor rendel vagy fogad betegeket {name}? Rendelő, rendelési idő, fogadóóra.",
    "en": "Where and when does {name} see patients? Room, consultation hours, office hours.",
}


def _lang(text: str) -> str:
    return "hu" if detect_language(text, default="hu") == "hu" else "en"


def _medicine_names() -> list[str]:
    """Every name the table knows: substances, brands, aliases and group names."""
    names = [n for s in substances() for n in (s.name_en, s.name_hu, *s.aliases)]
    names += [a for group in bundled_json("substances.json")["groups"] for a in group["aliases"]]
    return list(dict.fromkeys(names))


def asks_about_taking_medicines(question: str) -> bool:
    """Whether ``question`` names a medicine and asks about taking it (with something)."""
    found = extract_request(question, InteractionDecomposition) or {}
    return bool(found.get("takes_together")) and bool(find_mentions(question))


class InteractionDecomposition(BaseModel):
    """Whether the user asks about taking medicines together, and which ones."""

    takes_together: bool = Field(
        default=False,
        description="True when the user asks whether medicines can be taken, used or "
        "combined together, or about an interaction between them; false for other "
        "questions about medicines (what they are, their differences, side effects).",
        json_schema_extra={"cues": list(TOGETHER_CUES)},
    )
    medicines: list[str] = Field(
        default_factory=list,
        description="Every medicine, active substance, brand or kind of medicine (such as "
        "'blood thinner') the user names, in the order named, each as written.",
        json_schema_extra={"known_values": list(_medicine_names())},
    )


class DoctorDecomposition(BaseModel):
    """The doctor the user asks about, if any."""

    doctor_name: str | None = Field(
        default=None,
        description="The name of the doctor the user asks about, as written, without the "
        "title; null when the user names no doctor.",
        json_schema_extra={
            "known_values": [d.name("hu").removeprefix("dr. ") for d in doctors()],
            "after_cues": list(DOCTOR_TITLES),
        },
    )


def _children_results(
    prior_context: PriorContext, task_no: str, tool: str
) -> list[Sequence[PromptAndContext]]:
    """The entries ``tool`` left on the direct subtasks of ``task_no``, in subtask order."""
    found: list[tuple[int, Sequence[PromptAndContext]]] = []
    for key, entries in prior_context.items():
        child, _, name = key.rpartition(":")
        parent, _, index = child.rpartition(".")
        if name == tool and parent == task_no and index.isdigit():
            found.append((int(index), entries))
    return [entries for _, entries in sorted(found, key=lambda item: item[0])]


def _medicines(text: str, named: Sequence[str]) -> list[str]:
    """The table's finds in ``text`` and the model's other names, in order of mention."""
    found = [m.surface for m in find_mentions(text)]
    extra = [n.strip() for n in named if n.strip() and not any(_same(n, f) for f in found)]
    folded = fold(text)
    ordered = sorted([*found, *extra], key=lambda n: folded.find(fold(n)) % (len(folded) + 1))
    return list(dict.fromkeys(n[:MAX_NAME_CHARS] for n in ordered))


def _same(a: str, b: str) -> bool:
    """Whether two names share a word (in some form): one medicine, one doctor."""
    return any(matches(x, y) for x in words(a) for y in words(b))


def _doctor(text: str, named: str | None) -> str | None:
    """The doctor the text points to (a title or a known name), as the model or text has it."""
    found = extract_request(text, DoctorDecomposition) or {}
    pointed = str(found.get("doctor_name") or "").strip()
    if not pointed:
        return None
    model = (named or "").strip()
    close = model and all(_same(word, pointed) for word in words(model))
    return (model if close else pointed)[:MAX_NAME_CHARS]


def _claimed(task: TaskInfo) -> bool:
    return bool(task.sub_tasks or task.required_tool_names)


MEDICATION_ADVICE = WithheldKind(
    name="medication advice",
    applies=asks_about_taking_medicines,
    texts={  # also for one medicine: "How much paracetamol can I take in a day?"
        "hu": "Gyógyszerek szedéséről nem adhatok tanácsot, és a kórház "
        "gyógyszer-kölcsönhatási táblázata erre a kérdésre nem ad választ. Kérdezze "
        "kezelőorvosát vagy gyógyszerészét.",
        "en": "I cannot give advice on taking medicines, and the hospital's drug "
        "interaction table does not answer this question. Please ask your doctor or "
        "pharmacist.",
    },
)
"""A medicine question that no drug tool answered gets this, never a generated yes or no."""


class DrugInteractionCoordinator(
    ContextConsumerTool[EmptyRequest], DecomposingCoordinator[InteractionDecomposition]
):
    """Can these medicines be taken together? One lookup subtask per medicine, then the table."""

    name = "drug_interaction"
    domain = DOMAIN_NAME
    priority = 30
    returns_answer = True
    request_model = EmptyRequest
    executable_instruction = (
        "drug_interaction: true when the user asks whether two or more medicines can be "
        "taken together, or asks about an interaction between drugs. "
        "Együtt szedhető-e két orvosság, kölcsönhatás, interakció."
    )
    routing_examples = (  # A9
        "Can I take ibuprofen together with aspirin?",
        "Is it safe to combine warfarin and paracetamol?",
        "Bevehetem együtt az algopyrint és a cataflamot?",
    )
    not_for = (  # A9: questions about one medicine
        "What is ibuprofen used for?",
        "What are the side effects of aspirin?",
        "How many paracetamol tablets can I take a day?",
        "Mennyi paracetamolt vehetek be naponta?",
        "Mire jó és mik a mellékhatásai az aszpirinnek?",
    )
    description = (
        "Drug interaction check between medicines taken together. "
        "Orvosságok kölcsönhatásának ellenőrzése."
    )

    decomposition_model = InteractionDecomposition
    decomposition_instruction = (
        "does the user ask about taking medicines together, and which medicines are named?"
    )

    def may_apply(self, task_prompt: str) -> bool:
        """Only a text naming a medicine or a cue of taking things together (A10)."""
        return self.hints_found(task_prompt)

    def decompose_from(self, task: TaskInfo, decomposition: InteractionDecomposition) -> TaskInfo:
        """A subtask per named medicine, forced to ``substance_lookup``; the parent forced to me.

        The medicines are the substance table's finds in the task's text joined by
        the model's (grounded) names that the table missed (C1), in order of mention.
        """
        names = _medicines(task.task_prompt, decomposition.medicines)
        if _claimed(task) or not decomposition.takes_together or len(names) < 2:
            return task
        template = _SUBSTANCE_PROMPT[_lang(task.task_prompt)]
        task.sub_tasks = [
            TaskInfo(
                task_no=f"{task.task_no}.{index}",
                task_prompt=template.format(surface=name),
                important_words=[name],
                prompt_type=task.prompt_type,
                required_tool_names=[SUBSTANCE_LOOKUP],
            )
            for index, name in enumerate(names[:MAX_SUBSTANCES], start=1)
        ]
        task.required_tool_names = [self.name]
        return task

    def execute_with_prior_context(
        self, request: EmptyRequest, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        """The interaction answer (R3) from the subtasks' lookups, or ``None`` with < 2 substances.

        When routed without subtasks, the unambiguous names of the task's own
        prompt are used instead (a direct lookup, B5).
        """
        ctx.progress("CHECKING")
        found = self._from_subtasks(prior_context, ctx.task_no)
        if len(found) < 2:
            mentions = find_mentions(ctx.task.task_prompt)
            found = [(m.surface, m.candidates[0]) for m in mentions if not m.ambiguous]
        if len(found) < 2:
            return None
        written, substances = [w for w, _ in found], [s for _, s in found]
        return ToolResult.as_answer(
            self.name, interaction_report(substances, ctx.user_lang, written)
        )

    @staticmethod
    def _from_subtasks(prior_context: PriorContext, task_no: str) -> list[tuple[str, Substance]]:
        """``(name as written, substance)`` from the subtasks' guaranteed JSON answers (M6)."""
        found: list[tuple[str, Substance]] = []
        for entries in _children_results(prior_context, task_no, SUBSTANCE_LOOKUP):
            for entry in entries:
                try:
                    payload = json.loads(entry.context)
                    substance = substance_by_id(str(payload["substance"]))
                    written = str(payload.get("query") or "")
                except (ValueError, TypeError, KeyError, AttributeError):
                    continue
                if substance is not None:
                    found.append((written or substance.name_en, substance))
        return found


class DoctorFinderCoordinator(
    ContextConsumerTool[EmptyRequest], DecomposingCoordinator[DoctorDecomposition]
):
    """Where does dr. X see patients? The directory first, the full-text search only if needed.

    Args:
        search_tool: The domain's full-text search tool that the conditional broad
            subtask is forced to.
    """

    name = "doctor_finder"
    domain = DOMAIN_NAME
    priority = 35
    request_model = EmptyRequest
    executable_instruction = None
    description = "Finds a doctor: the staff directory first, then the hospital's documents."

    decomposition_model = DoctorDecomposition
    decomposition_instruction = "which doctor does the user ask about, if any?"

    def __init__(self, search_tool: str = "korhaz_search") -> None:
        self.search_tool = search_tool

    def may_apply(self, task_prompt: str) -> bool:
        """Only a text with a doctor's title or a name the directory knows (A10)."""
        return self.hints_found(task_prompt)

    def decompose_from(self, task: TaskInfo, decomposition: DoctorDecomposition) -> TaskInfo:
        """A directory subtask and a conditional search subtask for the named doctor.

        The task is claimed only for a doctor the text itself points to (C1): a
        name after a title or one the directory knows (the schema's hints). The
        model's name is kept when it is that name written out (``"kovács anna"``
        for ``"Kovács Anna"``), not when it has a word the name lacks (``"Anna
        Doktornő"``: the title taken for a surname); a weekday, a department or the
        question it puts there leaves the task to routing.
        """
        written = _doctor(task.task_prompt, decomposition.doctor_name)
        if _claimed(task) or not written:
            return task
        lang = _lang(task.task_prompt)
        titled = written.split(maxsplit=1)[0].rstrip(".").lower() in DOCTOR_TITLES
        name = written if titled else f"dr. {written}"
        base = task.task_no
        narrow = TaskInfo(
            task_no=f"{base}.1",
            task_prompt=_DIRECTORY_PROMPT[lang].format(name=name),
            important_words=[name],
            prompt_type=task.prompt_type,
            required_tool_names=[DOCTOR_DIRECTORY],
        )
        broad = TaskInfo(
            task_no=f"{base}.2",
            task_prompt=_SEARCH_PROMPT[lang].format(name=name),
            important_words=[name],
            prompt_type=task.prompt_type,
            required_tool_names=[self.search_tool],
            conditional=True,
        )
        task.sub_tasks = [narrow, broad]
        task.required_tool_names = [self.name]
        return task

    def decide_conditional_subtask(
        self, parent_task: TaskInfo, next_subtask: TaskInfo, completed_so_far: CompletedSoFar
    ) -> SubtaskDecision:
        """SKIP the broad search when the directory step before it found the doctor (K3)."""
        parent, _, index = next_subtask.task_no.rpartition(".")
        narrow_no = f"{parent}.{int(index) - 1}" if index.isdigit() else ""
        entries = completed_so_far.get(f"{narrow_no}:{DOCTOR_DIRECTORY}", ())
        found = any(entry.context.strip() for entry in entries)
        return SubtaskDecision.SKIP if found else SubtaskDecision.RUN

    def execute_with_prior_context(
        self, request: EmptyRequest, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        """The directory entry as a finished answer (R3); ``None`` lets the search answer."""
        doctors: list[Doctor] = []
        for entries in _children_results(prior_context, ctx.task_no, DOCTOR_DIRECTORY):
            for entry in entries:
                try:
                    listed = json.loads(entry.context).get("doctors", [])
                except (ValueError, AttributeError):
                    continue
                doctors += [d for d in (doctor_by_id(str(x.get("id"))) for x in listed) if d]
        if not doctors:
            return None
        unique = list({d.id: d for d in doctors}.values())
        return ToolResult.as_answer(self.name, "\n".join(d.describe(ctx.user_lang) for d in unique))


__all__ = [
    "DOCTOR_TITLES",
    "MAX_SUBSTANCES",
    "MEDICATION_ADVICE",
    "TOGETHER_CUES",
    "DoctorDecomposition",
    "DoctorFinderCoordinator",
    "DrugInteractionCoordinator",
    "InteractionDecomposition",
    "asks_about_taking_medicines",
]
