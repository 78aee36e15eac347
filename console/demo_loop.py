"""Demo steps that let the whole loop be walked without a model (load_demo steps).

- judge cache: the demo judge's answers (its verdicts in demo/verdicts.jsonl) recorded in the
  judge's cache under the keys the judge runner asks for (the transcript's checksum, the group's
  rule versions, the model and the prompt version), so a judge run over the demo calls finishes
  from the cache at no cost. A group whose rule versions were never answered (a rule fixed into a
  new version, a new rule) has no entry: a run says it needs a model.
- labelling push: the archive (an earlier version's calls, demo/truth.json's `archive`) marked by
  the reviewers on the groups the push covered, each mark the truth of its verdict. With those
  marks some rule versions have enough to be eligible for the gate and some do not.
"""

import logging
from collections import defaultdict
from datetime import datetime, time, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.utils import timezone

from console.demo_data import DEMO_AGENT, demo_truth
from evals.judging.models import Judge, JudgeCacheEntry, Verdict
from evals.judging.services.runs import item_cache_key
from evals.rules.models import RuleVersion
from labeling.models import Mark
from labeling.services.marks import NOTE_MAX

logger = logging.getLogger(__name__)

PUSH_REVIEWERS = ("priya", "sam", "noor")
BATCH = 2000


def demo_judge_cache_load(demo_dir: Path) -> str:
    """Record the demo judge's answer of every (call, rule group) it judged whole in the cache."""
    truth = demo_truth(demo_dir)
    judge = Judge.objects.filter(name=truth["judge"], kind=Judge.Kind.LLM).first()
    if judge is None or not judge.model or not judge.prompt_version:
        return f"no LLM judge {truth['judge']} with a model and a prompt version: nothing cached"
    versions = {
        rv.pk: rv
        for rv in RuleVersion.objects.select_related("rule").filter(
            verdicts__judge=judge, verdicts__transcript__agent_version__agent__name=DEMO_AGENT
        )
    }
    groups: dict[tuple, dict] = defaultdict(dict)
    checksums = {}
    rows = Verdict.objects.filter(
        judge=judge, transcript__agent_version__agent__name=DEMO_AGENT, error=""
    ).values_list(
        "transcript_id",
        "transcript__checksum",
        "rule_version_id",
        "flagged",
        "turn",
        "turns",
        "severity",
        "rationale",
        "confidence",
    )
    for tid, checksum, rv_pk, flagged, turn, turns, severity, rationale, confidence in rows:
        rv = versions[rv_pk]
        checksums[tid] = checksum
        cited = list(turns or ([] if turn is None else [turn])) if flagged else []
        groups[(tid, rv.rule.group, rv.rule.phase)][rv_pk] = {
            "flagged": flagged,
            "turns": cited,
            "severity": severity if flagged else "",
            "rationale": rationale,
            "confidence": confidence,
        }
    entries = {}
    for (tid, _group, phase), answers in groups.items():
        rvs = [versions[pk] for pk in answers]
        key = item_cache_key(
            checksum=checksums[tid],
            rule_versions=rvs,
            phase=phase,
            model=judge.model,
            prompt_version=judge.prompt_version,
        )
        entries[key] = JudgeCacheEntry(
            key=key,
            model=judge.model,
            prompt_version=judge.prompt_version,
            answer={versions[pk].rule.rule_id: a for pk, a in answers.items()},
        )
    have = set()
    keys = list(entries)
    for start in range(0, len(keys), BATCH):
        have |= set(
            JudgeCacheEntry.objects.filter(key__in=keys[start : start + BATCH]).values_list(
                "key", flat=True
            )
        )
    new = [e for k, e in entries.items() if k not in have]
    JudgeCacheEntry.objects.bulk_create(new, batch_size=BATCH)
    return (
        f"{len(entries)} answers of {judge.name} recorded in the judge cache ({len(new)} new), "
        f"one per call and rule group"
    )


def _on(day, hour: int, minute: int) -> datetime:
    return timezone.make_aware(datetime.combine(day, time(hour, minute)))


def demo_labelling_push_load(demo_dir: Path) -> str:
    """Mark every verdict of the push's rule groups on the archive calls, once, as its truth."""
    truth = demo_truth(demo_dir)
    archive = truth.get("archive") or {}
    groups = archive.get("labelled_groups") or []
    verdicts = (
        Verdict.objects.filter(
            transcript__external_id__in=archive.get("calls") or [],
            transcript__agent_version__agent__name=DEMO_AGENT,
            rule_version__rule__group__in=groups,
            error="",
        )
        .select_related("transcript", "rule_version__rule")
        .order_by("transcript__started_at", "transcript_id", "rule_version__rule__rule_id")
    )
    done = Mark.objects.filter(verdict__in=verdicts)
    if done.exists():
        return f"labelling push already there ({done.count()} marks)"
    users = {u.username: u for u in get_user_model().objects.filter(username__in=PUSH_REVIEWERS)}
    if len(users) < len(PUSH_REVIEWERS):
        return "labelling push skipped: the demo reviewers are missing"
    calls = sorted({v.transcript_id for v in verdicts})
    who = {tid: users[PUSH_REVIEWERS[n % len(PUSH_REVIEWERS)]] for n, tid in enumerate(calls)}
    marks, when = [], []
    for v in verdicts:
        key = f"{v.transcript.external_id}|{v.rule_version.rule.rule_id}|{v.rule_version.number}"
        # Detector verdicts find exactly the signals planted in the calls (tests check it).
        right = truth["verdicts"].get(key, True)
        marks.append(
            Mark(
                verdict=v,
                reviewer=who[v.transcript_id],
                correct=right,
                note="" if right else truth["errors"].get(key, "")[:NOTE_MAX],
            )
        )
        # Marked the working day after the call, as a spreadsheet the team imported later.
        day = timezone.localtime(v.transcript.started_at).date() + timedelta(days=1)
        when.append(_on(day, 15, 0))
    made = Mark.objects.bulk_create(marks, batch_size=BATCH)
    by_time: dict[datetime, list[int]] = defaultdict(list)
    for m, at in zip(made, when):
        by_time[at].append(m.pk)
    for at, pks in by_time.items():
        Mark.objects.filter(pk__in=pks).update(created_at=at, updated_at=at)
    wrong = sum(1 for m in marks if not m.correct)
    return (
        f"labelling push on {len(calls)} archive calls of {archive.get('version')} "
        f"({', '.join(groups)}): {len(marks)} marks, {wrong} of them wrong verdicts"
    )
