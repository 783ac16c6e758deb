"""Database models of the recommender app (filled by its owner)."""
