"""Run a real Celery worker and beat inside the current process (zero-config dev mode).

    rundemo process
    ├── main thread: daphne (HTTP + WebSocket)
    ├── "celery-embedded-worker": WorkController, solo pool, consumes the broker
    └── "Beat": celery.beat.Service with the DatabaseScheduler

With the in-memory broker (``memory://``) the web code and the worker share
kombu's in-process queues, so ``task.delay()`` goes through the same
publish/consume/ack code paths as production with Redis, without a service.
The solo pool runs one task at a time, which keeps SQLite writes serialised.
"""

import socket
import threading
from dataclasses import dataclass

from celery import Celery
from celery.beat import EmbeddedService
from celery.result import _set_task_join_will_block
from celery.worker import WorkController

WORKER_START_TIMEOUT_SECONDS = 30.0
WORKER_STOP_TIMEOUT_SECONDS = 10.0


class EmbeddedWorkController(WorkController):  # type: ignore[misc]
    """A worker that signals when its consumer is ready to take tasks."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.consumer_ready = threading.Event()
        super().__init__(*args, **kwargs)

    def on_consumer_ready(self, consumer: object) -> None:
        self.consumer_ready.set()


@dataclass
class EmbeddedCelery:
    """Handles on the in-process worker (and beat, when started) so they can be stopped."""

    worker: EmbeddedWorkController
    worker_thread: threading.Thread
    beat: threading.Thread | None

    def stop(self) -> None:
        """Stop beat, then warm-stop the worker and wait for its thread."""
        if self.beat is not None:
            self.beat.stop()  # type: ignore[attr-defined]
        self.worker.stop()
        self.worker_thread.join(WORKER_STOP_TIMEOUT_SECONDS)


def start_worker(app: Celery) -> tuple[EmbeddedWorkController, threading.Thread]:
    """Start a solo-pool worker in a daemon thread; return once it consumes."""
    app.finalize()
    app.set_current()
    app.set_default()
    worker = EmbeddedWorkController(
        app=app,
        hostname=f"embedded@{socket.gethostname()}",
        pool_cls="solo",
        concurrency=1,
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
    )
    thread = threading.Thread(target=worker.start, name="celery-embedded-worker", daemon=True)
    thread.start()
    if not worker.consumer_ready.wait(WORKER_START_TIMEOUT_SECONDS):
        raise RuntimeError("embedded Celery worker did not become ready")
    # The web code in this process may wait on results; the solo pool would forbid it.
    _set_task_join_will_block(False)
    return worker, thread


def start_beat(app: Celery) -> threading.Thread:
    """Start beat in a daemon thread, with the scheduler named by settings."""
    beat: threading.Thread = EmbeddedService(
        app, thread=True, scheduler_cls=app.conf.beat_scheduler
    )
    beat.start()
    return beat


def start_embedded(app: Celery, *, with_beat: bool = True) -> EmbeddedCelery:
    """Start the worker (and beat) inside this process."""
    worker, worker_thread = start_worker(app)
    beat = start_beat(app) if with_beat else None
    return EmbeddedCelery(worker=worker, worker_thread=worker_thread, beat=beat)
