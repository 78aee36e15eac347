"""python manage.py decision_accuracy --format json|table: decision accuracy per kind version and
agent version (the JSON is the API's)."""

import json

from django.core.management.base import BaseCommand

from evals.decisions.selectors import decision_accuracy_table
from labeling.management.commands.calibration import _fig


class Command(BaseCommand):
    help = (
        "Print how often the agent's decisions match the reviewers' labels, per decision kind "
        "version and agent version, with Wilson intervals and the most common errors."
    )

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument("--kind", default="", help="only this decision kind (its id)")
        parser.add_argument("--agent-version", default="", help="only this agent version")

    def handle(self, *args, **options):
        rows = decision_accuracy_table(kind=options["kind"], agent_version=options["agent_version"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        if not rows:
            self.stdout.write("No decision points yet.")
            return
        header = ["kind", "v", "agent version", "decisions", "labeled", "accuracy [95% CI]"]
        table = [
            [
                r["kind"],
                str(r["kind_version"]),
                f"{r['agent']} {r['agent_version']}",
                str(r["decisions"]),
                str(r["labeled"]),
                _fig(r["accuracy"], r["accuracy_ci"]),
            ]
            for r in rows
        ]
        widths = [max(len(x) for x in col) for col in zip(header, *table)]
        for line in [header, *table]:
            self.stdout.write("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        for r in rows:
            for e in r["errors"][:3]:
                self.stdout.write(
                    f"  {r['kind']} {r['agent_version']}: chose {e['choice']!r} where "
                    f"reviewers say {e['answer']!r}: {e['n']}"
                )
