from django.core.management.base import BaseCommand

from evals.rules.importing import rules_export


class Command(BaseCommand):
    help = "Write every rule with its newest version as YAML (imports back as a no-op)."

    def add_arguments(self, parser):
        parser.add_argument("-o", "--output", help="file to write (default: stdout)")

    def handle(self, *args, output, **options):
        text = rules_export()
        if output:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
            self.stderr.write(f"rules written to {output}")
        else:
            self.stdout.write(text, ending="")
