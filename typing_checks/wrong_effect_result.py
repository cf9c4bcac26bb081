"""Expected type errors: step generators that use an effect's result as the wrong type.

``scripts/typecheck.sh`` runs mypy --strict on this module and fails the
type-check step unless mypy rejects every line marked ``# must not type-check``
(issue 16 item 1): if one passes, effect results are no longer typed, and a
step that misreads a model's or a tool's reply would fail only at run time.
"""

from __future__ import annotations

from toolweave.llm.port import LlmAssistant, Normalized
from toolweave.tools.ai.base import AiTool, execution
from toolweave.tools.effects import Call, Steps, perform


def words_of(reply: Call[Normalized]) -> Steps[int]:
    """Treats the normalized reply as text."""
    normalized = yield from perform(reply)
    return len(normalized.split())  # must not type-check


def routed_names(llm: LlmAssistant, prompt: str) -> Steps[list[str]]:
    """Treats the routing verdicts as tool names."""
    verdicts = yield from llm.route_steps(prompt, [])
    return verdicts  # must not type-check


def tool_output_size(tool: AiTool) -> Steps[int]:
    """Treats an AI tool's text output as a number."""
    output = yield from perform(execution(tool, "{}"))
    return output + 1  # must not type-check
