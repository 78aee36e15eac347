"""python manage.py import_marks FILE: reviewers' marks made elsewhere, all or nothing."""

from django.core.management.base import BaseCommand

from core.management.importing import import_file
from labeling.services.marks_import import FORMATS, format_for, marks_import


class Command(BaseCommand):
    help = (
        "Import marks made elsewhere: JSON Lines ({transcript, rule, rule_version, judge, "
        "reviewer, correct, note}), CSV with the same columns, or Label Studio's JSON export. "
        "All or nothing; importing the same file again changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the file, or - for stdin")
        parser.add_argument(
            "--format",
            choices=FORMATS,
            help="how to read it (default: csv for a .csv file, else JSON: lines, an array of "
            "marks, or Label Studio's export)",
        )
        parser.add_argument(
            "--create-reviewers",
            action="store_true",
            help="make reviewers named in the file that are not Docket users yet (reviewer role)",
        )

    def handle(self, *args, file, **options):
        fmt = options["format"] or format_for(file)
        with import_file(file) as (lines, progress):
            result = marks_import(
                lines=lines,
                source=file,
                fmt=fmt,
                create_reviewers=options["create_reviewers"],
                progress=progress,
            )
        self.stdout.write(result.summary)
