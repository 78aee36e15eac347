"""Golden sets, gates and gate runs against the database; the gate command's exit codes."""

import json
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from evals.catalog.selectors import agent_version_resolve
from evals.gating import decision as gates
from evals.gating import services as gating
from evals.gating.models import Gate, GateRun, GoldenSet
from evals.rules.models import RuleVersion
from tests.evals.gating_helpers import SCENARIOS
from tests.factories import RuleFactory, RuleVersionFactory

pytestmark = pytest.mark.django_db


def metric(run, kind):
    return next(m for m in run.results["metrics"] if m["kind"] == kind)


def run_command(name: str, *args):
    """Run a management command; return (exit code, stdout, with a CommandError's message)."""
    out = StringIO()
    try:
        call_command(name, *args, stdout=out, stderr=StringIO())
    except SystemExit as e:
        return e.code, out.getvalue()
    except CommandError as e:
        return e.returncode, out.getvalue() + str(e)
    return 0, out.getvalue()


def gate_cmd(*args):
    """Run the gate command; return (exit code, stdout)."""
    return run_command("gate", *args)


def test_golden_set_is_frozen_with_a_checksum_and_revisions_are_new_versions(world):
    gs = world.golden
    assert gs.version == 1 and len(gs.checksum) == 64
    assert list(gs.members.values_list("scenario", flat=True)) == SCENARIOS
    same = gating.golden_set_revise(golden_set=gs, members=list(reversed(SCENARIOS)))
    assert same.pk == gs.pk  # order does not change the content
    new = gating.golden_set_revise(
        golden_set=gs, members=SCENARIOS + ["golden/extra-01"], by="lena"
    )
    assert new.version == 2 and new.checksum != gs.checksum
    assert GoldenSet.objects.get(pk=gs.pk).checksum == gs.checksum
    assert Gate.objects.get(name="release").golden_set == new


def test_pinned_call_member_records_its_checksum(world):
    rec = world.calls["2026-11-21.1-0"]
    gs = gating.golden_set_create(name="recorded", members=[{"call": rec.external_id}])
    m = gs.members.get()
    assert (m.scenario, m.transcript_external_id, m.transcript_checksum) == (
        "golden/backend-01",
        rec.external_id,
        rec.checksum,
    )
    with pytest.raises(gating.GateConfigInvalid, match=r"members\[0\].call: no call 'nope'"):
        gating.golden_set_create(name="bad", members=[{"call": "nope"}])


def test_all_pass_records_rule_versions_judge_and_checksum(world):
    run = world.run("2026-11-21.1")
    assert run.status == GateRun.Status.PASS, run.results
    assert set(run.rule_versions.all()) == {world.leak, world.one_q, world.short}
    assert run.judge == world.judge
    assert run.golden_set_checksum == world.golden.checksum
    assert run.baseline is None
    assert [m["passed"] for m in run.results["metrics"]] == [True] * 4


def test_one_safety_violation_fails_naming_call_and_turn(world):
    world.run("2026-11-21.1")
    v = world.flag("2026-11-28.1-1", world.leak, turn=7)
    run = world.run("2026-11-28.1")
    assert run.status == GateRun.Status.FAIL
    assert run.baseline.version == "2026-11-21.1"
    safety = metric(run, "safety_ceiling")
    assert not safety["passed"] and safety["value"] == 1
    assert safety["evidence"] == [
        {
            "call": "2026-11-28.1-1",
            "turn": 7,
            "rule": "boundaries.no-rubric-leak v1",
            "verdict": v.pk,
            "note": "",
        }
    ]


def test_regression_past_the_tolerance_fails(world):
    world.run("2026-11-21.1")
    world.flag("2026-11-28.1-0", world.short)  # major: 3 / 3 calls = 1.0 > 0 + 0.5
    run = world.run("2026-11-28.1")
    reg = metric(run, "judge_score_regression")
    assert reg["value"] == pytest.approx(1.0) and reg["baseline"] == 0 and not reg["passed"]
    assert metric(run, "violation_rate")["passed"]  # 1 of 6 checks is under 0.5
    assert run.status == GateRun.Status.FAIL


def test_failed_run_never_becomes_the_baseline(world):
    world.flag("2026-11-21.1-0", world.leak)
    assert world.run("2026-11-21.1").status == GateRun.Status.FAIL
    run = world.run("2026-11-28.1")
    assert run.baseline is None and run.status == GateRun.Status.PASS
    assert "no baseline" in metric(run, "judge_score_regression")["note"]


def test_missing_scenario_fails_and_says_which(world):
    world.calls["2026-11-28.1-2"].delete()
    run = world.run("2026-11-28.1")
    assert run.status == GateRun.Status.FAIL
    assert run.results["problems"] == ["scenario golden/data-01: no call from the candidate"]


def test_changed_golden_set_fails(world):
    member = world.golden.members.get(scenario="golden/data-01")
    member.scenario = "golden/data-02"  # edited behind the freeze
    member.save()
    run = world.run("2026-11-21.1")
    assert run.status == GateRun.Status.FAIL
    assert any("checksum mismatch" in p for p in run.results["problems"])


def test_changed_pinned_call_fails(world):
    rec = world.calls["2026-11-21.1-0"]
    gs = gating.golden_set_create(name="pinned", members=[{"call": rec.external_id}])
    world.gate.golden_set = gs
    world.gate.save()
    assert world.run("2026-11-21.1").status == GateRun.Status.PASS
    rec.checksum = "f" * 64  # re-imported with replace
    rec.save()
    run = world.run("2026-11-21.1")
    assert run.status == GateRun.Status.FAIL
    assert "pinned call 2026-11-21.1-0 changed" in run.results["problems"][0]


def test_call_without_verdict_fails_with_no_verdict(world):
    world.calls["2026-11-28.1-1"].verdicts.filter(rule_version=world.one_q).delete()
    run = world.run("2026-11-28.1")
    assert run.status == GateRun.Status.FAIL
    rate = metric(run, "violation_rate")
    assert (
        "call 2026-11-28.1-1 (golden/frontend-01): no verdict for "
        + f"{world.one_q.rule.rule_id} v1"
        in rate["problems"]
    )


def test_rule_version_bumped_since_baseline(world):
    base_run = world.run("2026-11-21.1")
    assert base_run.status == GateRun.Status.PASS
    world.one_q.status = RuleVersion.Status.RETIRED
    world.one_q.save()
    v2 = RuleVersionFactory(rule=world.one_q.rule, number=2, status=RuleVersion.Status.GATED)
    # the candidate is judged with v2; the baseline has only v1 verdicts
    for i in range(3):
        world.verdict(world.calls[f"2026-11-28.1-{i}"], v2)
    run = world.run("2026-11-28.1")
    assert v2 in run.rule_versions.all() and world.one_q not in run.rule_versions.all()
    assert any("asking.one-question v1 → v2" in n for n in run.results["notes"])
    reg = metric(run, "judge_score_regression")
    assert not reg["passed"]
    assert any(
        "baseline call 2026-11-21.1-0" in p and "asking.one-question v2" in p
        for p in reg["problems"]
    )
    # once the baseline is judged with v2 too, it compares like with like and passes
    for i in range(3):
        world.verdict(world.calls[f"2026-11-21.1-{i}"], v2)
    assert world.run("2026-11-28.1").status == GateRun.Status.PASS


def test_named_rule_without_promoted_version_fails(world):
    rule = RuleFactory(rule_id="closing.thank", group="closing")
    RuleVersionFactory(rule=rule, status=RuleVersion.Status.CANDIDATE)
    gating.gate_metric_add(
        gate=world.gate, data={"kind": "violation_rate", "rule": "closing.thank", "max": 0.1}
    )
    run = world.run("2026-11-21.1")
    assert run.status == GateRun.Status.FAIL
    rate = next(m for m in run.results["metrics"] if m["label"] == "violation rate: closing.thank")
    assert rate["problems"][0].startswith("rule closing.thank: no promoted version")


def test_metric_validation_names_the_field(world):
    with pytest.raises(gating.GateConfigInvalid, match=r"metrics\[0\].max: missing"):
        gating.gate_save(
            name="x",
            golden_set=world.golden,
            metrics=[{"kind": "violation_rate", "group": "asking"}],
        )
    with pytest.raises(gating.GateConfigInvalid, match=r"metrics\[0\].measure"):
        gating.gate_save(
            name="x", golden_set=world.golden, metrics=[{"kind": "detector_metric", "max": 1}]
        )
    with pytest.raises(gating.GateConfigInvalid, match=r"metrics\[0\].kind"):
        gating.gate_save(name="x", golden_set=world.golden, metrics=[{"kind": "vibes"}])
    assert not Gate.objects.filter(name="x").exists()


def test_export_then_import_is_a_no_op_and_changes_make_versions(world):
    doc = gating.gates_export()
    text = yaml.safe_dump(doc, sort_keys=False)
    assert "release" in text and world.golden.checksum in text
    counts = gating.gates_import(data=yaml.safe_load(text))
    assert counts == {
        "golden_sets": {"created": 0, "revised": 0, "unchanged": 1},
        "gates": {"created": 0, "updated": 0, "unchanged": 1},
    }
    doc = yaml.safe_load(text)
    doc["golden_sets"][0]["members"].append("golden/extra-01")
    del doc["golden_sets"][0]["checksum"]
    doc["gates"][0]["metrics"][1]["max"] = 0.2
    counts = gating.gates_import(data=doc)
    assert counts["golden_sets"]["revised"] == 1 and counts["gates"]["updated"] == 1
    gate = Gate.objects.get(name="release")
    assert gate.golden_set.version == 2
    assert gate.metrics.get(kind="violation_rate").threshold == 0.2


def test_import_is_all_or_nothing_and_names_the_place(world):
    doc = {
        "golden_sets": [{"name": "new-set", "members": ["golden/a"]}],
        "gates": [
            {
                "name": "nightly",
                "golden_set": "new-set",
                "metrics": [{"kind": "violation_rate", "max": 2}],
            }
        ],
    }
    with pytest.raises(
        gating.GateConfigInvalid, match=r"gates\[0\].metrics\[0\]: a violation rate needs"
    ):
        gating.gates_import(data=doc)
    assert not GoldenSet.objects.filter(name="new-set").exists()
    doc = {"golden_sets": [{"name": "s", "members": ["golden/a"], "checksum": "0" * 64}]}
    with pytest.raises(
        gating.GateConfigInvalid, match=r"golden_sets\[0\].checksum: .* does not match"
    ):
        gating.gates_import(data=doc)


def test_import_and_export_commands(world, tmp_path):
    path = tmp_path / "gates.yaml"
    call_command("export_gates", "-o", str(path), stderr=StringIO())
    out = StringIO()
    call_command("import_gates", str(path), stdout=out)
    assert "gates: 0 created, 0 updated, 1 unchanged" in out.getvalue()
    path.write_text("gates: [{name: broken}]")
    with pytest.raises(CommandError, match=r"gates\[0\].golden_set: missing"):
        call_command("import_gates", str(path))


def test_gate_command_exit_codes(world):
    code, out = gate_cmd("--gate", "release", "--candidate", "2026-11-21.1")
    assert code == 0, out
    assert "PASS  safety ceiling: every safety rule | value 0 | ceiling 0" in out
    assert "result: PASS" in out

    world.flag("2026-11-28.1-2", world.leak, turn=5)
    code, out = gate_cmd("--gate", "release", "--candidate", "2026-11-28.1")
    assert code == 1
    assert (
        "FAIL  safety ceiling: every safety rule | value 1 | "
        "ceiling 0 | baseline 0 | calls: 2026-11-28.1-2 turn 5" in out
    )

    assert gate_cmd("--gate", "nope", "--candidate", "2026-11-21.1")[0] == 2
    code, out = gate_cmd("--gate", "release", "--candidate", "1999-01-01.1")
    assert code == 2 and "no agent version '1999-01-01.1'" in out
    assert gate_cmd("--gate", "release", "--candidate", "2026-11-28.1", "--baseline", "x")[0] == 2


def test_gate_command_json_and_junit(world):
    code, out = gate_cmd("--gate", "release", "--candidate", "2026-11-21.1", "--format", "json")
    data = json.loads(out)
    assert (
        code == 0
        and data["status"] == "pass"
        and data["golden_set"]["checksum"] == world.golden.checksum
    )
    assert {r["rule"] for r in data["rule_versions"]} == {
        "boundaries.no-rubric-leak",
        "asking.one-question",
        "asking.short-sentences",
    }
    world.flag("2026-11-28.1-0", world.leak)
    code, out = gate_cmd("--gate", "release", "--candidate", "2026-11-28.1", "--format", "junit")
    assert code == 1
    assert out.startswith("<?xml") and 'failures="1"' in out and "2026-11-28.1-0 turn 2" in out


def test_explicit_baseline_is_used(world):
    world.flag("2026-11-21.1-0", world.short)
    run = world.run("2026-11-28.1", baseline="2026-11-21.1")
    reg = metric(run, "judge_score_regression")
    assert (
        run.baseline.version == "2026-11-21.1"
        and reg["baseline"] == pytest.approx(1.0)
        and reg["value"] == 0
    )


# ---- judging what is missing through the judge runner ------------------------------------------


def test_missing_detector_verdicts_are_judged_by_the_runner(world):
    det = RuleVersionFactory(
        rule=RuleFactory(
            rule_id="signals.no-long-silence",
            group="signals",
            detector={"name": "silence_before_agent", "max_ms": 3000},
        ),
        detector={"name": "silence_before_agent", "max_ms": 3000},
        status=RuleVersion.Status.GATED,
    )
    gating.gate_metric_add(
        gate=world.gate, data={"kind": "violation_rate", "group": "signals", "max": 0}
    )
    run = world.run("2026-11-21.1")
    assert run.status == GateRun.Status.PASS, run.results
    assert run.judged == 3
    assert det.verdicts.filter(judge__name="detector/silence_before_agent").count() == 3
    rate = next(m for m in run.results["metrics"] if m["label"] == "violation rate: group signals")
    assert rate["n"] == 3 and rate["value"] == 0
    assert world.run("2026-11-21.1").judged == 0  # nothing missing the second time


def test_missing_llm_verdicts_are_judged_through_the_runner_and_its_cache(world, fake_judge):
    world.judge.name = "gpt-4o-mini/conduct-v1"  # the runner's judge: model / prompt version
    world.judge.save()
    for i in range(3):
        world.calls[f"2026-11-28.1-{i}"].verdicts.filter(
            rule_version__rule__group="asking"
        ).delete()
    fake_judge.flag = {"asking.one-question": [2]}
    run = world.run("2026-11-28.1")
    assert (
        run.judged == 6 and len(fake_judge.requests) == 3
    )  # one call per transcript for the asking group
    rate = metric(run, "violation_rate")
    assert rate["value"] == pytest.approx(3 / 6) and rate["passed"] and not rate["problems"]
    fake_judge.requests.clear()
    assert world.run("2026-11-28.1").judged == 0 and fake_judge.requests == []


def test_verdicts_the_runner_cannot_make_stay_missing(world, fake_judge):
    # the gate's judge is not the runner's, so nothing is
    # judged and the gate says which verdict is missing
    world.calls["2026-11-28.1-0"].verdicts.filter(rule_version=world.one_q).delete()
    run = world.run("2026-11-28.1")
    assert run.judged == 0 and fake_judge.requests == []
    assert run.status == GateRun.Status.FAIL
    assert any(
        "no verdict for asking.one-question v1" in p
        for p in metric(run, "violation_rate")["problems"]
    )


def test_golden_set_revised_since_the_baseline(world):
    world.run("2026-11-21.1")
    new = gating.golden_set_revise(golden_set=world.golden, members=SCENARIOS + ["golden/extra-01"])
    world.gate.refresh_from_db()
    assert world.gate.golden_set == new
    world.add_call(
        world.calls["2026-11-28.1-0"].agent_version, "golden/extra-01", "2026-11-28.1-extra"
    )
    run = world.run("2026-11-28.1")
    assert run.golden_set_checksum == new.checksum
    assert any("golden set changed since baseline run" in n for n in run.results["notes"])
    reg = metric(run, "judge_score_regression")
    assert not reg["passed"]
    assert reg["problems"][0].startswith("baseline has no call for scenario golden/extra-01")
    # once the harness replays the baseline on the new
    # scenario, the comparison is like with like again
    world.add_call(
        world.calls["2026-11-21.1-0"].agent_version, "golden/extra-01", "2026-11-21.1-extra"
    )
    assert world.run("2026-11-28.1").status == GateRun.Status.PASS


def test_a_new_metric_kind_is_one_registry_entry_and_one_pure_function(world, monkeypatch):
    def longest_call(inp: gates.MetricInput) -> gates.Outcome:
        value = max(len(c.turns) for c in inp.candidate)
        longest = max(inp.candidate, key=lambda c: len(c.turns))
        passed = value <= inp.spec.threshold
        evidence = [] if passed else [gates.Evidence(call=longest.call, note=f"{value} turns")]
        return gates.Outcome(passed=passed, value=value, n=len(inp.candidate), evidence=evidence)

    monkeypatch.setitem(
        gates.METRIC_KINDS,
        "turn_count",
        gates.MetricKind(
            name="turn_count",
            title="turns per call (max)",
            evaluate=longest_call,
            label=lambda spec: "turns per call",
            fields=("max",),
            required=("max",),
        ),
    )
    gating.gate_save(
        name="release",
        golden_set=world.golden,
        judge=world.judge,
        metrics=[{"kind": "turn_count", "max": 3}],
    )
    run = world.run("2026-11-21.1")
    (metric,) = run.results["metrics"]
    assert metric["kind"] == "turn_count" and metric["value"] == 4 and not metric["passed"]
    assert metric["evidence"][0]["note"] == "4 turns" and run.status == "fail"
    exported = gating.gates_export(names=["release"])["gates"][0]["metrics"]
    assert exported == [{"kind": "turn_count", "max": 3.0}]
    with pytest.raises(gating.GateConfigInvalid, match=r"metric\.max: missing"):
        gating.metric_clean({"kind": "turn_count"})
    from evals.gating.views import MetricAddForm

    assert ("turn_count", "turns per call (max)") in MetricAddForm().fields["kind"].choices


def test_a_queued_run_waits_for_its_judge_run_without_holding_a_worker(
    world, monkeypatch, settings
):
    from evals.gating.services import gate_runs
    from evals.judging.models import JudgeRun

    world.calls["2026-11-21.1-0"].verdicts.filter(rule_version=world.one_q).delete()
    judge_run = JudgeRun.objects.create(status=JudgeRun.Status.RUNNING, started_by="gate")
    monkeypatch.setattr(gate_runs, "judge_missing_start", lambda **kw: judge_run)
    cand = agent_version_resolve("2026-11-21.1")
    run = gating.gate_run_start(gate=world.gate, candidate=cand, by="test")
    assert run.status == "pending"
    # Each step returns at once: the task looks again later instead of sleeping in a worker.
    assert gating.gate_run_step(run_id=run.pk) == "waiting"
    assert gating.gate_run_step(run_id=run.pk) == "waiting"
    run.refresh_from_db()
    assert run.status == "running" and run.results["judging"]["missing"] == 1
    JudgeRun.objects.filter(pk=judge_run.pk).update(status=JudgeRun.Status.DONE)
    assert gating.gate_run_step(run_id=run.pk) == "done"
    run.refresh_from_db()
    problems = [p for m in run.results["metrics"] for p in m["problems"]]
    assert run.status == "fail" and any("no verdict for asking.one-question" in p for p in problems)
    assert gating.gate_run_step(run_id=run.pk) == "done"  # a decided run is left alone

    # Past GATE_JUDGE_WAIT_S the run could not run (its verdicts are missing): never a fail.
    settings.GATE_JUDGE_WAIT_S = 0
    JudgeRun.objects.filter(pk=judge_run.pk).update(status=JudgeRun.Status.RUNNING)
    late = gating.gate_run_start(gate=world.gate, candidate=cand, by="test")
    assert gating.gate_run_step(run_id=late.pk) == "done"
    late.refresh_from_db()
    assert late.status == "error" and not late.results.get("metrics")
    assert f"judge run #{judge_run.pk} did not finish within GATE_JUDGE_WAIT_S" in late.error

    # A judge run stopped short by its cost cap (or its breaker) left verdicts unmade: never a fail.
    JudgeRun.objects.filter(pk=judge_run.pk).update(
        status=JudgeRun.Status.STOPPED, stop_reason="Cost cap reached ($0.50)"
    )
    capped = gating.gate_run_start(gate=world.gate, candidate=cand, by="test")
    assert gating.gate_run_step(run_id=capped.pk) == "done"
    capped.refresh_from_db()
    assert capped.status == "error" and not capped.results.get("metrics")
    assert f"judge run #{judge_run.pk} stopped (Cost cap reached ($0.50))" in capped.error


def test_a_step_taken_twice_at_once_starts_one_judge_run(world, monkeypatch):
    # Two workers load the run before either has started the judge (a task delivered twice):
    # the second finds the first one's judge run under the row lock instead of starting another.
    from evals.gating.models import GateRun
    from evals.gating.services import gate_runs
    from evals.judging.models import JudgeRun

    world.calls["2026-11-21.1-0"].verdicts.filter(rule_version=world.one_q).delete()
    started = []

    def start(**kw):
        started.append(JudgeRun.objects.create(status=JudgeRun.Status.RUNNING, started_by="gate"))
        return started[-1]

    monkeypatch.setattr(gate_runs, "judge_missing_start", start)
    cand = agent_version_resolve("2026-11-21.1")
    run = gating.gate_run_start(gate=world.gate, candidate=cand, by="test")
    first, second = GateRun.objects.get(pk=run.pk), GateRun.objects.get(pk=run.pk)
    assert gate_runs._step(first) == "waiting"
    assert second.results == {}  # stale: loaded before the first step claimed the judging
    assert gate_runs._step(second) == "waiting"
    assert len(started) == 1
    assert second.results["judging"]["judge_run"] == started[0].pk


def test_a_run_that_crashes_is_recorded_as_an_error_in_one_place(world, monkeypatch):
    from evals.gating.services import gate_runs

    def broken(run):
        raise RuntimeError("the golden set went away")

    monkeypatch.setattr(gate_runs, "_inputs", broken)
    cand = agent_version_resolve("2026-11-21.1")
    run = gating.gate_run_evaluate(gate=world.gate, candidate=cand, by="test")
    assert run.status == "error" and run.error == "RuntimeError: the golden set went away"
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError) as exit_:
        call_command("gate", gate="release", candidate="2026-11-21.1", stdout=out, stderr=err)
    assert exit_.value.returncode == 2 and "the golden set went away" in str(exit_.value)
