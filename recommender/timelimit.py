"""A soft time limit that works in any thread, for the evaluation task.

Celery enforces ``soft_time_limit`` only in its prefork pool (a signal to the child
process); `make run`'s embedded worker runs tasks on a thread of the web process (solo
pool), where no signal reaches them. So the limit is raised here instead: a timer
thread asks the interpreter to raise ``SoftTimeLimitExceeded`` in the task's thread
(``PyThreadState_SetAsyncExc``, delivered between two bytecodes: the engine is pure
Python, so it stops within milliseconds). ::

    task thread:  ── enter ── engine ... ─────────── SoftTimeLimitExceeded ─► task records "failed"
    timer:              └── sleep(seconds) ── raise in task thread ─┘

A body that finishes first cancels the timer; if the timer fired in between, the
pending exception is withdrawn, so it never escapes after the body.
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
    a budget of 0 s or less is spent before the body starts."""
    if seconds <= 0:
        raise SoftTimeLimitExceeded(f"a time limit of {seconds} s")
    thread_id = threading.get_ident()
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def expire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                _set_async_exc(thread_id, SoftTimeLimitExceeded)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            state["done"] = True
            timer.cancel()
            if state["fired"]:
                _set_async_exc(thread_id, ctypes.py_object())  # withdraw it if still pending
