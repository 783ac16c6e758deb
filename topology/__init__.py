"""Topology: the hardware model of a GPU cluster and everything that fills it."""
