"""Database models of the reservations app (filled by its owner)."""
