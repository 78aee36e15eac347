import yaml
from django.core.management.base import BaseCommand

from evals.gating.services import gates_export


class Command(BaseCommand):
    help = "Write gates and the golden sets they use as YAML (imports back as a no-op)."

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*", help="gate names (default: every gate)")
        parser.add_argument("-o", "--output", help="file to write (default: stdout)")

    def handle(self, *args, names, output, **options):
        text = yaml.safe_dump(
            gates_export(names=names or None), sort_keys=False, allow_unicode=True
        )
        if output:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
            self.stderr.write(f"gates written to {output}")
        else:
            self.stdout.write(text, ending="")
