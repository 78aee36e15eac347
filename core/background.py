"""Work that must not hold up a web request: queued to Celery after the transaction commits.

Without a broker (CELERY_BROKER_URL unset, `make run`) Celery runs tasks eagerly; the task then
runs in a thread of this process, so the request still answers at once and the page polls.
"""

import logging
import threading

from django.conf import settings
from django.db import connections, transaction

logger = logging.getLogger(__name__)


def after_commit(task, *args, on_error=None) -> None:
    """Queue the Celery task `task(*args)` once the current transaction commits (at once outside
    one). Without a broker it runs in a thread; `on_error()` is called if it raises there."""

    def start():
        if settings.CELERY_TASK_ALWAYS_EAGER:
            in_thread(lambda: task.apply(args=args).get(), name=task.name, on_error=on_error)
        else:
            task.delay(*args)

    transaction.on_commit(start)


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
