"""A home-insurance claims desk (Hearthstone Home Insurance), built from the docs alone.

Tools of its own, beside the documents' retrieval that ``documents_domain`` gives:

- ``file_claim``: acts (``side_effects``), a finished answer (R3), for policyholders only
  (``is_eligible`` on ``customer_id``, T4); its pydantic request has the policy number,
  the date of loss and the kind of damage; the graph asks for a missing one (T13, Q1).
  Every call is counted in ``ClaimStore.calls``; one claim per idempotency key (Q6).
- ``excess_calculator``: a finished answer (R3) from a ``Literal`` field.
- ``claim_status``: guaranteed context (R5) from the store, policyholders only (T4).
- ``claim_helper``: a coordinator splitting "file a claim ... and tell me the deadline".
"""

from __future__ import annotations

import dataclasses
import datetime
import sqlite3
import threading
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    DocumentStore,
    Domain,
    EmptyRequest,
    SqliteDocumentStore,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    documents_domain,
    ingest,
)

PAGES = Path(__file__).resolve().parent / "pages"
DOMAIN = "claims"
DOCS = "claims-docs"
STOPWORDS = ["hearthstone"]
Damage = Literal["water", "fire", "storm", "theft", "accidental"]
EXCESS = {"water": 450, "fire": 250, "storm": 250, "theft": 250, "accidental": 250}


class ClaimStore:
    """The claims system: one claim per idempotency key, every call counted."""

    def __init__(self, path: str = ":memory:") -> None:
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.lock = threading.Lock()
        with self.db:
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, number INTEGER, "
                "policy TEXT, day TEXT, kind TEXT)"
            )
            self.db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT, policy TEXT)")

    def file(self, key: str, policy: str, day: str, kind: str) -> int:
        with self.lock, self.db:
            self.db.execute("INSERT INTO calls VALUES (?, ?)", (key, policy))
            row = self.db.execute("SELECT number FROM claims WHERE key = ?", (key,)).fetchone()
            if row is not None:
                return int(row[0])
            number = 1 + int(self.db.execute("SELECT COUNT(*) FROM claims").fetchone()[0])
            self.db.execute(
                "INSERT INTO claims VALUES (?, ?, ?, ?, ?)", (key, number, policy, day, kind)
            )
            return number

    def claims(self) -> list[tuple[str, str, str]]:
        with self.lock:
            rows = self.db.execute("SELECT policy, day, kind FROM claims ORDER BY number")
            return [(str(p), str(d), str(k)) for p, d, k in rows.fetchall()]

    def calls(self) -> list[str]:
        with self.lock:
            return [str(k) for (k,) in self.db.execute("SELECT key FROM calls").fetchall()]


class ClaimRequest(BaseModel):
    policy_number: str | None = Field(
        default=None,
        title="policy number",
        description="The policy number, HS- and six digits",
        pattern=r"^HS-\d{6}$",
        examples=["HS-204518"],
    )
    date_of_loss: datetime.date | None = Field(
        default=None, title="date of loss", description="The day the damage happened"
    )
    damage_kind: Damage | None = Field(
        default=None, title="kind of damage", description="What caused the damage"
    )


class FileClaim(ChatbotTool[ClaimRequest]):
    name = "file_claim"
    domain = DOMAIN
    priority = 20
    description = "Files a home-insurance claim for the policyholder."
    executable_instruction = (
        "file_claim: true when the user asks to file, make, open or register a claim."
    )
    routing_examples = (
        "I want to file a claim for water damage.",
        "Please file a claim: storm damage to my roof on policy HS-204518.",
        "Register a claim for the theft at my flat.",
    )
    not_for = (
        "How do I file a claim?",
        "How long do I have to file a claim?",
        "What do I need to file a claim?",
    )
    returns_answer = True
    side_effects = True
    request_model = ClaimRequest
    instruction = (
        "Fill policy_number with the policy number as written (HS- and six digits), "
        "date_of_loss with the day of the damage, damage_kind with its cause."
    )
    required_inputs = ("policy_number", "date_of_loss", "damage_kind")
    ask_for_missing_inputs = True
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {"FILING": {"en": "Filing your claim"}}

    def __init__(self, store: ClaimStore) -> None:
        self.store = store

    def is_eligible(self, user_data: dict[str, Any] | None) -> bool:
        return bool((user_data or {}).get("customer_id"))

    def execute(self, request: ClaimRequest, ctx: ToolCallContext) -> ToolResult | None:
        ctx.progress("FILING")
        policy = request.policy_number or ""
        day = request.date_of_loss.isoformat() if request.date_of_loss else ""
        kind = request.damage_kind or ""
        number = self.store.file(ctx.idempotency_key, policy, day, kind)
        return ToolResult.as_answer(
            self.name,
            f"Claim CL-{number:04d} filed: {kind} damage on {day}, policy {policy}. "
            "A loss adjuster will contact you.",
        )


class ExcessRequest(BaseModel):
    damage_kind: Damage | None = Field(default=None, title="kind of damage")


class ExcessCalculator(ChatbotTool[ExcessRequest]):
    name = "excess_calculator"
    domain = DOMAIN
    description = "Says the excess a policyholder pays on a claim for a kind of damage."
    executable_instruction = "excess_calculator: true when the user asks how much excess they pay."
    routing_examples = (
        "What excess do I pay for water damage?",
        "How much is the excess for storm damage?",
    )
    not_for = ("What is an excess?", "I want to file a claim for water damage.")
    returns_answer = True
    request_model = ExcessRequest

    def execute(self, request: ExcessRequest, ctx: ToolCallContext) -> ToolResult | None:
        if request.damage_kind is None:
            return None
        amount = EXCESS[request.damage_kind]
        return ToolResult.as_answer(
            self.name, f"The excess on a {request.damage_kind} claim is {amount} pounds."
        )


class ClaimStatus(ChatbotTool[EmptyRequest]):
    name = "claim_status"
    domain = DOMAIN
    description = "The status of the claims the policyholder filed."
    executable_instruction = "claim_status: true when the user asks about their filed claims."
    routing_examples = ("What is the status of my claim?", "Has my claim been decided?")

    def __init__(self, store: ClaimStore) -> None:
        self.store = store

    def is_eligible(self, user_data: dict[str, Any] | None) -> bool:
        return bool((user_data or {}).get("customer_id"))

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        claims = self.store.claims()
        if not claims:
            return ToolResult.as_guaranteed_context(self.name, "You have no claims filed.")
        lines = [
            f"Claim CL-{n:04d} ({kind} damage on {day}): being assessed."
            for n, (_policy, day, kind) in enumerate(claims, start=1)
        ]
        return ToolResult.as_guaranteed_context(self.name, "\n".join(lines))


class ClaimHelper(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Splits 'file a claim ... and tell me the deadline' into two forced parts."""

    name = "claim_helper"
    domain = DOMAIN

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        text = task.task_prompt.casefold()
        if task.task_no != "1" or "file" not in text or "deadline" not in text:
            return task
        first, _, _ = task.task_prompt.partition(" and ")
        task.sub_tasks = [  # the finished answer last: it ends the walk (S3)
            TaskInfo(
                task_no="",
                task_prompt="What are the claim deadlines?",
                required_tool_names=[f"{DOMAIN}_search"],
            ),
            TaskInfo(task_no="", task_prompt=first, required_tool_names=["file_claim"]),
        ]
        return task


def claims_store_from_pages() -> DocumentStore:
    store = SqliteDocumentStore(":memory:", stopwords=STOPWORDS)
    ingest([str(PAGES)], store, domain=DOCS)
    return store


def claims_domain(
    store: DocumentStore, claims: ClaimStore | None = None
) -> tuple[Domain, list[ChatbotTool[Any]]]:
    claims = claims or ClaimStore()
    own: list[ChatbotTool[Any]] = [
        FileClaim(claims),
        ExcessCalculator(),
        ClaimStatus(claims),
        ClaimHelper(),
    ]
    domain, tools = documents_domain(
        DOMAIN,
        store,
        tools=own,
        system_prompt="You answer Hearthstone Home Insurance policyholders' questions.",
        default_language="en",
    )
    return dataclasses.replace(domain), tools
