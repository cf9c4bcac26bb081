"""A real MCP server for the tests (FastMCP): free beds per hospital department.

Run as ``python mcp_beds.py stdio`` or ``python mcp_beds.py http PORT`` (127.0.0.1 only).
"""

from __future__ import annotations

import sys

from mcp.server.fastmcp import FastMCP

BEDS = {"kardiológia": 3, "sebészet": 0, "gyermekgyógyászat": 5}


def build(port: int = 8000) -> FastMCP:
    server = FastMCP("beds", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool()
    def free_beds(department: str) -> str:
        """How many free beds a hospital department has right now."""
        count = BEDS.get(department.strip().lower())
        if count is None:
            return f"Unknown department: {department}"
        return f"{department}: {count} free beds"

    return server


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "http":
        build(int(sys.argv[2])).run(transport="streamable-http")
    else:
        build().run(transport="stdio")
