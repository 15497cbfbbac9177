"""The watch-only viewer: reads journals, never writes them (a fork goes through journal.forking)."""
