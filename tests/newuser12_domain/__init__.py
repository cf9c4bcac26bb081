"""A hotel group's assistant: the twelfth new user's domain (a neutral test fixture)."""
