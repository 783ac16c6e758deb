"""The dashboard pages that join the apps (overview, topology heatmap).

Top layer: it may import topology, reservations and recommender; none of them
imports it.
"""
