"""A real MCP server whose tool can fail (FastMCP, stdio): free beds per ward (issue 18).

``free_beds`` says what it accepts through ``examples`` in its schema; an unknown
ward makes it raise, which FastMCP reports as an error result (``isError``).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.fastmcp import FastMCP
from pydantic import Field

BEDS = {"cardiology": 3, "surgery": 0}


def build() -> FastMCP:
    server = FastMCP("wards", log_level="WARNING")

    @server.tool()
    def free_beds(department: Annotated[str, Field(examples=list(BEDS))]) -> str:
        """How many free beds a hospital department has right now."""
        if department not in BEDS:
            raise ValueError(f"no ward called {department!r}")
        return f"{department}: {BEDS[department]} free beds"

    return server


if __name__ == "__main__":
    build().run(transport="stdio")
