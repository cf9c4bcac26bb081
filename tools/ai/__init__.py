"""AI system tools (SPEC §14, seed 002): builder, JSON-schema input, scope, registry (W1-W6)."""

from toolweave.tools.ai.base import (
    AiTool,
    AiToolBuilder,
    AiToolDefinition,
    AiToolDefinitionError,
    AiToolScope,
    ai_tool_script,
    define_tool,
)
from toolweave.tools.ai.inputs import InputCheck, check_input, input_text, request_model
from toolweave.tools.ai.orchestration import (
    AiChatbotTool,
    ai_definitions,
    as_chatbot_tool,
    as_chatbot_tools,
    client_scripts,
)
from toolweave.tools.ai.registry import AiToolRegistry, RegisteredAiTool

__all__ = [
    "AiChatbotTool",
    "AiTool",
    "AiToolBuilder",
    "AiToolDefinition",
    "AiToolDefinitionError",
    "AiToolRegistry",
    "AiToolScope",
    "InputCheck",
    "RegisteredAiTool",
    "ai_definitions",
    "ai_tool_script",
    "as_chatbot_tool",
    "as_chatbot_tools",
    "check_input",
    "client_scripts",
    "define_tool",
    "input_text",
    "request_model",
]
