"""The Riverton permits office: a seventh test domain, written from the docs alone.

Every tool is async-first (``aexecute`` only, as the tools page's "Async tools" says
serves scripts and servers alike): a fee table (context, a ``Literal`` request field),
the inspection rules (guaranteed context), the person's application status (a streamed
answer, R4, gated on ``applicant_id``, T4), a coordinator that splits "how much ... and
does it need an inspection?" into a forced and a conditional subtask (F1, K1-K4), and a
CLIENT AI tool that fills the side panel's permit form in the browser (W3).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    AgentCoordinator,
    AiTool,
    AiToolBuilder,
    AiToolRegistry,
    AiToolScope,
    ChatbotTool,
    CompletedSoFar,
    DocumentStore,
    Domain,
    EmptyRequest,
    SubtaskDecision,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    ai_tool_script,
    as_chatbot_tools,
    documents_domain,
)

DOMAIN = "permits"
DOCS = "permits-docs"  # `toolweave ingest pages/ --domain permits-docs`
PAGES = Path(__file__).with_name("pages")
SITE = "https://permits.riverton.example"

Permit = Literal["fence", "building", "event", "parking"]

# the office's fee table: what the pages say, as a tool would read it from a back office
FEES: dict[str, dict[str, Any]] = {
    "fence": {"fee": "45 euros", "decided": "within 10 working days", "inspections": []},
    "building": {
        "fee": "320 euros, and 2 euros for every square metre above 40 square metres",
        "decided": "within 8 weeks",
        "inspections": ["when the foundations are laid", "when the building is finished"],
    },
    "event": {"fee": "30 euros (free for a street party of one street)", "inspections": []},
    "parking": {"fee": "60 euros a year", "inspections": []},
}

# applications by applicant id: what a case-management system would return
APPLICATIONS: dict[str, list[str]] = {
    "A-1001": [
        "Application BP-2231 (building permit, 3 Orchard Lane) is under review.",
        "The planning officer asked for the drainage plan on 2 December.",
        "A decision is expected by 20 January.",
    ],
    "A-1002": [
        "Application FP-0917 (fence permit, 11 Quarry Road) was approved on 1 December.",
        "The permit letter was sent by post.",
    ],
}


class FeeRequest(BaseModel):
    """Which permit the question is about."""

    permit: Permit | None = Field(default=None, description="The kind of permit asked about")


class PermitFees(ChatbotTool[FeeRequest]):
    """The fee table: one line per fact of the permit asked about (R2)."""

    name = "permit_fees"
    domain = DOMAIN
    description = "Fees and decision times of fence, building, event and parking permits."
    request_model = FeeRequest
    instruction = "Fill permit with the kind of permit the user asks about."
    executable_instruction = (
        "permit_fees: true when the user asks what a permit costs or how much its fee is."
    )
    routing_examples = (
        "How much does a fence permit cost?",
        "What is the fee for a building permit?",
    )
    not_for = ("How do I appeal a refused permit?",)
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "FETCHING_DATA": {"en": "Looking up the fee table"}
    }

    async def aexecute(self, request: FeeRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Read the fee table, as an async back-office call would."""
        permit = request.permit or permit_in(ctx.task.task_prompt)
        if permit is None:
            return None  # not mine (R1)
        ctx.progress("FETCHING_DATA")
        await asyncio.sleep(0)  # the back office's I/O
        row = FEES[permit]
        lines = [f"A {permit} permit costs {row['fee']}."]
        if "decided" in row:
            lines.append(f"A {permit} permit is decided {row['decided']}.")
        return ToolResult.as_context(self.name, fee_documents(permit, lines))


class InspectionRules(ChatbotTool[FeeRequest]):
    """Whether a permit's works are inspected, and how to book (R5)."""

    name = "inspection_rules"
    domain = DOMAIN
    description = "Which permits need an inspection of the works, and how to book one."
    request_model = FeeRequest
    executable_instruction = (
        "inspection_rules: true when the user asks whether works need an inspection."
    )
    routing_examples = ("Does an extension need an inspection?",)

    async def aexecute(self, request: FeeRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Say the inspections of the permit asked about."""
        permit = request.permit or permit_in(ctx.task.task_prompt)
        if permit is None:
            return None
        visits = FEES[permit]["inspections"]
        if not visits:
            text = f"A {permit} permit needs no inspection."
        else:
            text = (
                f"The works of a {permit} permit are inspected {len(visits)} times: "
                + " and ".join(visits)
                + ". Book each inspection at least 5 working days ahead on 0400 118 240."
            )
        return ToolResult.as_guaranteed_context(self.name, text)


class ApplicationStatus(ChatbotTool[EmptyRequest]):
    """The person's own applications, streamed line by line (R4), for applicants (T4)."""

    name = "application_status"
    domain = DOMAIN
    returns_answer = True
    description = "The status of the applicant's own permit applications."
    executable_instruction = (
        "application_status: true when the user asks about the status of their own "
        "application or whether it was decided."
    )
    routing_examples = (
        "What is the status of my application?",
        "Has my permit application been decided?",
    )
    not_for = ("How long does a fence permit take to be decided?",)

    def is_eligible(self, user_data: Mapping[str, Any] | None) -> bool:
        """Applicants only: the data names an applicant id."""
        return bool(user_data and user_data.get("applicant_id"))

    async def aexecute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Stream the applicant's status lines as the case system returns them."""
        lines = APPLICATIONS.get(str((ctx.user_data or {}).get("applicant_id")))
        if not lines:
            return ToolResult.as_answer(self.name, "We have no application under your id.")

        async def chunks() -> AsyncIterator[str]:
            for line in lines:
                await asyncio.sleep(0)  # the case system's paging
                yield line + "\n"

        await ctx.astream_answer(chunks())
        return ToolResult.as_answered(self.name)


class PermitPlanner(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Splits "how much ... and does it need an inspection?" into two subtasks (K1)."""

    name = "permit_planner"
    domain = DOMAIN
    priority = 10
    executable_instruction = None  # a coordinator: runs before routing on every task (C2)

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        """A fee subtask (forced) and an inspection subtask (conditional)."""
        prompt = task.task_prompt.lower()
        permit = permit_in(prompt)
        if permit is None or "inspect" not in prompt or task.sub_tasks:
            return task  # not mine (C1)
        task.sub_tasks = [
            TaskInfo(
                task_no="",
                task_prompt=f"How much does a {permit} permit cost?",
                required_tool_names=[PermitFees.name],
            ),
            TaskInfo(
                task_no="",
                task_prompt=f"Does a {permit} permit need an inspection?",
                required_tool_names=[InspectionRules.name],
                conditional=True,
            ),
        ]
        return task

    def decide_conditional_subtask(
        self, parent_task: TaskInfo, next_subtask: TaskInfo, completed_so_far: CompletedSoFar
    ) -> SubtaskDecision:
        """Ask about inspections only for a permit whose fee was found and that has them."""
        for key, entries in completed_so_far.items():
            if not key.endswith(f":{PermitFees.name}"):
                continue
            for entry in entries:
                permit = permit_in(entry.context)
                if permit is not None and FEES[permit]["inspections"]:
                    return SubtaskDecision.RUN
        return SubtaskDecision.SKIP


FORM_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "permit_type": {
                "type": "string",
                "enum": ["fence", "building", "event", "parking"],
                "description": "The kind of permit",
            },
            "address": {"type": "string", "description": "The address of the works"},
        },
        "required": ["permit_type"],
    }
)


@ai_tool_script("js/fill_permit_form.js")
class FillPermitForm(AiTool):
    """Fills the side panel's permit application form in the browser (CLIENT, W3)."""

    def define(self, builder: AiToolBuilder) -> None:
        """The tool's id, texts, schema and scope."""
        (
            builder.id("fill_permit_form")
            .name("Permit application form")
            .user_description("Fills in the permit application form on the page.")
            .ai_description("true when the user asks to fill in or start a permit application form")
            .input_json_schema(FORM_SCHEMA)
            .scope(AiToolScope.CLIENT)
        )

    async def aexecute(self, input: str) -> str:
        """Never called: a CLIENT tool runs only in the browser (W3)."""
        raise NotImplementedError


def ai_tools() -> AiToolRegistry:
    """The office's AI tools."""
    registry = AiToolRegistry()
    registry.register(FillPermitForm())
    return registry


def permit_in(text: str) -> Permit | None:
    """The first kind of permit a text names."""
    lowered = text.lower()
    words = {
        "fence": "fence",
        "wall": "fence",
        "building": "building",
        "extension": "building",
        "garage": "building",
        "event": "event",
        "street party": "event",
        "parking": "parking",
    }
    for word, permit in words.items():
        if word in lowered:
            return permit  # type: ignore[return-value]
    return None


def fee_documents(permit: str, lines: list[str]) -> list[UniqueTextDocument]:
    """The fee lines as documents of the office's fee page."""
    return [
        UniqueTextDocument(
            document_id=f"fees-{permit}",
            document_name="Permit fees",
            document_url=f"{SITE}/fees",
            sentence_number=n,
            text=line,
        )
        for n, line in enumerate(lines, start=1)
    ]


def own_tools() -> list[ChatbotTool[Any]]:
    """The office's chatbot tools, its AI tools among them."""
    return [
        PermitFees(),
        InspectionRules(),
        ApplicationStatus(),
        PermitPlanner(),
        *as_chatbot_tools(ai_tools(), domain=DOMAIN),
    ]


def office_domain(store: DocumentStore) -> tuple[Domain, list[ChatbotTool[Any]]]:
    """The domain over a store holding the pages, with the office's tools."""
    return documents_domain(
        DOMAIN,
        store,
        tools=own_tools(),
        system_prompt="You answer questions about the Riverton permits office.",
    )
