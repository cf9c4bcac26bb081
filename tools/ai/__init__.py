"""AI system tools (SPEC §14, seed 002): builder, JSON-schema input, scope, registry (W1-W6)."""
