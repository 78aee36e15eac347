import yaml
from django.core.management.base import BaseCommand, CommandError

from evals.services.gating import GateConfigInvalid, gates_import


class Command(BaseCommand):
    help = "Import golden sets and gates from a YAML file kept in the team's repo (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("path", help="YAML file ('-' for stdin)")

    def handle(self, *args, path, **options):
        try:
            if path == "-":
                import sys

                text = sys.stdin.read()
            else:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            data = yaml.safe_load(text)
        except OSError as e:
            raise CommandError(f"{path}: {e.strerror}") from None
        except yaml.YAMLError as e:
            raise CommandError(f"{path}: not valid YAML: {e}") from None
        try:
            counts = gates_import(data=data, by="cli")
        except GateConfigInvalid as e:
            raise CommandError(f"{path}: {e} (nothing imported)") from None
        gs, gt = counts["golden_sets"], counts["gates"]
        self.stdout.write(
            f"golden sets: {gs['created']} created, {gs['revised']} "
            f"revised, {gs['unchanged']} unchanged; gates: {gt['created']} "
            f"created, {gt['updated']} updated, {gt['unchanged']} unchanged"
        )
