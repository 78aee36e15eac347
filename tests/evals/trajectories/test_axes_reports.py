"""Axes reports over imported trajectories: the 200 tau-bench airline results against their gold
actions and rewards, generic trajectories with expectations, the regression flag and exit code."""

import json
from pathlib import Path
from statistics import mean

import pytest
from django.core.management import call_command
from lxml import etree

from evals.catalog.services.importing import transcripts_import
from evals.trajectories.models import AxesReport
from tests.evals.gating.test_gating import run_command
from tests.evals.import_helpers import TAU_BENCH

SCHEMAS = Path(__file__).parents[1] / "junit"
pytestmark = pytest.mark.django_db
needs_tau = pytest.mark.skipif(
    not TAU_BENCH.exists(), reason="the shared tau-bench dataset is not beside the repo"
)


def axes_cmd(*args):
    """Run the axes command; return (exit code, stdout)."""
    return run_command("axes", *args)


def junit_valid(xml: str):
    doc = etree.fromstring(xml.encode())
    for name in ("junit-10.xsd", "JUnit.xsd"):
        schema = etree.XMLSchema(etree.parse(str(SCHEMAS / name)))
        assert schema.validate(doc), f"{name}: {schema.error_log}"
    return doc


def reference_tool_points(result: dict) -> tuple[int, int]:
    """The points of one tau-bench result, computed here from the file on its own terms."""
    write = {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "send_certificate",
    }
    made = [
        (tc["function"]["name"], json.loads(tc["function"]["arguments"]))
        for m in result["traj"]
        if m["role"] == "assistant"
        for tc in m.get("tool_calls") or []
    ]
    gold = result["info"]["task"]["actions"]
    points, maximum, used = 0, 0, set()
    for action in gold:
        maximum += 1 + len(action["kwargs"])
        options = [
            i for i, (name, _) in enumerate(made) if name == action["name"] and i not in used
        ]
        if not options:
            continue

        def hits(i, action=action):
            return sum(
                1
                for k, v in action["kwargs"].items()
                if k in made[i][1] and json.dumps(made[i][1][k]) == json.dumps(v)
            )

        best = max(options, key=lambda i: (hits(i), -i))
        used.add(best)
        points += 1 + hits(best)
    gold_names = {a["name"] for a in gold}
    count_ok = sum(1 for n, _ in made if n in write) == sum(1 for a in gold if a["name"] in write)
    prohibited = any(n in write - gold_names for n, _ in made)
    return points + count_ok + (not prohibited), maximum + 2


@needs_tau
def test_tau_bench_airline_scores_per_task_and_overall_and_success_is_the_mean_reward():
    results = json.loads(TAU_BENCH.read_text())
    call_command(
        "import_transcripts", str(TAU_BENCH), "--agent", "tau-airline", "--agent-version", "gpt-4o"
    )
    code, out = axes_cmd(
        "--agent", "tau-airline", "--agent-version", "gpt-4o", "--format", "json", "--rows"
    )
    assert code == 0, out
    report = json.loads(out)
    assert report["trajectories"] == len(results) == 200
    success = report["overall"]["task_success"]
    file_mean = mean(r["reward"] for r in results)
    assert success["n"] == 200
    assert success["pass_rate"] == pytest.approx(file_mean) and success["passed"] == 84
    assert success["mean_reward"] == pytest.approx(file_mean)
    tools = report["overall"]["tool_correctness"]
    assert tools["n"] == 200 and 0 < tools["points"] < tools["max"]
    assert report["overall"]["faithfulness"]["n"] == 0  # not asked for: never mixed in

    # Per task: 50 tasks of 4 trials, each task's success the mean of its trials' rewards.
    tasks = {t["task"]: t for t in report["tasks"]}
    assert len(tasks) == 50 and {t["trajectories"] for t in tasks.values()} == {4}
    for task_id in ("0", "12", "49"):
        rewards = [r["reward"] for r in results if str(r["task_id"]) == task_id]
        assert tasks[task_id]["task_success"]["pass_rate"] == pytest.approx(mean(rewards))

    # Every trajectory's points agree with the reference computed from the file alone.
    by_id = {row["id"]: row for row in report["rows"]}
    rows_by_key = {
        tuple(row["id"].split("-")[2:5:2]): row for row in by_id.values()
    }  # (task, trial)
    for r in results:
        row = rows_by_key[(str(r["task_id"]), str(r["trial"]))]
        tc = row["tool_correctness"]
        assert (tc["points"], tc["max"]) == reference_tool_points(r), row["id"]
    assert tools["points"] == sum(reference_tool_points(r)[0] for r in results)

    # The table and JUnit say the same; a second report compares with this green one.
    code, table = axes_cmd("--agent", "tau-airline", "--agent-version", "gpt-4o")
    assert code == 0
    assert "Task success      84/200 passed (42.0%), mean reward 0.42" in table
    assert "ok    Task success: pass rate 42.0% vs 42.0%" in table
    code, xml = axes_cmd("--agent", "tau-airline", "--agent-version", "gpt-4o", "--format", "junit")
    suite = junit_valid(xml)
    assert code == 0 and suite.get("failures") == "0" and suite.get("skipped") == "1"
    assert AxesReport.objects.count() == 3 and AxesReport.objects.filter(passed=True).count() == 3


def trajectory(i: int, version: str, *, ok: bool) -> dict:
    """A generic trajectory: it looks an order up and refunds it (or refunds the wrong one)."""
    order = f"A{i}"
    paid = order if ok else "B0"
    return {
        "id": f"{version}-refund-{i}",
        "agent": "shop",
        "agent_version": version,
        "prompt": f"Refund order {order}.",
        "calls": [
            {"tool": "get_order", "args": {"order_id": order}, "result": {"status": "delivered"}},
            {"tool": "refund", "args": {"order_id": paid}, "result": {"ok": True}},
        ],
        "output": f"Order {order} is refunded.",
        "metadata": {
            "task": f"refund-{i % 3}",
            "final_state": {"orders": {paid: {"status": "refunded"}}},
            "expectations": {
                "calls": [
                    {"tool": "get_order", "args": {"order_id": order}},
                    {"tool": "refund", "args": {"order_id": order}},
                ],
                "prohibited": ["delete_account"],
                "checklist": {
                    "post": [{"path": f"orders.{order}.status", "equals": "refunded"}],
                    "no_extra_side_effects": True,
                },
            },
        },
    }


def import_version(version: str, good: int, total: int = 10):
    lines = [json.dumps(trajectory(i, version, ok=i < good)) for i in range(total)]
    transcripts_import(lines=lines, source="test")


def test_an_axis_dropping_more_than_allowed_is_flagged_and_exits_1():
    import_version("v1", good=9)
    code, out = axes_cmd("--agent", "shop", "--agent-version", "v1", "--format", "json")
    first = json.loads(out)
    assert code == 0 and first["passed"] and first["baseline"] is None
    assert first["overall"]["task_success"]["pass_rate"] == 0.9
    tc = first["overall"]["tool_correctness"]
    # 9 right: 2 + 2 + 1 + 1 = 6 of 6; 1 wrong refund argument: 5 of 6
    assert (tc["points"], tc["max"], tc["passed"]) == (59, 60, 9)
    assert {t["task"] for t in first["tasks"]} == {"refund-0", "refund-1", "refund-2"}

    import_version("v2", good=8)  # 10 points down: flagged at the default 5
    code, out = axes_cmd("--agent", "shop", "--agent-version", "v2")
    assert code == 1, out
    assert "FLAG  Task success: pass rate 80.0% vs 90.0% (drop +10.0 points)" in out
    assert "FLAG  Tool correctness" in out and "result: FAIL" in out
    code, xml = axes_cmd("--agent", "shop", "--agent-version", "v2", "--format", "junit")
    suite = junit_valid(xml)
    assert code == 1 and suite.get("failures") == "2"
    assert suite.find("testcase/failure").get("type") == "regression"
    assert axes_cmd("--agent", "shop", "--agent-version", "v2", "--max-drop", "0.1")[0] == 0

    # A flagged report is never the baseline: the next compares with the last green one.
    import_version("v3", good=9)
    code, out = axes_cmd("--agent", "shop", "--agent-version", "v3", "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["baseline"]["agent_version"] == "v2"  # the --max-drop 0.1 run
    assert AxesReport.objects.get(pk=report["baseline"]["id"]).passed


def test_expectations_file_overrides_nothing_tau_and_names_a_bad_line(tmp_path):
    rows = []
    for i in range(2):
        t = trajectory(i, "v1", ok=True)
        del t["metadata"]["expectations"]
        rows.append(json.dumps(t))
    transcripts_import(lines=rows, source="test")
    code, out = axes_cmd("--agent", "shop", "--agent-version", "v1", "--format", "json")
    assert json.loads(out)["overall"]["tool_correctness"]["n"] == 0  # nothing to score against
    exp = tmp_path / "expected.jsonl"
    exp.write_text(
        json.dumps({"task": "refund-0", "calls": [{"tool": "get_order", "args": {}}]})
        + "\n"
        + json.dumps({"task": "refund-1", "calls": [{"tool": "refund"}], "reward": 1})
        + "\n"
    )
    code, out = axes_cmd(
        "--agent", "shop", "--agent-version", "v1", "--expectations", str(exp), "--format", "json"
    )
    report = json.loads(out)
    assert code == 0 and report["overall"]["tool_correctness"]["n"] == 2
    assert report["overall"]["task_success"]["n"] == 1  # only refund-1 has a reward
    exp.write_text(json.dumps({"task": "refund-0"}) + "\n" + json.dumps({"task": "x", "calls": 3}))
    code, out = axes_cmd("--agent", "shop", "--agent-version", "v1", "--expectations", str(exp))
    assert code == 2 and "expected.jsonl:2: calls: must be a list" in out
    code, out = axes_cmd("--agent", "shop", "--agent-version", "v9")
    assert code == 2 and "no version 'v9' of agent 'shop'" in out


class ClaimsJudge:
    """The fake judge server answering the faithfulness schema: one claim per sentence of the
    OUTPUT, supported when each of its numbers appears in the EVIDENCE."""

    @staticmethod
    def answer(body: dict):
        import re

        from tests.evals.judge_server import FakeJudge

        prompt = body["messages"][-1]["content"]
        evidence, output = prompt.split("\n\nOUTPUT:\n", 1)
        claims = []
        for sentence in filter(None, (s.strip() for s in output.split("."))):
            numbers = re.findall(r"\d+", sentence)
            claims.append(
                {
                    "claim": sentence,
                    "supported": all(n in evidence for n in numbers),
                    "evidence": ["T2"],
                }
            )
        return 200, FakeJudge.completion(body, json.dumps({"claims": claims}))


def test_faithfulness_counts_supported_claims_through_the_judge_and_caches_them(fake_judge):
    fake_judge.answer = ClaimsJudge.answer
    lines = []
    for i, said in enumerate(["The order cost 30 dollars. It is refunded", "It cost 99 dollars"]):
        t = trajectory(i, "v1", ok=True)
        t["calls"][0]["result"] = {"status": "delivered", "price": 30}
        t["output"] = said
        lines.append(json.dumps(t))
    transcripts_import(lines=lines, source="test")
    args = ("--agent", "shop", "--agent-version", "v1", "--format", "json", "--faithfulness")
    code, out = axes_cmd(*args, "--rows")
    report = json.loads(out)
    f = report["overall"]["faithfulness"]
    assert code == 0 and (f["supported"], f["total"], f["n"], f["passed"]) == (2, 3, 2, 1)
    rows = {r["id"]: r["faithfulness"] for r in report["rows"]}
    assert rows["v1-refund-0"]["score"] == 1.0 and rows["v1-refund-1"]["score"] == 0.0
    assert rows["v1-refund-1"]["claims"][0]["claim"] == "It cost 99 dollars"
    assert report["overall"]["task_success"]["n"] == 2  # the other axes are unchanged by it
    sent = fake_judge.requests[0]["body"]
    assert sent["response_format"]["json_schema"]["name"] == "claims"
    prompt = sent["messages"][-1]["content"]
    assert "EVIDENCE:\n[U0] Refund order A0." in prompt and '"price":30' in prompt
    calls = len(fake_judge.requests)
    assert calls == 2
    code, _ = axes_cmd(*args)
    assert code == 0 and len(fake_judge.requests) == calls  # cached like the judge


def test_a_failing_judge_leaves_faithfulness_unscored_never_zero(fake_judge):
    fake_judge.mode = "error500"
    transcripts_import(lines=[json.dumps(trajectory(0, "v1", ok=True))], source="test")
    code, out = axes_cmd(
        "--agent", "shop", "--agent-version", "v1", "--format", "json", "--faithfulness", "--rows"
    )
    report = json.loads(out)
    assert code == 0 and report["overall"]["faithfulness"]["n"] == 0
    assert report["rows"][0]["faithfulness"] is None
    assert report["rows"][0]["faithfulness_error"].startswith("judge call failed")
    assert report["overall"]["tool_correctness"]["n"] == 1


def test_api_makes_and_reads_reports_and_the_pages_show_them(client, engineer, reviewer):
    from tests.factories import token_client

    import_version("v1", good=9)
    api = token_client(engineer)
    r = api.post("/api/v1/axes-reports/", {"agent": "shop", "agent_version": "v1"}, format="json")
    assert r.status_code == 201, r.content
    first = r.json()
    assert first["passed"] and first["overall"]["task_success"]["pass_rate"] == 0.9
    import_version("v2", good=7)
    r = api.post(
        "/api/v1/axes-reports/",
        {"agent": "shop", "agent_version": "v2", "max_drop": 0.1},
        format="json",
    )
    second = r.json()
    assert r.status_code == 201 and second["passed"] is False
    assert second["baseline"] == {"id": first["id"], "agent_version": "v1"}
    flagged = [c["axis"] for c in second["comparison"] if c["flagged"]]
    assert flagged == ["task_success", "tool_correctness"]
    listed = api.get("/api/v1/axes-reports/?agent_version=v2").json()
    assert [x["id"] for x in listed["results"]] == [second["id"]] and "rows" not in listed[
        "results"
    ][0]
    detail = api.get(f"/api/v1/axes-reports/{second['id']}/?rows=1").json()
    assert len(detail["rows"]) == 10
    bad = api.post("/api/v1/axes-reports/", {"agent": "shop", "agent_version": "nope"}, "json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "agent_version"
    assert api.get("/api/v1/axes-reports/999999/").status_code == 404

    client.force_login(engineer)
    page = client.get(f"/axes/{second['id']}/").content.decode()
    assert "flagged" in page and "was 90.0% in the baseline" in page
    assert "refund-0" in page and "v2-refund-9" in page and "refund: order_id" in page
    listing = client.get("/axes/").content.decode()
    assert f"/axes/{first['id']}/" in listing and "green" in listing
    client.force_login(reviewer)
    assert client.get("/axes/").status_code == 403
