"""A sixth domain written as a new user would: a bicycle repair shop (N1, issue 36)."""
