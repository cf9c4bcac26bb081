"""Small tools and helpers shared by the graph tests (no LLM anywhere)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    ContextConsumerTool,
    EmptyRequest,
    PriorContext,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    build_graph,
)
from toolweave.testing import FunctionAssistant

Calls = list[tuple[str, str]]


def doc(
    doc_id: str, text: str, *, page: int | None = 1, sentence: int | None = 1, score: float = 1.0
) -> UniqueTextDocument:
    return UniqueTextDocument(
        document_id=doc_id,
        document_name=doc_id,
        page=page,
        sentence_number=sentence,
        text=text,
        sentence_score=score,
    )


class CityRequest(BaseModel):
    city: str | None = Field(default=None, description="The city asked about")


def make_tool(
    name: str,
    *,
    calls: Calls | None = None,
    result: Callable[[str, ToolCallContext], ToolResult | None] | None = None,
    priority: int = 100,
    routing: str | None = "",
    domain: str | None = None,
    eligible_system: Any = None,
    eligible: bool | Callable[[Any], bool] = True,
    supplement: str | None = None,
    request_model: type[BaseModel] = CityRequest,
) -> ChatbotTool[Any]:
    """A tool class made on the fly; records ``(task_no, name)`` into ``calls``."""

    def execute(self: ChatbotTool[Any], request: BaseModel, ctx: ToolCallContext) -> Any:
        if calls is not None:
            calls.append((ctx.task_no, name))
        if result is not None:
            return result(name, ctx)
        return ToolResult.as_context(name, [doc(f"{name}-doc", f"{name} says hi")])

    def is_eligible(self: ChatbotTool[Any], user_data: Any) -> bool:
        return eligible(user_data) if callable(eligible) else eligible

    attrs = {
        "name": name,
        "priority": priority,
        "domain": domain,
        "eligible_system": eligible_system,
        "executable_instruction": (routing or f"{name}: true when asked about {name}")
        if routing is not None
        else None,
        "system_prompt_supplement": supplement,
        "request_model": request_model,
        "execute": execute,
        "is_eligible": is_eligible,
    }
    cls = type(f"Tool_{name}", (ChatbotTool,), attrs)
    return cls()  # type: ignore[no-any-return]


class ScriptedCoordinator(ChatbotTool[Any], AgentCoordinator):
    """A coordinator whose decomposition is a plain function of the task."""

    def __init__(
        self,
        name: str,
        decompose: Callable[[TaskInfo], TaskInfo | None],
        *,
        priority: int = 10,
        decide: Callable[..., Any] | None = None,
        calls: list[str] | None = None,
    ) -> None:
        self.name = name  # type: ignore[misc]
        self.priority = priority  # type: ignore[misc]
        self._decompose = decompose
        self._decide = decide
        self._calls = calls

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        if self._calls is not None:
            self._calls.append(f"{self.name}@{task.task_no}")
        out = self._decompose(task)
        return task if out is None else out

    def decide_conditional_subtask(
        self, parent_task: TaskInfo, next_subtask: TaskInfo, completed_so_far: Any
    ) -> Any:
        if self._decide is None:
            return super().decide_conditional_subtask(parent_task, next_subtask, completed_so_far)
        return self._decide(parent_task, next_subtask, completed_so_far)


class RecordingConsumer(ContextConsumerTool[Any]):
    """A context consumer that records the prior context it was given."""

    name = "consumer"
    executable_instruction = None

    def __init__(self) -> None:
        self.seen: list[dict[str, list[str]]] = []

    def execute_with_prior_context(
        self, request: Any, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        self.seen.append({k: [e.context for e in v] for k, v in prior_context.items()})
        return ToolResult.as_guaranteed_context(self.name, f"consumed {sorted(prior_context)}")


def route_by_name(task_text: str, tools: Sequence[ChatbotTool[Any]]) -> list[str]:
    """A routing function: a tool runs when its name occurs in the task text."""
    return [t.name for t in tools if t.name in task_text]


def ask(graph: Any, text: str, **inputs: Any) -> dict[str, Any]:
    config = {"configurable": {"thread_id": inputs.pop("thread_id", "t")}}
    return graph.invoke({"messages": [HumanMessage(text)], **inputs}, config)  # type: ignore[no-any-return]


def graph_of(
    tools: Iterable[Any], *, domain: str = "test", assistant: Any = None, **kwargs: Any
) -> Any:
    return build_graph(
        domain, list(tools), assistant=assistant or FunctionAssistant(route=route_by_name), **kwargs
    )


# -- a help desk whose one tool acts (A9, Q6) ------------------------------------------


class OpenTicket(ChatbotTool[EmptyRequest]):
    """Opens a ticket (acts), and says so as context: no finished answer."""

    name = "open_ticket"
    domain = "desk"
    side_effects: ClassVar[bool] = True
    executable_instruction = "open_ticket: true when the user asks to open a ticket"

    def __init__(self) -> None:
        self.opened: list[str] = []

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.opened.append(ctx.idempotency_key)
        return ToolResult.as_guaranteed_context(self.name, f"Ticket HD-{len(self.opened)} opened.")


class TicketProgress(ChatbotTool[EmptyRequest]):
    """Tells how tickets progress (context; acts on nothing)."""

    name = "ticket_progress"
    domain = "desk"
    executable_instruction = (
        "ticket_progress: true when the user asks about the progress of an existing ticket"
    )

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_guaranteed_context(self.name, "Tickets are answered within a day.")
