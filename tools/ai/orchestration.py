"""An AI system tool taking part in orchestration like a chatbot tool (W6 a)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import BaseModel

from toolweave.state.names import to_tool_name
from toolweave.state.results import ToolResult
from toolweave.tools.ai.base import AiTool, AiToolDefinition
from toolweave.tools.ai.inputs import class_name, request_model
from toolweave.tools.ai.prompts import EXTRACTION_INSTRUCTION
from toolweave.tools.ai.registry import AiToolRegistry, RegisteredAiTool
from toolweave.tools.base import ChatbotTool, ToolCallContext
from toolweave.tools.required import required_inputs


class AiChatbotTool(ChatbotTool[BaseModel]):
    """A chatbot-tool face of an AI system tool; made by :func:`as_chatbot_tool`."""

    ai_tool: ClassVar[AiTool]  # the AI tool singleton
    definition: ClassVar[AiToolDefinition]  # its checked definition

    def execute(self, request: BaseModel, ctx: ToolCallContext) -> ToolResult | None:
        """Not used: the graph runs AI tools itself (scope W3, input check W2)."""
        raise TypeError(f"{self.name} is an AI system tool: the graph's execute node runs it")

    def result_text(self, text: str, *, user_lang: str) -> str:
        """The AI tool's own reading of its output (:meth:`AiTool.result_text`, R10)."""
        return self.ai_tool.result_text(text, user_lang=user_lang)


def as_chatbot_tool(
    tool: RegisteredAiTool, *, domain: str | None = None, priority: int = 100
) -> AiChatbotTool:
    """The chatbot tool that lets ``tool`` be routed, extracted and run in orchestration."""
    definition = tool.definition
    name = to_tool_name(definition.id)
    model = request_model(definition)
    attributes: dict[str, Any] = {
        "name": name,
        "source_name": definition.id,
        "domain": domain,
        "priority": priority,
        "request_model": model,
        "required_inputs": required_inputs(definition.schema or {}, model),  # T13
        "instruction": EXTRACTION_INSTRUCTION.format(
            id=definition.id, ai_description=definition.ai_description
        ),
        "executable_instruction": f"{name}: {definition.ai_description}",
        "description": definition.user_description,
        "side_effects": definition.side_effects,  # A9: never on a yes in doubt; R7, Q6
        "takes_amendments": definition.takes_amendments,  # Q2, Q6: ctx.amends, else kept
        "routing_examples": definition.routing_examples,  # A9: what explains a yes to act
        "not_for": definition.not_for,  # A9: what speaks against it
        "ai_tool": tool.tool,
        "definition": definition,
    }
    cls = type(class_name(definition.id, "ChatbotTool"), (AiChatbotTool,), attributes)
    instance: AiChatbotTool = cls()
    return instance


def as_chatbot_tools(
    registry: AiToolRegistry | Iterable[AiTool], *, domain: str | None = None
) -> list[AiChatbotTool]:
    """Every AI tool of ``registry`` as a chatbot tool, in registration order."""
    tools = registry if isinstance(registry, AiToolRegistry) else AiToolRegistry(registry)
    return [as_chatbot_tool(entry, domain=domain) for entry in tools]


def ai_definitions(tools: Iterable[Any]) -> list[AiToolDefinition]:
    """The AI tools among a domain's tools (e.g. to serve their client scripts, W4)."""
    return [tool.definition for tool in tools if isinstance(tool, AiChatbotTool)]


def client_scripts(tools: Iterable[Any]) -> dict[str, str]:
    """The client scripts of the AI tools among ``tools``, by tool id, for a page to load (W4)."""
    found = ((each.id, each.client_script_source()) for each in ai_definitions(tools))
    return {tool_id: source for tool_id, source in found if source is not None}
