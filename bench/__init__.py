"""Benchmark scripts (not tests): run with python -m bench.<name>."""
