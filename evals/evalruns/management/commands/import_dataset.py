from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from core.management.importing import import_file
from evals.evalruns.services import dataset_import


class Command(BaseCommand):
    help = (
        "Import a dataset for eval runs: JSON Lines, one row a line "
        '({"id", "messages" or "input", "tools", "reference", "metadata"}). The same rows as the '
        "latest version change nothing; other rows become a new version."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="JSONL file, or - for stdin")
        parser.add_argument("--name", required=True, help="the dataset's name, e.g. booking-tools")
        parser.add_argument("--description", default="")

    def handle(self, *args, file, name, description, **options):
        try:
            with import_file(file) as (lines, _progress):
                dataset, result = dataset_import(
                    lines=lines, name=name, source=file, description=description, by="cli"
                )
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        what = "unchanged" if not result.changed else "imported"
        self.stdout.write(
            f"{dataset} ({dataset.rows_count} rows, checksum {dataset.checksum[:12]}): {what}"
        )
