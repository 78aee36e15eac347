"""python manage.py calibration --format json|table:
the calibration figures (the JSON is the API's)."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from labeling.selectors.calibration import calibration_data


def _fig(value, ci) -> str:
    if value is None:
        return "–"
    return f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


class Command(BaseCommand):
    help = (
        "Print judge precision and recall per rule version "
        "and judge, as JSON (the API's shape) or a table."
    )

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument("--judge", help="only this judge (its name)")
        parser.add_argument("--group", help="only rules of this group")
        parser.add_argument(
            "--status", help="only rule versions with this status: draft, candidate, gated, retired"
        )
        parser.add_argument("--rule", help="only these rule ids, comma-separated")

    def handle(self, *args, **options):
        params = {k: options[k] for k in ("judge", "group", "status", "rule") if options.get(k)}
        try:
            rows = calibration_data(params)
        except DomainError as e:
            raise CommandError(str(e)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(rows, indent=2))
            return
        header = [
            "rule",
            "v",
            "judge",
            "status",
            "marked",
            "tp",
            "fp",
            "fn",
            "tn",
            "precision [95% CI]",
            "recall [95% CI]",
            "w.prec",
            "w.rec",
            "kappa",
            "ties",
            "eligible",
        ]
        table = [header]
        for r in rows:
            table.append(
                [
                    r["rule"],
                    str(r["version"]),
                    r["judge"] or "–",
                    r["status"],
                    str(r["marked"]),
                    str(r["tp"]),
                    str(r["fp"]),
                    str(r["fn"]),
                    str(r["tn"]),
                    _fig(r["precision"], r["precision_ci"]),
                    _fig(r["recall"], r["recall_ci"]),
                    "–"
                    if r["weighted"]["precision"] is None
                    else f"{r['weighted']['precision']:.2f}",
                    "–" if r["weighted"]["recall"] is None else f"{r['weighted']['recall']:.2f}",
                    "–" if r["kappa"] is None else f"{r['kappa']:.2f}",
                    str(r["waiting"]),
                    "yes" if r["eligible"] else "no: " + "; ".join(r["why_not"]),
                ]
            )
        widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
        for row in table:
            self.stdout.write("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
