"""The workload page's what-if, answered on workers: the request, its per-user and queue
limits and the answer (``service``), and ``POST/GET /api/v1/what-if/`` (``api``).
"""
