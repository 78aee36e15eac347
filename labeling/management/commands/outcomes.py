"""python manage.py outcomes --agent A [--question KEY] [--by week|day] [--format table|json]:
the outcome report (the JSON is the API's)."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from labeling.selectors.outcomes import outcome_data


def _fig(value, ci=None) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]


class Command(BaseCommand):
    help = (
        "Print an agent's outcome figures per version and week (weighted by the sample), what "
        "predicts the outcome, and the bad calls nothing flagged, as a table or JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("--agent", help="agent name (may be left out when there is one)")
        parser.add_argument("--question", help="outcome question key (default: the first)")
        parser.add_argument("--by", choices=["week", "day"], default="week")
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, **options):
        params = {k: options[k] for k in ("agent", "question", "by") if options.get(k)}
        try:
            data = outcome_data(params)
        except DomainError as e:
            raise CommandError(str(e)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(data, indent=2))
            return
        out = [f"{data['agent']} · {data['question']}: {data['question_text']}", ""]
        head = ["version", data["by"], "calls", "mean [95% CI]", "raw", "bad share", "eff. n"]
        rows = [head]
        for r in [*data["versions"], *data["trend"]]:
            rows.append(
                [
                    r["version"],
                    r.get("period", "all"),
                    str(r["calls"]),
                    _fig(r["mean"], r["mean_ci"]),
                    _fig(r["raw_mean"]),
                    _fig(r["bad_share"], r["bad_share_ci"]),
                    str(r["effective_n"]),
                ]
            )
        out += _table(rows)
        out += ["", f"Bad outcome, nothing flagged ({len(data['bad_unflagged'])}):"]
        for c in data["bad_unflagged"]:
            why = "; ".join(r["reason"] for r in c["ratings"] if r["reason"])
            rows_note = f"{c['issue_rows']} issue rows" if c["issue_rows"] else "no issue row yet"
            out.append(f"  {c['transcript']}  {c['version']}  rated {c['rating']}  {rows_note}")
            if why:
                out.append(f"    {why}")
        out += ["", "What predicts the outcome (fired minus not fired):"]
        rows = [["check", "source", "fired n", "not n", "difference [95% CI]", "note"]]
        for p in data["predictors"]:
            note = (
                "worth a look: never fired"
                if p["never_fired"]
                else "worth a look: does not move the outcome"
                if p["worth_a_look"]
                else ""
                if p["enough_calls"]
                else "too few calls"
            )
            rows.append(
                [
                    p["check"],
                    p["source"],
                    str(p["fired"]["calls"]),
                    str(p["not_fired"]["calls"]),
                    _fig(p["difference"], p["difference_ci"]),
                    note,
                ]
            )
        out += _table(rows)
        self.stdout.write("\n".join(out))
