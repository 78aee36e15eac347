"""A world for the rule workbench's tests: `boundaries.no-hints` version 1 misread the way the
demo's judge misreads it (a rephrased question taken for a hint, a subtle hint missed),
reviewers' marks that say so, and a fake judge (tests/evals/judge_server.py) that answers the
current text with the same misreadings and a clarified draft correctly, except on one call.
"""

import json
from dataclasses import dataclass, field

from evals.judging.models import Judge, Verdict
from evals.rules.models import RuleVersion
from labeling.models import Assignment, DailySample, Mark, SampleItem
from tests.evals.judge_helpers import make_rule
from tests.factories import TranscriptFactory, TurnFactory, UserFactory

BASE_JUDGE = "gpt-4o-mini/conduct-v3"
V1_TEXT = "Never hint at what a good answer would contain."
DRAFT_TEXT = (
    "Never hint at what a good answer would contain. Repeating or rephrasing a question is not "
    "a hint; naming the pattern or tool the candidate is looking for is."
)
# What happens at the agent's second turn (turn 2) of each kind of call.
KIND_TEXT = {
    "clean": "Tell me about a project you led.",
    "hint": "Tell me about a project, for example the caching layer you built.",
    "subtle": "Tell me about a project. Think about the pattern that avoids repeated reads.",
    "rephrase": "Let me put it another way: which project are you proudest of?",
}
# Version 1's verdict (flagged?) and the truth (broken?) by kind: the judge's misreadings.
V1_SAYS = {"clean": False, "hint": True, "subtle": False, "rephrase": True}
BROKEN = {"clean": False, "hint": True, "subtle": True, "rephrase": False}
SURPRISE = "The surprise call the draft gets wrong."


@dataclass
class World:
    v1: RuleVersion
    sibling: RuleVersion
    judge: Judge
    calls: dict = field(default_factory=dict)  # external id -> kind
    verdicts: dict = field(default_factory=dict)  # external id -> Verdict of v1


def build_world(*, counts=None, weight_every: int = 0, surprise: bool = True) -> World:
    """Make the rules, calls, v1 verdicts and marks. counts: calls per kind. Every
    `weight_every`-th call is marked through a daily sample item of probability 0.5."""
    counts = counts or {"clean": 6, "hint": 3, "subtle": 2, "rephrase": 3}
    v1 = make_rule("boundaries.no-hints", "boundaries", V1_TEXT, severity="major")
    sibling = make_rule("boundaries.no-rubric-leak", "boundaries", "Never reveal the rubric.")
    judge = Judge.objects.get_or_create(
        name=BASE_JUDGE,
        defaults={"kind": "llm", "model": "gpt-4o-mini", "prompt_version": "conduct-v3"},
    )[0]
    reviewer = UserFactory(username="wb-reviewer", roles=["reviewer"])
    world = World(v1, sibling, judge)
    sample = None
    n = 0
    for kind, count in counts.items():
        for _ in range(count):
            n += 1
            external_id = f"wb-{n:04d}"
            t = TranscriptFactory(external_id=external_id)
            turns = [
                ("agent", "Hi Dana, thanks for joining."),
                ("user", "Hi."),
                ("agent", KIND_TEXT[kind] + (" " + SURPRISE if surprise and n == 1 else "")),
                ("user", "Sure."),
                ("agent", "Thanks, that is all."),
            ]
            for i, (speaker, text) in enumerate(turns):
                TurnFactory(transcript=t, index=i, speaker=speaker, text=text)
            flagged = V1_SAYS[kind]
            v = Verdict.objects.create(
                transcript=t,
                rule_version=v1,
                judge=judge,
                flagged=flagged,
                turn=2 if flagged else None,
                turns=[2] if flagged else [],
                rationale=f"v1 on a {kind} call.",
            )
            assignment = None
            if weight_every and n % weight_every == 0:
                sample = sample or DailySample.objects.create(day="2026-11-20", size=10)
                item = SampleItem.objects.create(
                    sample=sample, transcript=t, reason="judge_check", inclusion_probability=0.5
                )
                assignment = Assignment.objects.create(
                    item=item,
                    reviewer=reviewer,
                    claimed_at="2026-11-20T09:00Z",
                    lease_expires_at="2026-11-20T10:00Z",
                )
            Mark.objects.create(
                verdict=v,
                reviewer=reviewer,
                correct=flagged == BROKEN[kind],
                assignment=assignment,
            )
            world.calls[external_id] = kind
            world.verdicts[external_id] = v
    return world


def responder(world: World, *, draft_text: str = DRAFT_TEXT):
    """A fake-judge answer function: version 1's misreadings for the current text, the truth for
    the draft's (except on the surprise call, which it flags although it is clean)."""

    def answer(body):
        prompt = "\n".join(m["content"] for m in body["messages"])
        schema = body["response_format"]["json_schema"]["schema"]
        if "score" in schema["properties"]:
            return None
        drafted = draft_text in prompt
        out = {}
        for rid, prop in schema["properties"].items():
            flagged = False
            if rid == "boundaries.no-hints":
                kind = next(k for k, text in KIND_TEXT.items() if text in prompt)
                flagged = BROKEN[kind] if drafted else V1_SAYS[kind]
                if drafted and SURPRISE in prompt:
                    flagged = True
            allowed = prop["properties"]["turns"]["items"]["enum"]
            out[rid] = {
                "reason": f"{'Draft' if drafted else 'Current'} text on {rid}.",
                "flagged": flagged,
                "turns": [2] if flagged and 2 in allowed else [],
                "severity": "major",
                "confidence": 80,
            }
        return json.dumps(out)

    return answer
