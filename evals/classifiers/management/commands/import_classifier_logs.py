from django.core.management.base import BaseCommand

from core.management.importing import import_file
from evals.classifiers.services import classifier_logs_import


class Command(BaseCommand):
    help = (
        "Import a platform's classifier log lines (agent.injection_classifier.verdict, "
        "agent.scope_drift.verdict, agent.ai_frustration.verdict as JSON Lines) as verdicts: "
        "one per call and classifier. Other lines are left alone."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="JSONL file, or - for stdin")
        parser.add_argument(
            "--judge", default="", help="the judge's name (default: platform/<classifier>)"
        )

    def handle(self, *args, file, judge, **options):
        with import_file(file) as (lines, _progress):
            result = classifier_logs_import(lines=lines, source=file, judge=judge)
        self.stdout.write(result.summary)
