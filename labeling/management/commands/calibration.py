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


def _num(value) -> str:
    return "–" if value is None else f"{value:.2f}"


class Command(BaseCommand):
    help = (
        "Print judge precision, recall and agreement with the reviewers per rule version "
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
        parser.add_argument(
            "--errors",
            choices=["exclude", "as_wrong"],
            default="exclude",
            help="errored verdicts in accuracy, F1, specificity and judge kappa: left out "
            "(default), or counted as wrong where the reviewers settled the call's truth",
        )

    def handle(self, *args, **options):
        keys = ("judge", "group", "status", "rule", "errors")
        params = {k: options[k] for k in keys if options.get(k)}
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
            "errored",
            "precision [95% CI]",
            "recall [95% CI]",
            "accuracy [95% CI]",
            "judge κ [95% CI]",
            "w.prec",
            "w.rec",
            "w.acc",
            "rev.κ",
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
                    f"{r['errored']} ({r['errored_covered']})",
                    _fig(r["precision"], r["precision_ci"]),
                    _fig(r["recall"], r["recall_ci"]),
                    _fig(r["accuracy"], r["accuracy_ci"]),
                    _fig(r["judge_kappa"], r["judge_kappa_ci"]),
                    _num(r["weighted"]["precision"]),
                    _num(r["weighted"]["recall"]),
                    _num(r["weighted"]["accuracy"]),
                    _num(r["reviewer_kappa"]),
                    str(r["waiting"]),
                    "yes" if r["eligible"] else "no: " + "; ".join(r["why_not"]),
                ]
            )
        widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
        for row in table:
            self.stdout.write("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
        self.stdout.write(
            "errored: all errored verdicts (in brackets, those whose call's truth the reviewers "
            + (
                "settled: counted wrong in accuracy, F1, specificity and judge κ; --errors "
                "as_wrong)"
                if params.get("errors") == "as_wrong"
                else "settled); left out of every figure (--errors exclude)"
            )
        )
        pairs = [(r, o) for r in rows for o in r["other_judges"] if (r["judge"] or "") < o["judge"]]
        if pairs:
            self.stdout.write("\njudges compared over the calls both judged:")
            for r, o in pairs:
                kind = " (positional)" if o["positional"] else ""
                self.stdout.write(
                    f"{r['rule']} v{r['version']}  {r['judge']} · {o['judge']}{kind}  "
                    f"{o['calls']} calls  agreement {_fig(o['agreement'], o['agreement_ci'])}  "
                    f"κ {_fig(o['kappa'], o['kappa_ci'])}"
                )
