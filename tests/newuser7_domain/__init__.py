"""A municipal permits office: the seventh new-user round's test domain (not shipped)."""
