"""Reservations: reserved capacity, idle accounting, idle reports and their email digest.

What lives here: the Reservation rows (the engine sees them through each
snapshot: topology asks for them with ``topology.signals.stored_configuration``),
``idle.py`` (pure idle accounting), IdleSample rows written for every stored
evaluation (``recommender.signals.evaluation_stored``), the idle and waste
reports over evaluations, subscriptions and the scheduled digest, the
reservations page, the ``load_config`` command and admin form (node groups and
reservations from YAML).

Top app layer: it imports ``recommender`` and ``topology``; only
``capacityweb``'s pages and demo import it. The pure ``idle`` module is the
exception: the engine imports it, and it imports only ``topology.model.hardware``.
"""
