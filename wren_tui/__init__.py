"""Wren: a coding agent that survives being killed, and a viewer that only watches."""

__version__ = "0.1.0"
