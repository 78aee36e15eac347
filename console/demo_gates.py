"""The demo's golden set and release gate (a load_demo step), and the rule versions it gates.

The demo's week of marks (about 40 per rule version) is too few for any version to be eligible,
so the rules a lead would have promoted are marked `gated` directly here, without a promotion
decision in the audit log. Which ones: the safety rules and every rule whose demo judge is right
on at least 95% of its verdicts (demo/truth.json); the three rules the judge often gets wrong
(asking.one-question, boundaries.no-hints, language.no-slang) stay candidates, and so do the
detector rules.
"""

import json
from pathlib import Path

import yaml

from evals.catalog.selectors import agent_version_resolve
from evals.gating.models import Gate
from evals.gating.services import gate_run_evaluate, gates_import
from evals.rules.models import Rule, RuleVersion
from evals.rules.selectors import rule_version_current

PROMOTE_MIN_ACCURACY = 0.95


def demo_promoted_rule_ids(demo_dir: Path) -> list[str]:
    """Safety rules, and rules the demo judge gets
    right often enough to promote (from truth.json)."""
    truth = json.loads((demo_dir / "truth.json").read_text(encoding="utf-8"))
    archive = set((truth.get("archive") or {}).get("calls") or [])
    right: dict[str, list[int]] = {}
    for key, correct in truth["verdicts"].items():
        call, rule, _ = key.split("|")
        if call in archive:  # what the lead had seen before promoting: the week's calls
            continue
        right.setdefault(rule, [0, 0])
        right[rule][0] += bool(correct)
        right[rule][1] += 1
    accurate = {r for r, (ok, n) in right.items() if n and ok / n >= PROMOTE_MIN_ACCURACY}
    safety = set(Rule.objects.filter(safety=True).values_list("rule_id", flat=True))
    return sorted(accurate | (safety & set(right)))


def demo_gates_load(demo_dir: Path) -> str:
    """Gate the promoted rules, import demo/gates.yaml,
    and run the gate once on each demo version."""
    ids = demo_promoted_rule_ids(demo_dir)
    newly = 0
    for rule in Rule.objects.filter(rule_id__in=ids):
        latest = rule_version_current(rule)
        if latest and latest.status != RuleVersion.Status.GATED:
            latest.status = RuleVersion.Status.GATED
            latest.save(update_fields=["status"])
            newly += 1
    path = demo_dir / "gates.yaml"
    counts = gates_import(data=yaml.safe_load(path.read_text(encoding="utf-8")), by="demo")
    gate = Gate.objects.get(name="release")
    ran = []
    if not gate.runs.exists():
        truth = json.loads((demo_dir / "truth.json").read_text(encoding="utf-8"))
        for version in truth["versions"]:
            run = gate_run_evaluate(
                gate=gate,
                candidate=agent_version_resolve(version, what="candidate"),
                by="demo",
                judge_missing_verdicts=False,
            )
            ran.append(f"{version} {run.status}")
    gs = counts["golden_sets"]
    return (
        f"{len(ids)} rules gated ({newly} newly); golden set "
        f"{gs['created']} created, {gs['unchanged']} unchanged; gate "
        f"release {'runs: ' + ', '.join(ran) if ran else 'already run'}"
    )
