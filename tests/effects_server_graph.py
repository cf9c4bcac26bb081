"""A test-only toolweave graph for ``langgraph dev``: a counter that acts, then a slow answer.

``tests/test_effects_double_texting.py`` loads it by path. ``count_up`` acts
(``side_effects = True``) without deduping on its key: each call appends one line,
``<key> <question>``, to the file named by ``TOOLWEAVE_TEST_EFFECTS_FILE`` (the server
is another process). The answer then takes ``SLOW_ANSWER_S`` seconds, so a second
message can arrive while the first run is still going, after its tool acted.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, ClassVar

from toolweave import ChatbotTool, EmptyRequest, ToolCallContext, ToolResult, build_graph
from toolweave.testing import FunctionAssistant

SLOW_ANSWER_S = 4.0
EFFECTS_FILE = "TOOLWEAVE_TEST_EFFECTS_FILE"


class CountUp(ChatbotTool[EmptyRequest]):
    """Adds one to a tally kept in a file: one line per call, no deduplication by key."""

    name = "count_up"
    domain = "tally"
    side_effects: ClassVar[bool] = True
    executable_instruction = "count_up: true when the user asks to count one up"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        path = Path(os.environ[EFFECTS_FILE])
        with path.open("a", encoding="utf-8") as effects:
            effects.write(f"{ctx.idempotency_key} {ctx.text.splitlines()[0]}\n")
        return ToolResult.as_guaranteed_context(self.name, "Counted one up.")


async def _slow_answer(request: Any) -> str:
    await asyncio.sleep(SLOW_ANSWER_S)  # the server runs the graph async (no blocking call)
    return "\n".join(request.guaranteed)


graph = build_graph(
    "tally",
    [CountUp()],
    assistant=FunctionAssistant(route=lambda text, tools: ["count_up"], answer=_slow_answer),
)
