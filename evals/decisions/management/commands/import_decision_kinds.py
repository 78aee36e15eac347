from django.core.management.base import BaseCommand

from core.management.importing import import_file
from evals.decisions.services.kinds import decision_kinds_import


class Command(BaseCommand):
    help = (
        "Import decision kinds (turn-taking, handoff...) from a YAML or JSON file: new kinds, "
        "new versions for a changed question or answers, the rest unchanged."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="decision kinds file (YAML or JSON), or - for stdin")

    def handle(self, *args, file, **options):
        with import_file(file) as (lines, _):
            result = decision_kinds_import(text=b"".join(lines), source=file)
        self.stdout.write(result.summary)
