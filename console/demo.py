"""The demo loader: an ordered list of steps, each loading one part of demo/ and saying what it did.

`python manage.py load_demo` runs DEMO_STEPS in order inside one transaction. Every step must be
idempotent: a second run changes nothing. To add a step (a golden set and gate, a daily sample,
demo marks...), write a function `(demo_dir: Path) -> str` that returns one line for the terminal
and append a DemoStep to DEMO_STEPS here.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.db import transaction
from django.db.models import Q

from console.demo_axes import demo_axes_load
from console.demo_classifiers import demo_classifiers_load
from console.demo_conversation import demo_conversation_load
from console.demo_data import DEMO_AGENT, DEMO_DIR
from console.demo_decisions import (
    demo_decision_kinds_load,
    demo_decisions_load,
    demo_hard_moments_load,
)
from console.demo_evalruns import demo_evalruns_load
from console.demo_gates import demo_gates_load
from console.demo_history import (
    demo_detectors_load,
    demo_issue_rows_load,
    demo_reviews_load,
    demo_users_load,
)
from console.demo_loop import demo_judge_cache_load, demo_labelling_push_load
from console.demo_outcomes import demo_outcomes_load
from console.demo_sample import demo_sample_load
from console.demo_workbench import demo_workbench_load
from evals.catalog.models import Transcript
from evals.catalog.services.agents import agent_scope_clean, agent_version_scope_set
from evals.catalog.services.importing import transcripts_import
from evals.judging.models import Verdict
from evals.judging.services.importing import verdicts_import
from evals.rules.importing import rules_import
from evals.rules.models import Rule, RuleVersion
from labeling.services.tally_cells import tally_cells_compact

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DemoStep:
    name: str
    run: Callable[[Path], str]


def demo_rules_load(demo_dir: Path) -> str:
    """Import demo/rules.yaml, leaving alone a rule the demo history has moved on from (a later
    version made from an issue row or the rule workbench): re-importing its old text would
    otherwise add a version on every load."""
    path = demo_dir / "rules.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    moved_on = set(
        RuleVersion.objects.filter(number__gt=1)
        .filter(Q(source__startswith="issue row") | Q(source__startswith="workbench draft"))
        .values_list("rule__rule_id", flat=True)
    )
    kept = [r for r in data["rules"] if r.get("id") not in moved_on]
    if not moved_on:
        return rules_import(text=path.read_text(encoding="utf-8"), source=str(path.name)).summary
    summary = rules_import(
        text=yaml.safe_dump({"rules": kept}, sort_keys=False), source=str(path.name)
    ).summary
    return f"{summary}; {len(data['rules']) - len(kept)} changed since through an issue row"


def demo_calls_load(demo_dir: Path) -> str:
    """Import demo/calls.jsonl."""
    path = demo_dir / "calls.jsonl"
    with path.open("rb") as handle:
        return transcripts_import(lines=handle, source=str(path.name)).summary


def demo_verdicts_load(demo_dir: Path) -> str:
    """Import demo/verdicts.jsonl."""
    path = demo_dir / "verdicts.jsonl"
    with path.open("rb") as handle:
        return verdicts_import(lines=handle, source=str(path.name)).summary


def demo_agents_load(demo_dir: Path) -> str:
    """Give the demo agent versions their instructions and tools (demo/agents.yaml)."""
    data = yaml.safe_load((demo_dir / "agents.yaml").read_text(encoding="utf-8"))
    changed = total = 0
    for entry in data["agents"]:
        scope = agent_scope_clean(instructions=entry["instructions"], tools=entry["tools"])
        for version in entry["versions"]:
            _, did = agent_version_scope_set(
                agent=entry["agent"], version=version, scope=scope, replace=True
            )
            changed += did
            total += 1
    return f"agent scopes: {total} versions with instructions and tools, {changed} changed"


DEMO_STEPS: list[DemoStep] = [
    DemoStep("rules", demo_rules_load),
    DemoStep("decision kinds", demo_decision_kinds_load),  # before the calls: they derive decisions
    DemoStep("calls", demo_calls_load),
    DemoStep("agent scopes", demo_agents_load),
    DemoStep("verdicts", demo_verdicts_load),
    DemoStep("judge cache", demo_judge_cache_load),  # before issue rows make new rule versions
    DemoStep("decision points", demo_decisions_load),  # before the gates: the gate counts labels
    DemoStep("conversation judge", demo_conversation_load),
    DemoStep("gates", demo_gates_load),
    DemoStep("daily sample", demo_sample_load),
    DemoStep("users", demo_users_load),
    DemoStep("detectors", demo_detectors_load),
    DemoStep("labelling push", demo_labelling_push_load),  # marks detector verdicts too
    DemoStep("review history", demo_reviews_load),
    DemoStep("issue rows", demo_issue_rows_load),
    DemoStep("rule workbench", demo_workbench_load),  # after the marks: it judges marked calls
    DemoStep("hard moments", demo_hard_moments_load),
    DemoStep("outcomes", demo_outcomes_load),
    DemoStep("trajectory axes", demo_axes_load),
    DemoStep("eval runs", demo_evalruns_load),
    DemoStep("classifiers", demo_classifiers_load),
]


def demo_counts() -> dict[str, int]:
    """Return what the demo agent has in the database: calls, rules, verdicts, calls with audio."""
    calls = Transcript.objects.filter(agent_version__agent__name=DEMO_AGENT)
    return {
        "calls": calls.count(),
        "calls_with_audio": calls.exclude(audio_url="").count(),
        "rules": Rule.objects.count(),
        "safety_rules": Rule.objects.filter(safety=True).count(),
        "verdicts": Verdict.objects.filter(
            transcript__agent_version__agent__name=DEMO_AGENT
        ).count(),
    }


@transaction.atomic
def demo_load(
    *,
    demo_dir: Path = DEMO_DIR,
    steps: list[DemoStep] | None = None,
    echo: Callable[[str], None] = lambda line: None,
) -> dict[str, int]:
    """Run the demo steps in order, echoing one line per step; return the counts afterwards."""
    for step in DEMO_STEPS if steps is None else steps:
        echo(f"{step.name}: {step.run(demo_dir)}")
    tally_cells_compact()  # the steps' bulk-created marks left a delta row per tally change
    counts = demo_counts()
    logger.info("demo_loaded", extra=counts)
    return counts
