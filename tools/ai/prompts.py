"""Prompts of AI system tools, filled by the graph (W2, W6 a)."""

from __future__ import annotations

EXTRACTION_INSTRUCTION = (
    "Fill the input of {id} from the text, as its description says: {ai_description}"
)
"""An AI tool request's extraction instruction (T7); placeholders ``id``, ``ai_description``."""

INPUT_RETRY_PROMPT = """
Your previous input for this tool was rejected: {error}
Fill the fields again so that they match what the tool expects."""
"""Appended to the extraction prompt when the input did not validate (W2); placeholder ``error``."""
