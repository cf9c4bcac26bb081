"""Adapters between toolweave and the LangChain ecosystem (tools in and out, MCP, agents)."""
