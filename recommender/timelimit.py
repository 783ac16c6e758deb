"""A soft time limit that works in any thread, for the evaluation task.

Celery enforces ``soft_time_limit`` only in its prefork pool (a signal to the child
process); `make run`'s embedded worker runs tasks on a thread of the web process (solo
pool), where no signal reaches them. So the limit is raised here instead: a timer
thread asks the interpreter to raise ``SoftTimeLimitExceeded`` in the task's thread
(``PyThreadState_SetAsyncExc``, delivered between two bytecodes: the engine is pure
Python, so it stops within milliseconds). ::

    task thread:  ── enter ── engine ... ─────────── SoftTimeLimitExceeded ─► task records "failed"
    timer:              └── sleep(seconds) ── raise in task thread ─┘

A body that finishes first stops the timer; if the timer fired in between, the
pending exception is withdrawn, so it never escapes after the body. One swallowed
(raised inside a finaliser the garbage collector ran mid-body) is raised again.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from celery.exceptions import SoftTimeLimitExceeded

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)


@contextmanager
def soft_time_limit(seconds: float) -> Iterator[None]:
    """Raise ``SoftTimeLimitExceeded`` in this thread if the body outlasts ``seconds``;
    a budget of 0 s or less is spent before the body starts.

    The exception is raised again every ``redelivery_seconds(seconds)`` while the body
    runs on: one raised inside a ``__del__`` (the garbage collector finalising an
    object mid-body) or caught by the body's own ``except Exception`` is swallowed.
    """
    if seconds <= 0:
        raise SoftTimeLimitExceeded(f"a time limit of {seconds} s")
    thread_id = threading.get_ident()
    lock = threading.Lock()
    finished = threading.Event()
    state = {"done": False, "fired": False}

    def expire() -> None:
        wait = seconds
        while not finished.wait(wait):
            with lock:
                if state["done"]:
                    return
                state["fired"] = True
                _set_async_exc(thread_id, SoftTimeLimitExceeded)
            wait = redelivery_seconds(seconds)

    timer = threading.Thread(target=expire, name="soft-time-limit", daemon=True)
    timer.start()
    try:
        yield
    finally:
        with lock:
            state["done"] = True
            finished.set()
            if state["fired"]:
                _set_async_exc(thread_id, ctypes.py_object())  # withdraw it if still pending


def redelivery_seconds(seconds: float) -> float:
    """How long after a delivery the exception is raised again: the limit itself, kept
    within 50 ms and 1 s."""
    return min(max(seconds, 0.05), 1.0)
