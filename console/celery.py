"""The Celery app: eager without CELERY_BROKER_URL, a real worker with it."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("docket")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
