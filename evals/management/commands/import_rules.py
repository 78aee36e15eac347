from django.core.management.base import BaseCommand, CommandError

from evals.services.importing import rules_import

from ._importing import import_file


class Command(BaseCommand):
    help = (
        "Import rules from a YAML (or JSON) file: new rules, "
        "new versions for changed text, the rest unchanged."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="rules file (YAML or JSON), or - for stdin")

    def handle(self, *args, file, **options):
        with import_file(file) as (lines, _):
            try:
                text = b"".join(lines).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CommandError(f"{file}: not UTF-8 (byte {exc.start + 1})") from None
            result = rules_import(text=text, source=file)
        self.stdout.write(result.summary)
