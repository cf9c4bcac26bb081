"""A municipal waste-collection service (a neutral test domain, not shipped)."""
