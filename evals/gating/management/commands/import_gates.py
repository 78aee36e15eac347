import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core import parsing
from evals.gating.services import GateConfigInvalid, gates_import


class Command(BaseCommand):
    help = "Import golden sets and gates from a YAML file kept in the team's repo (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("path", help="YAML file ('-' for stdin)")

    def handle(self, *args, path, **options):
        try:
            if path == "-":
                raw = sys.stdin.buffer.read()
            else:
                with open(path, "rb") as f:
                    raw = f.read()
        except OSError as e:
            raise CommandError(f"{path}: {e.strerror}") from None
        try:
            parsing.size_check(
                raw, limit=settings.DOCKET_CONFIG_MAX_BYTES, setting="DOCKET_CONFIG_MAX_BYTES"
            )
            data, _ = parsing.yaml_document(parsing.utf8(raw))
        except parsing.ParseProblem as e:
            raise CommandError(
                f"{path}:{e.line}: {e.field}: {e.reason} (nothing imported)"
            ) from None
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
