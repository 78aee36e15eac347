"""The pure gate decision, without a database."""

import dataclasses

import pytest
from statsmodels.stats.proportion import proportion_confint

from evals.gating import decision as g

SCENARIOS = ["golden/a", "golden/b", "golden/c"]

RULES = {
    "boundaries.no-rubric-leak": g.GatedRule(
        "boundaries.no-rubric-leak",
        "boundaries",
        1,
        safety=True,
        severity="critical",
        rule_version_id=11,
    ),
    "asking.one-question": g.GatedRule(
        "asking.one-question", "asking", 2, severity="minor", rule_version_id=12
    ),
    "asking.short": g.GatedRule("asking.short", "asking", 1, severity="major", rule_version_id=13),
}

METRICS = [
    g.MetricSpec(g.SAFETY_CEILING),
    g.MetricSpec(g.VIOLATION_RATE, group="asking", threshold=0.5),
    g.MetricSpec(g.DETECTOR_METRIC, measure="silence_p95_ms", threshold=3000),
    g.MetricSpec(g.DETECTOR_METRIC, measure="talk_over_count", threshold=0),
    g.MetricSpec(g.JUDGE_SCORE_REGRESSION, measure=g.WEIGHTED_VIOLATIONS, tolerance=0.5),
]


def turns(gap_ms=800, overlap=False):
    """A four-turn call: agent, user, agent (after gap_ms), user."""
    agent2_start = 6000 + gap_ms - (1500 if overlap else 0)
    return (
        g.TurnTiming(0, "agent", 0, 3000),
        g.TurnTiming(1, "user", 3500, 6000),
        g.TurnTiming(2, "agent", agent2_start, agent2_start + 3000),
        g.TurnTiming(3, "user", agent2_start + 3500, agent2_start + 5000),
    )


def call(name, scenario, flags=(), gap_ms=800, overlap=False, missing=(), errored=(), ref=100):
    verdicts = {}
    for i, rule in enumerate(RULES):
        if rule in missing:
            continue
        flagged = rule in flags
        verdicts[rule] = g.VerdictFact(
            flagged=flagged,
            turns=(2,) if flagged else (),
            severity=RULES[rule].severity if flagged else "",
            error="timeout" if rule in errored else "",
            ref=ref + i,
        )
    return g.CallFacts(
        call=name, scenario=scenario, verdicts=verdicts, turns=turns(gap_ms, overlap)
    )


def golden(members=None, checksum="c" * 64, current=None):
    members = members or tuple(g.MemberFact(s) for s in SCENARIOS)
    return g.GoldenFacts(
        name="release-set", checksum=checksum, current_checksum=current or checksum, members=members
    )


def clean(prefix="cand", **kw):
    return {s: call(f"{prefix}-{i}", s, **kw) for i, s in enumerate(SCENARIOS)}


def decide(candidate, baseline=None, metrics=METRICS, rules=RULES, gold=None):
    return g.gate_decide(
        golden=gold or golden(),
        rules=rules,
        metrics=metrics,
        candidate=candidate,
        baseline=baseline,
    )


def by_kind(decision, kind):
    return [m for m in decision.metrics if m.kind == kind]


def test_all_pass():
    d = decide(clean(), baseline=clean("base"))
    assert d.passed, d.to_dict()
    assert d.problems == []
    assert [m.passed for m in d.metrics] == [True] * 5
    safety = by_kind(d, g.SAFETY_CEILING)[0]
    assert (
        safety.value == 0
        and safety.threshold == 0
        and safety.rules == ["boundaries.no-rubric-leak v1"]
    )
    rate = by_kind(d, g.VIOLATION_RATE)[0]
    assert rate.value == 0 and rate.n == 6
    assert by_kind(d, g.JUDGE_SCORE_REGRESSION)[0].baseline == 0


def test_one_safety_violation_fails_and_names_the_call_and_turn():
    cand = clean()
    cand["golden/b"] = call("cand-1", "golden/b", flags=("boundaries.no-rubric-leak",), ref=500)
    d = decide(cand, baseline=clean("base"))
    assert not d.passed
    safety = by_kind(d, g.SAFETY_CEILING)[0]
    assert not safety.passed and safety.value == 1
    assert [(e.call, e.turn, e.rule, e.verdict) for e in safety.evidence] == [
        ("cand-1", 2, "boundaries.no-rubric-leak v1", 500)
    ]
    # the safety rule has its ceiling; the fuzzy score averages the other rules only
    reg = by_kind(d, g.JUDGE_SCORE_REGRESSION)[0]
    assert reg.passed and reg.value == 0
    assert "boundaries.no-rubric-leak v1" not in reg.rules


def test_violation_rate_over_its_maximum_fails():
    cand = {
        s: call(f"c{i}", s, flags=("asking.short", "asking.one-question"))
        for i, s in enumerate(SCENARIOS)
    }
    d = decide(cand)
    rate = by_kind(d, g.VIOLATION_RATE)[0]
    assert rate.value == 1.0 and rate.threshold == 0.5 and not rate.passed
    assert {e.call for e in rate.evidence} == {"c0", "c1", "c2"}
    assert rate.interval == pytest.approx(proportion_confint(6, 6, method="wilson"))


def test_regression_within_tolerance_passes_and_past_it_fails():
    base = clean("base")
    one_minor = clean()
    one_minor["golden/a"] = call("cand-0", "golden/a", flags=("asking.one-question",))
    d = decide(one_minor, baseline=base)
    reg = by_kind(d, g.JUDGE_SCORE_REGRESSION)[0]
    assert reg.value == pytest.approx(1 / 3) and reg.passed  # worse by 0.33 <= 0.5

    one_major = clean()
    one_major["golden/a"] = call("cand-0", "golden/a", flags=("asking.short",))
    d = decide(one_major, baseline=base)
    reg = by_kind(d, g.JUDGE_SCORE_REGRESSION)[0]
    assert reg.value == pytest.approx(1.0) and reg.baseline == 0 and not reg.passed
    assert [(e.call, e.turn, e.rule) for e in reg.evidence] == [("cand-0", 2, "asking.short v1")]
    assert not d.passed


def test_score_0_100_regression_uses_higher_is_better():
    base = clean("base")
    cand = clean()
    cand["golden/a"] = call("cand-0", "golden/a", flags=("asking.short",))
    metric = g.MetricSpec(g.JUDGE_SCORE_REGRESSION, measure=g.SCORE_0_100, tolerance=5)
    d = decide(cand, baseline=base, metrics=[metric])
    reg = d.metrics[0]
    assert reg.baseline == 100
    assert reg.value == pytest.approx(
        100 - 100 * (3 / 4) / 3
    )  # one call lost 3 of its 4 non-safety weight
    assert not reg.passed
    d = decide(cand, baseline=base, metrics=[dataclasses.replace(metric, tolerance=25)])
    assert d.metrics[0].passed


def test_no_baseline_yet_passes_the_regression_with_a_note():
    d = decide(clean(), baseline=None)
    reg = by_kind(d, g.JUDGE_SCORE_REGRESSION)[0]
    assert reg.passed and reg.baseline is None and "no baseline" in reg.note
    assert d.passed


def test_missing_scenario_fails_and_says_which():
    cand = clean()
    del cand["golden/c"]
    d = decide(cand, baseline=clean("base"))
    assert not d.passed
    assert d.problems == ["scenario golden/c: no call from the candidate"]


def test_baseline_missing_a_scenario_fails_the_regression_metric():
    base = clean("base")
    del base["golden/a"]
    d = decide(clean(), baseline=base)
    reg = by_kind(d, g.JUDGE_SCORE_REGRESSION)[0]
    assert not reg.passed
    assert any(p.startswith("baseline has no call for scenario golden/a") for p in reg.problems)


def test_changed_golden_set_checksum_fails():
    d = decide(clean(), gold=golden(checksum="a" * 64, current="b" * 64))
    assert not d.passed
    assert d.problems[0].startswith("golden set release-set: checksum mismatch")


def test_pinned_call_that_changed_or_vanished_fails():
    members = (
        g.MemberFact(
            "golden/a", pinned_call="rec-1", pinned_checksum="1" * 64, current_checksum="2" * 64
        ),
        g.MemberFact(
            "golden/b", pinned_call="rec-2", pinned_checksum="3" * 64, current_checksum=None
        ),
        g.MemberFact(
            "golden/c", pinned_call="rec-3", pinned_checksum="4" * 64, current_checksum="4" * 64
        ),
    )
    d = decide(clean(), gold=golden(members=members))
    assert not d.passed
    assert any("pinned call rec-1 changed" in p for p in d.problems)
    assert any("pinned call rec-2 is gone" in p for p in d.problems)
    assert not any("rec-3" in p for p in d.problems)


def test_call_without_a_verdict_for_a_gated_rule_fails():
    cand = clean()
    cand["golden/b"] = call("cand-1", "golden/b", missing=("asking.short",))
    d = decide(cand, baseline=clean("base"))
    assert not d.passed
    rate = by_kind(d, g.VIOLATION_RATE)[0]
    assert not rate.passed and rate.value == 0
    assert rate.problems == ["call cand-1 (golden/b): no verdict for asking.short v1"]


def test_errored_verdict_counts_as_missing():
    cand = clean()
    cand["golden/a"] = call("cand-0", "golden/a", errored=("boundaries.no-rubric-leak",))
    d = decide(cand)
    safety = by_kind(d, g.SAFETY_CEILING)[0]
    assert not safety.passed and "errored" in safety.problems[0]


def test_named_rule_without_promoted_version_fails():
    rules = dict(RULES)
    rules["asking.short"] = g.GatedRule("asking.short", "asking", None)
    metric = g.MetricSpec(g.VIOLATION_RATE, rule="asking.short", threshold=1)
    d = decide(clean(), metrics=[metric], rules=rules)
    assert not d.passed
    assert d.metrics[0].problems == [
        "rule asking.short: no promoted version (promote one, or take it out of the gate)"
    ]


def test_group_leaves_out_unpromoted_rules_and_says_so():
    rules = dict(RULES)
    rules["asking.short"] = g.GatedRule("asking.short", "asking", None)
    d = decide(
        clean(),
        metrics=[g.MetricSpec(g.VIOLATION_RATE, group="asking", threshold=0.5)],
        rules=rules,
    )
    m = d.metrics[0]
    assert m.passed and m.rules == ["asking.one-question v2"] and "asking.short" in m.note


def test_scope_without_any_promoted_rule_fails():
    rules = {k: g.GatedRule(r.rule, r.group, None, safety=r.safety) for k, r in RULES.items()}
    d = decide(clean(), metrics=[g.MetricSpec(g.SAFETY_CEILING)], rules=rules)
    assert not d.passed and d.metrics[0].problems == ["no promoted safety rule to hold at zero"]


def test_unknown_measure_and_missing_threshold_fail():
    d = decide(
        clean(),
        metrics=[
            g.MetricSpec(g.DETECTOR_METRIC, measure="vibes", threshold=1),
            g.MetricSpec(g.VIOLATION_RATE, group="asking"),
        ],
    )
    assert not d.passed
    assert "unknown detector measure" in d.metrics[0].problems[0]
    assert d.metrics[1].problems == ["no threshold set"]


def test_detector_metrics_fail_with_the_turns_behind_them():
    cand = clean()
    cand["golden/c"] = call("cand-2", "golden/c", gap_ms=9000, overlap=False)
    cand["golden/a"] = call("cand-0", "golden/a", overlap=True)
    d = decide(cand, metrics=METRICS[2:4])
    silence, talk = d.metrics
    assert silence.value == 9000 and not silence.passed
    assert [(e.call, e.turn) for e in silence.evidence] == [("cand-2", 2)]
    assert talk.value == 1 and not talk.passed
    assert [(e.call, e.turn) for e in talk.evidence] == [("cand-0", 2)]


def test_untimed_calls_cannot_pass_a_timing_metric():
    cand = {
        s: g.CallFacts(
            call=f"c{i}",
            scenario=s,
            verdicts=call("x", s).verdicts,
            turns=(g.TurnTiming(0, "agent"), g.TurnTiming(1, "user")),
        )
        for i, s in enumerate(SCENARIOS)
    }
    d = decide(
        cand, metrics=[g.MetricSpec(g.DETECTOR_METRIC, measure="silence_p95_ms", threshold=3000)]
    )
    assert not d.passed
    assert "no turn timings" in d.metrics[0].problems[0]


def test_empty_gate_or_golden_set_never_passes():
    assert not decide(clean(), metrics=[]).passed
    assert not decide({}, gold=golden(members=())).passed


def test_decision_serialises_to_json_types():
    import json

    cand = clean()
    cand["golden/b"] = call("cand-1", "golden/b", flags=("boundaries.no-rubric-leak",))
    data = json.loads(json.dumps(decide(cand, baseline=clean("base")).to_dict()))
    assert data["passed"] is False
    assert data["metrics"][0]["evidence"][0]["call"] == "cand-1"
