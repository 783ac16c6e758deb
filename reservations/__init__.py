"""Reservations: reserved capacity, idle accounting, idle reports and their email digest."""
