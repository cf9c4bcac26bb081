"""Tool contracts, the registry, the gates and the progress emitter."""
