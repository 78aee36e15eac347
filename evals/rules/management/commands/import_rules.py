from django.core.management.base import BaseCommand

from core.management.importing import import_file
from evals.rules.importing import rules_import


class Command(BaseCommand):
    help = (
        "Import rules from a YAML (or JSON) file: new rules, "
        "new versions for changed text, the rest unchanged."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="rules file (YAML or JSON), or - for stdin")

    def handle(self, *args, file, **options):
        with import_file(file) as (lines, _):
            result = rules_import(text=b"".join(lines), source=file)
        self.stdout.write(result.summary)
