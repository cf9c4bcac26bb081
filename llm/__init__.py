"""The LLM port and its implementations."""
