"""The orchestration graph: one node per phase, and its builder."""
