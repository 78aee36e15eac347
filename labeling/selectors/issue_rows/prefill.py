"""What the three ways out of a row start from: a new rule's fields, a signal's, the rule to fix."""

import re
from collections import Counter, defaultdict

from django.utils.text import slugify

from evals.judging.models import Verdict
from evals.rules.models import Rule, RuleVersion
from labeling.models import IssueRow

Status = IssueRow.Status
Outcome = IssueRow.Outcome

STANDARD_GROUPS = [
    "opening",
    "asking",
    "acknowledging",
    "language",
    "requests",
    "boundaries",
    "closing",
]


def _known_groups() -> list[str]:
    existing = list(Rule.objects.order_by().values_list("group", flat=True).distinct())
    return sorted(set(existing) | set(STANDARD_GROUPS))


_WORD = re.compile(r"[a-z]{4,}")


def _stems(text: str) -> set[str]:
    """Crude stems (the first five letters of words of four or more): reveal ~ revealed."""
    return {w[:5] for w in _WORD.findall(text.lower())}


def _group_by_rule_words(what: str) -> str | None:
    """Return the group whose rules' texts share the most words with `what`, or None.

    A word counts 1/k when the texts of k groups hold it, so words every rule uses (candidate,
    agent) weigh little. The vocabulary is the team's own rules, never a list kept in code.
    """
    stems = _stems(what)
    if not stems:
        return None
    by_group: dict[str, set[str]] = defaultdict(set)
    for group, text in RuleVersion.objects.values_list("rule__group", "text").order_by():
        by_group[group] |= _stems(f"{group} {text}")
    holders = Counter(stem for words in by_group.values() for stem in words & stems)
    scores = {
        group: sum(1 / holders[stem] for stem in words & stems) for group, words in by_group.items()
    }
    best = max(scores.items(), key=lambda kv: (kv[1], kv[0]), default=(None, 0))
    return best[0] if best[1] > 0 else None


def issue_row_group_guess(row: IssueRow) -> str:
    """Return a likely rule group: the turn's phase, else the group whose rules share the most
    words with what was written, else the judged rules at that turn, else asking."""
    turn = (
        row.transcript.turns.filter(index=row.turn).values("phase").first()
        if row.turn is not None
        else None
    )
    if turn and turn["phase"]:
        return turn["phase"]
    by_words = _group_by_rule_words(row.what)
    if by_words:
        return by_words
    if row.turn is not None:
        groups = Counter(
            Verdict.objects.filter(transcript_id=row.transcript_id, turn=row.turn).values_list(
                "rule_version__rule__group", flat=True
            )
        )
        if groups:
            return groups.most_common(1)[0][0]
    return "asking"


def _unique_rule_id(base: str) -> str:
    taken = set(Rule.objects.filter(rule_id__startswith=base).values_list("rule_id", flat=True))
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def issue_row_rule_prefill(row: IssueRow) -> dict:
    """Return the new-rule form's initial values drawn from the row."""
    group = issue_row_group_guess(row)
    words = re.sub(r"\b(at )?\d{1,2}:\d{2}\b", " ", row.what.lower()).split()
    slug = slugify(" ".join(words[:6]))[:60].strip("-") or f"row-{row.number}"
    text = re.sub(r"\s+", " ", row.what).strip()
    return {
        "rule_id": _unique_rule_id(f"{slugify(group) or 'rules'}.{slug}"),
        "group": group,
        "text": text,
        "severity": row.severity,
        "groups": _known_groups(),
    }


def issue_row_signal_prefill(row: IssueRow) -> dict:
    """Return the signal form's initial values: detector rules to link, and a new rule id."""
    return {
        "rule_id": _unique_rule_id(f"signals.row-{row.number}"),
        "group": "signals",
        "severity": row.severity,
        "detector_rules": list(Rule.objects.filter(detector__isnull=False).order_by("rule_id")),
    }


def issue_row_fix_choices(row: IssueRow) -> dict:
    """Return the rules an engineer is likely fixing: those
    judged on this call, flagged at the turn first."""
    judged = (
        Verdict.objects.filter(transcript_id=row.transcript_id)
        .select_related("rule_version__rule")
        .order_by("rule_version__rule__rule_id", "-rule_version__number")
    )
    likely, seen = [], set()
    for v in judged:
        rule = v.rule_version.rule
        if rule.pk in seen:
            continue
        seen.add(rule.pk)
        at_turn = (
            v.flagged
            and row.turn is not None
            and (v.turn == row.turn or row.turn in (v.turns or []))
        )
        likely.append((0 if at_turn else 1 if v.flagged else 2, rule.rule_id, rule))
    likely.sort(key=lambda t: (t[0], t[1]))
    others = Rule.objects.exclude(pk__in=seen).order_by("rule_id").only("rule_id")
    return {"likely": [r for _, _, r in likely], "others": list(others)}
