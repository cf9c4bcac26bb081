"""Notely support: a LangChain developer's domain, written from the docs only."""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import ClassVar, Literal

from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    SqliteDocumentStore,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    documents_domain,
    ingest,
)

PAGES = Path(__file__).parent / "pages"
DIMENSIONS = 64


class HashingEmbeddings(Embeddings):
    """A tiny deterministic embedding: hashed bag of lower-cased words."""

    model_id = "notely-hashing-64"

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * DIMENSIONS
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            slot = int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIMENSIONS
            vec[slot] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


PLAN_LIMITS = {  # each line says "includes": the word people ask with (offline answers, A7)
    "free": [
        "The Free plan includes up to 100 notes, 1 GB of attachments and sharing with 5 people."
    ],
    "plus": [
        "The Plus plan includes unlimited notes and 20 GB of attachments, for 4 dollars a month."
    ],
    "team": [
        "The Team plan includes unlimited notes and sharing with 50 people, 8 dollars a person."
    ],
}


class PlanRequest(BaseModel):
    plan: Literal["free", "plus", "team"] | None = Field(
        default=None, description="The plan the user asks about"
    )


class PlanLimits(ChatbotTool[PlanRequest]):
    name = "plan_limits"
    domain = "notely"
    request_model = PlanRequest
    description = "The limits and price of each Notely plan (Free, Plus, Team)."
    instruction = "Fill plan with the plan the user names."
    executable_instruction = (
        "plan_limits: true when the user asks what a plan includes, its limits or its price."
    )
    routing_examples = ("What does the Plus plan include?", "How many notes can I keep on Free?")
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "FETCHING_DATA": {"en": "Looking up the plan"}
    }

    def execute(self, request: PlanRequest, ctx: ToolCallContext) -> ToolResult | None:
        ctx.progress("FETCHING_DATA")
        plans = [request.plan] if request.plan else list(PLAN_LIMITS)
        lines = [line for plan in plans for line in PLAN_LIMITS[plan]]
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="plans-table",
                    document_name="Plans table",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(lines, start=1)
            ],
        )


RESETS: dict[str, str] = {}  # the identity service: idempotency key -> account id


class ResetPassword(ChatbotTool[BaseModel]):
    name = "reset_password"
    domain = "notely"
    priority = 20
    description = "Sends a password reset link to the user's verified email address."
    executable_instruction = (
        "reset_password: true when the user asks to reset their password or cannot sign in "
        "because they forgot it."
    )
    routing_examples = ("Please reset my password.", "I forgot my password, reset it.")
    not_for = ("How long must a password be?", "How long is a reset link valid?")
    returns_answer = True
    side_effects = True
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "SENDING": {"en": "Sending the reset link"}
    }

    def is_eligible(self, user_data):  # type: ignore[no-untyped-def]
        return bool(user_data and user_data.get("account_id") and user_data.get("email_verified"))

    def execute(self, request: BaseModel, ctx: ToolCallContext) -> ToolResult | None:
        ctx.progress("SENDING")
        RESETS.setdefault(ctx.idempotency_key, "sent")
        return ToolResult.as_answer(
            self.name, "I sent a password reset link to your email; it expires in 30 minutes."
        )


def build_store(path: str = ":memory:") -> SqliteDocumentStore:
    store = SqliteDocumentStore(path, embeddings=HashingEmbeddings(), stopwords=["notely"])
    ingest([str(PAGES)], store, domain="notely-docs")
    return store


def load(store: SqliteDocumentStore | None = None):  # type: ignore[no-untyped-def]
    return documents_domain(
        "notely",
        store or build_store(),
        tools=[PlanLimits(), ResetPassword()],
        embeddings=HashingEmbeddings(),  # a store `toolweave ingest` filled is switched to it
    )
