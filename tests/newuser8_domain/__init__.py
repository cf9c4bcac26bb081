"""Koleje Podgórskie, a regional train operator's customer service: an eighth test domain."""
