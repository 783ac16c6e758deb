"""Database models of the topology app (filled by its owner)."""
