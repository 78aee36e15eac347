from django.core.management.base import BaseCommand

from evals.decisions.services.kinds import decision_kinds_export


class Command(BaseCommand):
    help = "Print every decision kind with its newest version as YAML (imports back unchanged)."

    def handle(self, *args, **options):
        self.stdout.write(decision_kinds_export(), ending="")
