"""Recommender: the joint scheduler + autoscaler evaluation and its live views."""
