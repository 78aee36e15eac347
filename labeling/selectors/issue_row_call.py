"""What an issue row's page shows of its call: the turn it names, and the verdicts on it."""

from dataclasses import dataclass, field

from evals.catalog.models import Turn
from evals.judging.models import Verdict
from evals.rules.models import RuleVersion
from labeling.models import IssueRow


@dataclass
class IssueRowCall:
    turns: list[Turn] = field(default_factory=list)  # the named turn with one either side
    verdicts: list[Verdict] = field(default_factory=list)  # those citing the turn (or flagged)
    previous_version: RuleVersion | None = None  # what a rule fix changed, to show the diff


def issue_row_call(row: IssueRow) -> IssueRowCall:
    """Return the turn the row names with its neighbours and the verdicts citing it; for a row on
    the whole call, the call's flagged verdicts; and, for a rule fix, the version it replaced."""
    found = IssueRowCall()
    verdicts = Verdict.objects.filter(transcript_id=row.transcript_id).select_related(
        "rule_version__rule", "judge"
    )
    if row.turn is not None:
        found.turns = list(
            Turn.objects.filter(
                transcript_id=row.transcript_id, index__gte=row.turn - 1, index__lte=row.turn + 1
            ).order_by("index")
        )
        found.verdicts = [
            v for v in verdicts.order_by("-flagged", "pk") if row.turn in (v.turns or [v.turn])
        ]
    else:
        found.verdicts = list(verdicts.filter(flagged=True).order_by("pk"))
    if row.rule_version_id and row.rule_version.number > 1:
        found.previous_version = RuleVersion.objects.filter(
            rule_id=row.rule_version.rule_id, number=row.rule_version.number - 1
        ).first()
    return found
