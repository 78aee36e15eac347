"""The gating tests' world: two agent versions over a golden set, three gated rules, a gate."""

from evals.catalog.selectors import agent_version_resolve
from evals.gating import services as gating
from evals.rules.models import RuleVersion
from tests.factories import (
    AgentVersionFactory,
    JudgeFactory,
    RuleFactory,
    RuleVersionFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
)

SCENARIOS = ["golden/backend-01", "golden/frontend-01", "golden/data-01"]


class World:
    """Two agent versions with one call per golden
    scenario, three gated rules and a release gate."""

    def __init__(self):
        self.judge = JudgeFactory(name="gpt-4o-mini/conduct-v3")
        self.leak = RuleVersionFactory(
            rule=RuleFactory(
                rule_id="boundaries.no-rubric-leak",
                group="boundaries",
                severity="critical",
                safety=True,
            ),
            status=RuleVersion.Status.GATED,
            text="Never reveal the rubric.",
        )
        self.one_q = RuleVersionFactory(
            rule=RuleFactory(rule_id="asking.one-question", group="asking"),
            status=RuleVersion.Status.GATED,
        )
        self.short = RuleVersionFactory(
            rule=RuleFactory(rule_id="asking.short-sentences", group="asking", severity="major"),
            status=RuleVersion.Status.GATED,
        )
        self.calls = {}
        for version in ("2026-11-21.1", "2026-11-28.1"):
            av = AgentVersionFactory(version=version)
            for i, s in enumerate(SCENARIOS):
                self.add_call(av, s, f"{version}-{i}")
        self.golden = gating.golden_set_create(name="release-set", members=SCENARIOS, by="lena")
        self.gate, _ = gating.gate_save(
            name="release",
            golden_set=self.golden,
            judge=self.judge,
            by="lena",
            metrics=[
                {"kind": "safety_ceiling"},
                {"kind": "violation_rate", "group": "asking", "max": 0.5},
                {"kind": "detector_metric", "measure": "silence_p95_ms", "max": 3000},
                {
                    "kind": "judge_score_regression",
                    "score": "weighted_violations",
                    "tolerance": 0.5,
                },
            ],
        )

    def add_call(self, av, scenario, external_id, rvs=None, flagged=()):
        t = TranscriptFactory(agent_version=av, scenario=scenario, external_id=external_id)
        for i, (speaker, start, end) in enumerate(
            [("agent", 0, 3000), ("user", 3400, 6000), ("agent", 6800, 9000), ("user", 9500, 11000)]
        ):
            TurnFactory(transcript=t, index=i, speaker=speaker, start_ms=start, end_ms=end)
        for rv in rvs or (self.leak, self.one_q, self.short):
            self.verdict(t, rv, flagged=rv in flagged)
        self.calls[external_id] = t
        return t

    def verdict(self, t, rv, flagged=False, turn=2):
        return VerdictFactory(
            transcript=t,
            rule_version=rv,
            judge=self.judge,
            flagged=flagged,
            turn=turn if flagged else None,
            turns=[turn] if flagged else [],
            severity=rv.rule.severity if flagged else "",
        )

    def flag(self, external_id, rv, turn=2):
        v = self.calls[external_id].verdicts.get(rule_version=rv)
        v.flagged, v.turn, v.turns, v.severity = True, turn, [turn], rv.rule.severity
        v.save()
        return v

    def run(self, candidate, baseline=None):
        cand = agent_version_resolve(candidate)
        base = agent_version_resolve(baseline) if baseline else None
        return gating.gate_run_evaluate(gate=self.gate, candidate=cand, baseline=base, by="test")


def wait_for_gate_run(pk: int, limit_s: float = 60):
    """Wait until a queued gate run is decided (it runs in a thread without a broker)."""
    import time

    from django.db import OperationalError

    from evals.gating.models import GateRun

    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            run = GateRun.objects.get(pk=pk)
        except OperationalError:  # SQLite's shared-cache test database locks tables while it writes
            run = None
        if run is not None and run.status not in ("pending", "running"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"gate run {pk} was not decided")
