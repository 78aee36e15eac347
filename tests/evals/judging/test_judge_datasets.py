"""The detectors over real conversations: the tau-bench airline trajectories and the demo calls."""

from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from evals.judging.models import JudgeRun, Verdict
from tests.evals.import_helpers import TAU_BENCH

TAU = TAU_BENCH
EXAMPLES = Path(settings.BASE_DIR) / "examples" / "tau-bench-signals.yaml"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.skipif(not TAU.exists(), reason=f"tau-bench dataset not found at {TAU}")
def test_detectors_over_tau_bench_from_the_command_line():
    call_command(
        "import_transcripts",
        "--agent",
        "tau-airline",
        "--agent-version",
        "gpt-4o",
        str(TAU),
        stdout=StringIO(),
    )
    call_command("import_rules", str(EXAMPLES), stdout=StringIO())
    out = StringIO()
    call_command("judge", "--agent-version", "gpt-4o", "--rule", "text-signals.*", stdout=out)
    assert (
        "0 calls" in out.getvalue()
        and "200 detector checks" in out.getvalue()
        and "errors 0" in out.getvalue()
    )
    run = JudgeRun.objects.get()
    assert run.status == JudgeRun.Status.DONE and run.calls_made == 0
    verdicts = Verdict.objects.filter(judge_run=run)
    assert verdicts.count() == 800 and not verdicts.exclude(error="").exists()
    markdown = verdicts.filter(rule_version__rule__rule_id="text-signals.no-markdown", flagged=True)
    assert markdown.exists() and markdown.first().judge.name == "detector/markdown_or_emoji"
    # tau-bench's simulated user ends with ###STOP###: a deliberate end, not a dropped call.
    ended = verdicts.filter(rule_version__rule__rule_id="text-signals.ends-on-agent")
    assert ended.filter(flagged=False).count() > ended.filter(flagged=True).count()


DEMO = Path(settings.BASE_DIR) / "demo"
SIGNAL_RULES = {
    "long_silence": "signals.no-long-silence",
    "low_asr": "signals.asr-confidence-floor",
    "talk_over": "signals.no-talk-over",
}


def test_detectors_over_the_demo_find_exactly_the_planted_signals():
    import json

    call_command("import_rules", str(DEMO / "rules.yaml"), stdout=StringIO())
    call_command("import_transcripts", str(DEMO / "calls.jsonl"), stdout=StringIO())
    out = StringIO()
    call_command("judge", "--detectors-only", stdout=out)
    assert "0 calls" in out.getvalue() and "errors 0" in out.getvalue()
    planted = {}
    for call, signals in json.loads((DEMO / "truth.json").read_text())["signals"].items():
        for s in signals:
            planted.setdefault((call, SIGNAL_RULES[s["kind"]]), set()).add(s["turn"])
    found = {
        (v.transcript.external_id, v.rule_version.rule.rule_id): set(v.turns)
        for v in Verdict.objects.filter(flagged=True).select_related(
            "transcript", "rule_version__rule"
        )
    }
    assert planted and found == planted
