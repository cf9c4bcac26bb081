"""How the compiled graph shows itself in a notebook: offline, as Mermaid text (N1).

LangGraph's own display fetches a PNG from a web service; this one needs no network.
"""

from __future__ import annotations

from typing import Any


class MermaidDisplay:
    """A mixin for a LangGraph graph: Jupyter's display without any network call."""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The graph as Mermaid in Markdown, and its ``repr`` (no PNG, no web service)."""
        diagram = self.get_graph().draw_mermaid()  # type: ignore[attr-defined]
        return {"text/plain": repr(self), "text/markdown": f"```mermaid\n{diagram}\n```"}
