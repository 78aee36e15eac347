"""Work that must not hold up a web request: queued to Celery after the transaction commits.

Without a broker (CELERY_BROKER_URL unset, `make run`) Celery runs tasks eagerly; the task then
runs in a thread of this process, so the request still answers at once and the page polls.
"""

import atexit
import logging
import threading
import time

from django.conf import settings
from django.db import connections, transaction

logger = logging.getLogger(__name__)


EXIT_WAIT_S = 30
_finish_at_exit: set[threading.Thread] = set()
_finish_lock = threading.Lock()


def task_named(name: str):
    """Return the Celery task registered under `name` (its app's tasks module, loaded by the app's
    ready()). Services queue tasks by name, so a service never imports the tasks that call it."""
    from celery import current_app

    return current_app.tasks[name]


def after_commit(task: str, *args, on_error=None, finish_at_exit: bool = False) -> None:
    """Queue the Celery task named `task` with `args` once the current transaction commits (at
    once outside one). Without a broker it runs in a thread; `on_error()` is called if it raises
    there.

    `finish_at_exit`: without a broker, a process that ends (a management command) first waits
    up to EXIT_WAIT_S seconds for the thread, so work such as a webhook POST is not cut off.
    """

    def start():
        task = task_named(name)
        if settings.CELERY_TASK_ALWAYS_EAGER:
            thread = in_thread(
                lambda: task.apply(args=args).get(), name=task.name, on_error=on_error
            )
            if finish_at_exit:
                with _finish_lock:
                    _finish_at_exit.difference_update(
                        [t for t in _finish_at_exit if not t.is_alive()]
                    )
                    _finish_at_exit.add(thread)
        else:
            task.delay(*args)

    name = task
    transaction.on_commit(start)


@atexit.register
def _finish_threads() -> None:
    deadline = time.monotonic() + EXIT_WAIT_S
    with _finish_lock:
        threads = list(_finish_at_exit)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def in_thread(work, *, name: str, on_error=None) -> threading.Thread:
    """Run `work()` in a daemon thread with its own database connections; log what it raises."""

    def run():
        try:
            work()
        except Exception:
            logger.exception("background_work_failed", extra={"work": name})
            if on_error is not None:
                on_error()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
