"""The evals app is the migration history of the judged material's tables, from before they
were split into the apps under evals/ (catalog, rules, judging, gating, ...); it has no models.
Its migrations made the tables those apps' models use (`db_table`), and the last one hands the
models over to them.
"""

from django.apps import AppConfig


class EvalsConfig(AppConfig):
    name = "evals"
    verbose_name = "Evals (migration history)"
