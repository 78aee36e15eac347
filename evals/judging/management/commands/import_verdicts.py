from django.core.management.base import BaseCommand

from core.management.importing import import_file
from evals.judging.services.importing import verdicts_import


class Command(BaseCommand):
    help = (
        "Import verdicts (JSON Lines). A (transcript, rule "
        "version, judge) already stored is left unchanged."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="JSONL file, or - for stdin")

    def handle(self, *args, file, **options):
        with import_file(file) as (lines, progress):
            result = verdicts_import(lines=lines, source=file, progress=progress)
        self.stdout.write(result.summary)
