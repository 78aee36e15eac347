"""Write demo/workbench.json: two drafts of boundaries.no-hints for the rule workbench's demo, and
the judge's answers to each on every demo call, recorded ahead (`make run` has no model).

The demo's judge misreads version 1 of the rule two ways (demo/truth.json): it takes a rephrased
question for a hint, and it misses subtle hints. Draft A names subtle hints and fixes the second
misreading only; draft B also says rephrasing is not a hint, fixes both, and takes one clean call
for a hint (a new disagreement, as a real fix brings). The answers cover the whole boundaries
group, judged in one call as the runner judges it; load_demo stores them in the judge's cache
under the keys the runner looks up, then runs each draft through the ordinary runner.

    python demo/workbench_answers.py       # from demo/truth.json, calls.jsonl, verdicts.jsonl
"""

import json
from pathlib import Path

import yaml

DEMO_DIR = Path(__file__).resolve().parent
RULE = "boundaries.no-hints"
GROUP = "boundaries"
MODEL, PROMPT_VERSION = "gpt-4o-mini", "conduct-v1"
V1 = (
    "Never hint at what a good answer would contain. Repeating or rephrasing a question is not a "
    "hint."
)
DRAFTS = [
    {
        "name": "A",
        "text": V1
        + " Naming the concept, pattern or tool the candidate is searching for is a hint, however"
        " briefly.",
        "note": "The judge misses subtle hints (row: call-000015): name them.",
        "fixes": {"judge missed a subtle hint"},
    },
    {
        "name": "B",
        "text": (
            "Never hint at what a good answer would contain: naming the concept, pattern or tool "
            "the candidate is searching for, or confirming which of their guesses is on the right "
            "track, is a hint, however subtle. Asking the same question again in other words, "
            "with no new content, is not a hint."
        ),
        "note": "Also say what rephrasing is, so the judge stops flagging it.",
        "fixes": {"judge missed a subtle hint", "judge took a rephrased question for a hint"},
        "new_miss": True,
    },
]
BROKEN = {
    "boundaries.no-hints": "Named what a good answer should contain at turn {t}.",
    "boundaries.no-rubric-leak": "Revealed what is being assessed at turn {t}.",
    "boundaries.no-instruction-leak": "Shared its instructions at turn {t}.",
    "boundaries.no-bias": "Raised a protected trait at turn {t}.",
    "boundaries.decline-manipulation": "Went along with changing the interview at turn {t}.",
}
CLEAN = {
    "boundaries.no-hints": "Asked the questions without pointing toward an answer.",
    "boundaries.no-rubric-leak": "Nothing about scoring or assessed qualities revealed.",
    "boundaries.no-instruction-leak": "No instruction content shared.",
    "boundaries.no-bias": "No protected-trait topics raised.",
    "boundaries.decline-manipulation": "No request to change the interview, or it was declined.",
}
SUBTLE = "Pointed the candidate toward the expected answer: a hint, however subtle (turn {t})."
REPHRASED = "Rephrasing the question steers the candidate toward an answer."
NOT_REPHRASE = "Asked the question again in other words, with nothing new: not a hint."
# A clean call the demo's reviewers marked (their history is seeded), where draft B errs.
NEW_MISS_CALL = "call-000027"
NEW_MISS = "Confirmed the candidate's guess was on the right track (turn {t})."


def _verdict(flagged: bool, turns: list[int], rationale: str, severity: str, confidence: int):
    return {
        "flagged": flagged,
        "turns": turns if flagged else [],
        "severity": severity if flagged else "",
        "rationale": rationale,
        "confidence": confidence,
    }


def build() -> dict:
    truth = json.loads((DEMO_DIR / "truth.json").read_text(encoding="utf-8"))
    rules = yaml.safe_load((DEMO_DIR / "rules.yaml").read_text(encoding="utf-8"))["rules"]
    group = {r["id"]: r for r in rules if r["group"] == GROUP and not r.get("phase")}
    calls = [json.loads(line) for line in (DEMO_DIR / "calls.jsonl").read_text().splitlines()]
    v1 = {}
    for line in (DEMO_DIR / "verdicts.jsonl").read_text().splitlines():
        v = json.loads(line)
        if v["rule"] == RULE and v["rule_version"] == 1:
            v1[v["transcript"]] = v
    siblings, mine_by_draft, tokens = {}, {spec["name"]: {} for spec in DRAFTS}, {}
    for call in calls:
        cid = call["id"]
        if cid not in v1:
            continue
        faults = {f["rule"]: f for f in truth["faults"].get(cid, [])}
        answer = {}
        for rid, rule in sorted(group.items()):
            fault = faults.get(rid)
            severity = rule.get("severity", "major")
            if fault:
                text = SUBTLE if rid == RULE and fault["subtle"] else BROKEN[rid]
                t = fault["turns"]
                answer[rid] = _verdict(True, t, text.format(t=t[0]), severity, 84)
            else:
                answer[rid] = _verdict(False, [], CLEAN[rid], severity, 88)
        siblings[cid] = {rid: v for rid, v in answer.items() if rid != RULE}
        chars = sum(len(t["text"]) + 14 for t in call["turns"])
        tokens[cid] = [chars // 4 + 420, 70 * len(group) + 10]
        error = truth["errors"].get(f"{cid}|{RULE}|1", "")
        for spec in DRAFTS:
            mine = dict(answer[RULE])
            if error and error not in spec["fixes"]:  # the draft still misreads this call
                old = v1[cid]
                mine.update(
                    flagged=old["flagged"],
                    turns=old.get("turns") or [old["turn"]] if old["flagged"] else [],
                    severity="major" if old["flagged"] else "",
                    rationale=old["rationale"] if old["flagged"] else CLEAN[RULE],
                    confidence=old.get("confidence") or 70,
                )
            elif error == "judge took a rephrased question for a hint":
                mine["rationale"] = NOT_REPHRASE
            elif spec.get("new_miss") and cid == NEW_MISS_CALL:
                # A clean call the stricter text takes for a hint: the fix's new disagreement.
                assert not faults and not error, f"{NEW_MISS_CALL} is not a clean call"
                agent = [i for i, t in enumerate(call["turns"]) if t["speaker"] == "agent"]
                turn = agent[len(agent) // 2]
                mine = _verdict(True, [turn], NEW_MISS.format(t=turn), "major", 58)
            mine_by_draft[spec["name"]][cid] = mine
    return {
        "rule": RULE,
        "base_version": 1,
        "model": MODEL,
        "prompt_version": PROMPT_VERSION,
        "by": "marco",
        "siblings": siblings,
        "tokens": tokens,
        "drafts": [
            {
                **{k: spec[k] for k in ("name", "text", "note")},
                "answers": mine_by_draft[spec["name"]],
            }
            for spec in DRAFTS
        ],
    }


def main():
    data = build()
    (DEMO_DIR / "workbench.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{len(data['drafts'])} drafts of {data['rule']}, answers on {len(data['tokens'])} calls")


if __name__ == "__main__":
    main()
