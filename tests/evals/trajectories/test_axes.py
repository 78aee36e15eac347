"""The three trajectory axes, pure: points, checklists, claims, figures and the regression flag."""

from hypothesis import given
from hypothesis import strategies as st

from evals.trajectories.axes import (
    Call,
    Expectation,
    Trajectory,
    axes_compare,
    axes_summarize,
    condition_holds,
    faithfulness,
    task_success,
    tool_correctness,
)

BOOK = Call("book", {"user": "mia", "flight": "HAT136", "amount": 250})


def test_each_expected_call_earns_a_point_for_the_tool_and_one_per_matching_argument():
    calls = [Call("lookup", {"user": "mia"}), Call("book", {"user": "mia", "flight": "HAT039"})]
    r = tool_correctness(calls, Expectation(calls=(BOOK,)))
    # book: tool 1 + user 1 (flight and amount wrong) = 2 of 4; count 1/1; nothing prohibited 1/1
    assert (r["points"], r["max"]) == (4, 6) and r["score"] == round(4 / 6, 4)
    assert r["calls"][0]["wrong_args"] == ["flight", "amount"] and not r["passed"]
    assert r["count"] == {"expected": 1, "actual": 1, "ok": True}


def test_full_marks_pass_and_numbers_compare_as_json_numbers():
    calls = [Call("book", {"amount": 250.0, "flight": "HAT136", "user": "mia"})]
    r = tool_correctness(calls, Expectation(calls=(BOOK,)))
    assert (r["points"], r["max"], r["score"], r["passed"]) == (6, 6, 1.0, True)


def test_a_missing_call_a_wrong_count_and_a_prohibited_call_each_cost_their_point():
    exp = Expectation(calls=(BOOK, Call("pay", {})), prohibited=("cancel",))
    calls = [Call("book", dict(BOOK.args)), Call("book", dict(BOOK.args)), Call("cancel", {})]
    r = tool_correctness(calls, exp)
    # book 4/4, pay 0/1, count: 2 book + 0 pay = 2 == 2 expected -> ok, prohibited cancel -> 0
    assert (r["points"], r["max"]) == (4 + 0 + 1 + 0, 4 + 1 + 2)
    assert r["prohibited"] == ["cancel"] and r["calls"][1]["found"] is False
    r = tool_correctness(calls[:2], Expectation(calls=(BOOK,)))
    assert r["count"] == {"expected": 1, "actual": 2, "ok": False} and r["points"] == 4 + 0 + 1


def test_count_tools_counts_only_those_tools_and_an_empty_expectation_is_scored():
    exp = Expectation(calls=(), prohibited=("book",), count_tools=("book",))
    assert tool_correctness([Call("lookup", {})], exp)["points"] == 2  # reads are free
    r = tool_correctness([Call("book", {})], exp)
    assert (r["points"], r["max"]) == (0, 2)
    assert tool_correctness([Call("book", {})], Expectation()) is None


def test_best_matching_call_is_used_once():
    exp = Expectation(calls=(Call("get", {"id": 1}), Call("get", {"id": 2})))
    r = tool_correctness([Call("get", {"id": 2}), Call("get", {"id": 1})], exp)
    assert r["points"] == r["max"] == 6


def test_reward_decides_task_success_when_there_is_one():
    t = Trajectory(id="a", task="1")
    assert task_success(t, Expectation(reward=1.0))["passed"] is True
    assert task_success(t, Expectation(reward=0.0))["passed"] is False
    assert task_success(t, Expectation()) is None


def test_checklist_pre_post_side_effects_and_latency():
    checklist = {
        "pre": [{"path": "orders.A1.status", "equals": "delivered"}],
        "post": [
            {"path": "orders.A1.status", "equals": "refunded"},
            {"path": "orders.A1.refund.amount", "equals": 30},
            {"path": "orders.A2", "exists": False},
        ],
        "no_extra_side_effects": True,
        "max_latency_ms": 60000,
    }
    exp = Expectation(calls=(Call("refund", {"order": "A1"}),), checklist=checklist)
    good = Trajectory(
        id="a",
        task="refund",
        calls=(Call("get_order", {}), Call("refund", {"order": "A1"})),
        initial_state={"orders": {"A1": {"status": "delivered"}}},
        final_state={"orders": {"A1": {"status": "refunded", "refund": {"amount": 30.0}}}},
        latency_ms=42000,
    )
    r = task_success(good, exp)
    assert r["passed"] and [c["kind"] for c in r["checks"]] == [
        "pre",
        "post",
        "post",
        "post",
        "side_effects",
        "latency",
    ]
    twice = Trajectory(**{**good.__dict__, "calls": good.calls + (Call("refund", {}),)})
    r = task_success(twice, exp)
    assert not r["passed"] and "extra: refund" in r["checks"][4]["what"]
    slow = Trajectory(**{**good.__dict__, "latency_ms": 61000})
    assert not task_success(slow, exp)["passed"]
    no_state = Trajectory(**{**good.__dict__, "final_state": None})
    assert [c["ok"] for c in task_success(no_state, exp)["checks"]][1:4] == [False] * 3


def test_conditions():
    state = {"a": [{"b": "x"}], "n": 3}
    assert condition_holds(state, {"path": "a.0.b", "equals": "x"})
    assert condition_holds(state, {"path": "n", "in": [1, 3]})
    assert condition_holds(state, {"path": "a.5", "exists": False})
    assert not condition_holds(state, {"path": "a.0.c"})
    assert not condition_holds(None, {"path": "n", "exists": False})


def test_faithfulness_counts_supported_claims():
    claims = [{"claim": "x", "supported": True}, {"claim": "y", "supported": False}]
    r = faithfulness(claims)
    assert (r["supported"], r["total"], r["score"], r["passed"]) == (1, 2, 0.5, False)
    assert faithfulness([])["passed"] is True and faithfulness([])["score"] is None
    assert faithfulness(None) is None


def _row(task, ok, pts=(1, 1)):
    tc = {"points": pts[0], "max": pts[1], "score": pts[0] / pts[1], "passed": pts[0] == pts[1]}
    return {
        "id": f"{task}-{ok}-{pts}",
        "task": task,
        "task_success": {"passed": ok, "reward": float(ok)},
        "tool_correctness": tc,
        "faithfulness": None,
    }


def test_summary_is_per_axis_per_task_and_overall_and_never_mixes():
    rows = [_row("2", True), _row("2", False, (1, 4)), _row("10", False, (0, 2))]
    s = axes_summarize(rows)
    ts, tc = s["overall"]["task_success"], s["overall"]["tool_correctness"]
    assert (ts["passed"], ts["n"], ts["mean_reward"]) == (1, 3, round(1 / 3, 4))
    assert (tc["points"], tc["max"], tc["passed"]) == (2, 7, 1)
    assert s["overall"]["faithfulness"] == {
        "n": 0,
        "passed": 0,
        "pass_rate": None,
        "supported": 0,
        "total": 0,
        "mean_score": None,
    }
    assert [t["task"] for t in s["tasks"]] == ["2", "10"]  # numeric tasks in numeric order
    assert s["tasks"][0]["task_success"]["pass_rate"] == 0.5


@given(st.lists(st.booleans(), min_size=1, max_size=60))
def test_overall_task_success_is_the_mean_reward_for_binary_rewards(outcomes):
    s = axes_summarize([_row(str(i % 7), ok) for i, ok in enumerate(outcomes)])
    assert s["overall"]["task_success"]["pass_rate"] == round(sum(outcomes) / len(outcomes), 4)
    assert s["overall"]["task_success"]["mean_reward"] == s["overall"]["task_success"]["pass_rate"]


def test_a_drop_beyond_the_allowed_points_is_flagged_and_unscored_axes_are_skipped():
    before = {"task_success": {"pass_rate": 0.60}, "tool_correctness": {"pass_rate": 0.5}}
    now = {"task_success": {"pass_rate": 0.54}, "tool_correctness": {"pass_rate": 0.46}}
    c = {x["axis"]: x for x in axes_compare(now, before, max_drop=0.05)}
    assert c["task_success"]["flagged"] and c["task_success"]["drop"] == 0.06
    assert not c["tool_correctness"]["flagged"]  # 4 points
    assert "faithfulness" not in c
    assert not axes_compare(now, before, max_drop=0.1)[0]["flagged"]
    assert axes_compare(now, None) == []
