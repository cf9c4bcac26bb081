"""Typed data of toolweave: tasks, results, documents, the ledger and the graph state."""
