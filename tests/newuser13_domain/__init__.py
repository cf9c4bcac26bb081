"""A home-insurance claims desk: the thirteenth new user's domain (a neutral test fixture)."""
