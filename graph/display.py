"""How the compiled graph shows itself in a notebook: offline, as Mermaid text (N1).

LangGraph's compiled graph answers Jupyter's rich display with a PNG that
``draw_mermaid_png()`` fetches from a web service (mermaid.ink): a cell ending in
``graph`` waited on the network and failed with a ``ValueError`` where there is none,
though everything else in toolweave runs offline. The graph shows itself as Mermaid
in Markdown instead (JupyterLab and VS Code draw it), with its ``repr`` as plain text.
"""

from __future__ import annotations

from typing import Any


class MermaidDisplay:
    """A mixin for a LangGraph graph: Jupyter's display without any network call."""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The graph as Mermaid in Markdown, and its ``repr`` (no PNG, no web service)."""
        diagram = self.get_graph().draw_mermaid()  # type: ignore[attr-defined]
        return {"text/plain": repr(self), "text/markdown": f"```mermaid\n{diagram}\n```"}
