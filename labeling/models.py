"""Where people meet verdicts: samples, claims, marks, issue rows, promotion decisions, decision
labels and outcome ratings."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from evals.catalog.models import Agent, Transcript
from evals.decisions.models import Decision
from evals.judging.models import Judge, Verdict
from evals.rules.models import Rule, RuleVersion, Severity


class DailySample(models.Model):
    """The calls drawn for review on one day. Drawn once per day, seeded by the date."""

    day = models.DateField(unique=True)
    size = models.PositiveIntegerField()
    params = models.JSONField(
        default=dict, blank=True, help_text="Seed, window and counts of the draw."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-day"]

    def __str__(self):
        return f"sample {self.day}"


class SampleItem(models.Model):
    """One call in a day's sample, with why it was drawn and its inclusion probability."""

    class Reason(models.TextChoices):
        UNIFORM = "uniform", "uniform draw"
        JUDGE_CHECK = "judge_check", "judge check"
        MANUAL = "manual", "queued by hand"

    sample = models.ForeignKey(DailySample, on_delete=models.CASCADE, related_name="items")
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="sample_items"
    )
    reason = models.CharField(max_length=12, choices=Reason.choices)
    inclusion_probability = models.FloatField()
    reviews_needed = models.PositiveSmallIntegerField(default=1)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["sample", "id"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "transcript"], name="sample_item_unique"),
            models.CheckConstraint(
                condition=Q(inclusion_probability__gt=0, inclusion_probability__lte=1),
                name="sample_item_probability_range",
            ),
            models.CheckConstraint(
                condition=Q(reviews_needed__gte=1), name="sample_item_reviews_needed_positive"
            ),
        ]

    def __str__(self):
        return f"{self.sample.day} {self.transcript_id}"


class SampleItemCount(models.Model):
    """How many calls a day's sample holds: the samples list's figure. The rows are deltas
    appended by database triggers on sample items (labeling.services.sample_counts); a sample's
    count is the sum of its rows, folded into one after the draw and a call queued by hand, and
    checked by `sample_item_counts_rebuild --check`. No foreign key: a deleted sample's rows sum
    to 0 and the next fold drops them, whichever of the sample and its items goes first."""

    sample_id = models.BigIntegerField()
    n = models.BigIntegerField(help_text="Items added to the sample (negative: removed).")

    class Meta:
        db_table = "labeling_sample_item_count"
        indexes = [models.Index(fields=["sample_id"], name="sample_item_count_sample")]

    def __str__(self):
        return f"sample {self.sample_id}: {self.n:+d}"


class Assignment(models.Model):
    """A reviewer's hold on a sample item: claimed under a lease, then finished or given back."""

    item = models.ForeignKey(SampleItem, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    claimed_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    released_at = models.DateTimeField(null=True, blank=True, help_text="Skipped or lease lapsed.")
    version = models.PositiveIntegerField(
        default=1,
        db_default=1,
        help_text="Moves on with every change to the reviewer's marks on the call and when it is "
        "finished or skipped; a page or client sends the version it saw, and a change made "
        "from a stale view is refused.",
    )

    class Meta:
        ordering = ["-claimed_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "reviewer"], name="assignment_once_per_reviewer"
            )
        ]

    def __str__(self):
        return f"{self.reviewer_id} holds {self.item_id}"


class Mark(models.Model):
    """A reviewer's judgement of one verdict: right or wrong. One per reviewer and verdict."""

    # Indexed by mark_once_per_reviewer (verdict, reviewer), which starts with it.
    verdict = models.ForeignKey(
        Verdict, on_delete=models.CASCADE, related_name="marks", db_index=False
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="marks"
    )
    correct = models.BooleanField()
    note = models.CharField(max_length=500, blank=True)
    assignment = models.ForeignKey(
        Assignment, on_delete=models.SET_NULL, null=True, blank=True, related_name="marks"
    )
    source = models.CharField(
        max_length=200,
        blank=True,
        db_default="",
        help_text="Where an imported mark came from (the import's file or `body`, and its "
        "format); blank for a mark made in Docket.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(fields=["verdict", "reviewer"], name="mark_once_per_reviewer")
        ]
        indexes = [
            # The issue trends' judge errors a day (issue_trends): the wrong marks of the window,
            # read from the index alone rather than every mark ever made.
            models.Index(fields=["created_at"], condition=Q(correct=False), name="mark_wrong_at"),
        ]

    def __str__(self):
        return f"{'right' if self.correct else 'wrong'} on {self.verdict_id}"


class Settlement(models.Model):
    """A lead's decision on a verdict whose reviewers are tied."""

    verdict = models.OneToOneField(Verdict, on_delete=models.CASCADE, related_name="settlement")
    correct = models.BooleanField()
    settled_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    reason = models.CharField(max_length=500, blank=True)
    settled_at = models.DateTimeField(auto_now_add=True)


def split_q(prefix: str = "") -> Q:
    """A verdict tally row (reached through `prefix`, e.g. "tally__") whose marks split: marked
    at least twice, some right and some wrong."""
    return Q(
        **{
            f"{prefix}n_marks__gte": 2,
            f"{prefix}n_right__gt": 0,
            f"{prefix}n_right__lt": F(f"{prefix}n_marks"),
        }
    )


class VerdictTally(models.Model):
    """How one marked verdict counts in calibration, kept
    by database triggers (labeling/services/tally.py).

    One row per verdict with at least one mark, recomputed from its marks, settlement, sample item
    and the verdict itself whenever one of those changes, in the same transaction. The calibration
    page sums these rows (one index-only scan) instead of grouping a million marks.
    """

    verdict = models.OneToOneField(
        Verdict, on_delete=models.CASCADE, primary_key=True, related_name="tally"
    )
    rule_version_id = models.BigIntegerField(
        help_text="Copied from the verdict, for index-only grouping."
    )
    judge_id = models.BigIntegerField(help_text="Copied from the verdict, for index-only grouping.")
    n_marks = models.IntegerField()
    n_right = models.IntegerField()
    truth = models.SmallIntegerField(
        null=True, help_text="1 right, 0 wrong (settlement, else majority); null: tied."
    )
    cell = models.SmallIntegerField(
        help_text="0 fn, 1 tn, 2 fp, 3 tp, 4 waiting (tied), 5 errored."
    )
    pair = models.SmallIntegerField(
        help_text="First and last mark: 0 none, 1 wrong-wrong, 2 wrong-right, "
        "3 right-wrong, 4 right-right."
    )
    outside = models.SmallIntegerField(help_text="1 when no mark came through a sample item.")
    weight = models.FloatField(
        help_text="1 / the largest inclusion probability of its marks' sample items."
    )

    class Meta:
        db_table = "labeling_verdict_tally"
        indexes = [
            models.Index(
                fields=["rule_version_id", "judge_id", "cell", "pair", "outside", "weight"],
                name="verdict_tally_group",
            ),
            # The disagreements page: the few verdicts whose marks split.
            models.Index(
                fields=["rule_version_id"], name="verdict_tally_split", condition=split_q()
            ),
        ]


class TallyCell(models.Model):
    """Calibration's counts per rule version, judge, cell, agreement pair and outside flag: how
    many verdict tally rows share them and the sums of their weights and squared weights. The
    rows are deltas appended by database triggers on the tally (labeling.services.tally_cells);
    a cell is the sum of its rows, folded into one by `tally_cells_compact` and checked with the
    tally by `verdict_tally_rebuild --check`. The calibration table sums these few rows instead
    of every marked verdict."""

    rule_version_id = models.BigIntegerField()
    judge_id = models.BigIntegerField()
    cell = models.SmallIntegerField(help_text="As VerdictTally.cell.")
    pair = models.SmallIntegerField(help_text="As VerdictTally.pair.")
    outside = models.SmallIntegerField(help_text="As VerdictTally.outside.")
    n = models.BigIntegerField(help_text="Tally rows added to the cell (negative: removed).")
    w = models.FloatField(help_text="The sum of their weights.")
    w2 = models.FloatField(help_text="The sum of their squared weights.")

    class Meta:
        db_table = "labeling_tally_cell"
        indexes = [models.Index(fields=["rule_version_id", "judge_id"], name="tally_cell_key")]


class IssueRow(models.Model):
    """Something bad a reviewer found in a call. `number` is stable and sequential."""

    class Status(models.TextChoices):
        NEW = "new", "new"
        TRIAGED = "triaged", "triaged"
        IN_PROGRESS = "in_progress", "in progress"
        RESOLVED = "resolved", "resolved"
        WONT_FIX = "wont_fix", "won't fix"

    class Outcome(models.TextChoices):
        NONE = "", "untriaged"
        NEW_RULE = "new_rule", "write a rule"
        NEW_SIGNAL = "new_signal", "add a signal"
        RULE_FIX = "rule_fix", "fix the rule"
        DUPLICATE = "duplicate", "duplicate"
        WONT_FIX = "wont_fix", "won't fix"

    number = models.PositiveIntegerField(unique=True)
    transcript = models.ForeignKey(Transcript, on_delete=models.PROTECT, related_name="issue_rows")
    turn = models.PositiveIntegerField(null=True, blank=True)
    what = models.TextField()
    severity = models.CharField(max_length=10, choices=Severity.choices)
    audio_only = models.BooleanField(default=False)
    start_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Where in the recording it starts (ms), if named."
    )
    end_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Where in the recording it ends (ms), if named."
    )
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reported_rows"
    )
    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.NEW, db_index=True
    )
    outcome = models.CharField(
        max_length=12, choices=Outcome.choices, blank=True, default="", db_index=True
    )
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_rows",
    )
    duplicate_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="duplicates"
    )
    rule = models.ForeignKey(
        Rule, on_delete=models.SET_NULL, null=True, blank=True, related_name="issue_rows"
    )
    rule_version = models.ForeignKey(
        RuleVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="issue_rows"
    )
    signal_request = models.TextField(
        blank=True, help_text="A detector asked for that does not exist yet."
    )
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-number"]
        # The sheet pages by keyset on (sort column, number);
        # these keep each sort and filter an index scan.
        indexes = [
            models.Index(fields=["status", "number"], name="issue_row_status_number"),
            models.Index(fields=["severity", "number"], name="issue_row_severity_number"),
            models.Index(fields=["outcome", "number"], name="issue_row_outcome_number"),
            models.Index(fields=["updated_at", "number"], name="issue_row_updated_number"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(start_ms__isnull=True, end_ms__isnull=True)
                | Q(start_ms__isnull=False, end_ms__isnull=False, end_ms__gt=F("start_ms")),
                name="issue_row_audio_range",
            )
        ]

    def __str__(self):
        return f"row {self.number}"


class IssueRowEvent(models.Model):
    """One change to an issue row (or a comment on it): who, when, what."""

    row = models.ForeignKey(IssueRow, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    kind = models.CharField(max_length=30)
    data = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]


class PromotionDecision(models.Model):
    """A lead's promotion or demotion of a rule version, with the figures at that moment."""

    class Action(models.TextChoices):
        PROMOTE = "promote", "promote"
        DEMOTE = "demote", "demote"

    rule_version = models.ForeignKey(
        RuleVersion, on_delete=models.PROTECT, related_name="decisions"
    )
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, null=True, blank=True)
    action = models.CharField(max_length=10, choices=Action.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    reason = models.TextField(blank=True)
    figures = models.JSONField(default=dict, blank=True)
    replaced = models.ForeignKey(
        RuleVersion,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="replaced_by_decisions",
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at"]


# Decision points: reviewers' labels, and the hard moments a lead queues for labeling.


class DecisionLabel(models.Model):
    """A reviewer's answer at one decision point: what the agent should have chosen."""

    # Indexed by decision_label_once_per_reviewer (decision, reviewer), which starts with it.
    decision = models.ForeignKey(
        Decision, on_delete=models.CASCADE, related_name="labels", db_index=False
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="decision_labels"
    )
    answer = models.CharField(max_length=100)
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["decision", "reviewer"], name="decision_label_once_per_reviewer"
            )
        ]

    def __str__(self):
        return f"{self.answer} at {self.decision_id}"


class HardMoment(models.Model):
    """A decision point a lead queued for labeling because it is hard: the agent was unsure, or
    the gap sat near the timing boundary where it decides."""

    decision = models.OneToOneField(Decision, on_delete=models.CASCADE, related_name="hard_moment")
    reason = models.CharField(max_length=200)
    queued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    queued_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-queued_at"]

    def __str__(self):
        return f"hard {self.decision_id}"


# Outcomes: was the call actually good? A question per agent, a 1-5 rating per reviewer and call.

RATING_MIN, RATING_MAX = 1, 5
# At or below this rating a reason is required, and the call counts as a bad outcome.
BAD_AT_MOST = 2
DEFAULT_QUESTION_KEY = "overall"
DEFAULT_QUESTION_TEXT = "Was this call good for the candidate and the company?"


class OutcomeQuestion(models.Model):
    """A question reviewers answer about a whole call of one agent, on a 1-5 scale."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="outcome_questions")
    key = models.SlugField(max_length=50, help_text="Stable id, e.g. overall.")
    text = models.CharField(max_length=300)
    position = models.PositiveSmallIntegerField(default=0, help_text="Order on the review page.")
    active = models.BooleanField(default=True, help_text="Inactive: kept for its ratings only.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent__name", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "key"], name="outcome_question_key_unique")
        ]

    def __str__(self):
        return f"{self.agent.name}: {self.key}"


class OutcomeRating(models.Model):
    """One reviewer's answer to one outcome question on one call. Rating again replaces it."""

    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="outcome_ratings"
    )
    question = models.ForeignKey(OutcomeQuestion, on_delete=models.PROTECT, related_name="ratings")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="outcome_ratings"
    )
    rating = models.PositiveSmallIntegerField()
    reason = models.TextField(
        blank=True, help_text=f"Required for a rating of {BAD_AT_MOST} or less."
    )
    key_factor = models.CharField(
        max_length=300, blank=True, help_text="The one thing that made the call good or bad."
    )
    assignment = models.ForeignKey(
        "labeling.Assignment",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="outcome_ratings",
        help_text="The claim it was given under; its sample item weighs it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "question", "reviewer"], name="outcome_rating_once"
            ),
            models.CheckConstraint(
                condition=Q(rating__gte=RATING_MIN, rating__lte=RATING_MAX),
                name="outcome_rating_range",
            ),
            models.CheckConstraint(
                condition=Q(rating__gt=BAD_AT_MOST) | ~Q(reason=""),
                name="outcome_rating_bad_has_reason",
            ),
        ]

    def __str__(self):
        return f"{self.rating} on {self.transcript_id}"


class OutcomeCheck(models.Model):
    """One rated call's outcome on one question beside one of its checks, kept by database
    triggers (labeling/services/outcome_sums.py) from the ratings, verdicts, conversation scores
    and sample items whenever one of those changes, in the same transaction.

    src is the check's source (a judge kind, "conversation", or "*": any non-errored verdict
    flagged on the call), chk its name, fired 1 or 0; x the call's mean rating, w its weight.
    The bad calls nothing flagged are the "*" rows with fired 0 and x at most BAD_AT_MOST.
    """

    question_id = models.BigIntegerField()
    transcript_id = models.BigIntegerField(
        help_text="No foreign key: a deleted call's rows go through its ratings' triggers."
    )
    src = models.CharField(max_length=40)
    chk = models.CharField(max_length=300)
    fired = models.SmallIntegerField()
    x = models.FloatField()
    w = models.FloatField()

    class Meta:
        db_table = "labeling_outcome_check"
        indexes = [
            models.Index(fields=["transcript_id"], name="outcome_check_call"),
            # Only the ANY rows: the bad calls something flagged (one row a call, not one a check).
            models.Index(
                fields=["question_id", "fired", "x"],
                condition=models.Q(src="*"),
                name="outcome_check_any",
            ),
        ]


class OutcomeCheckSums(models.Model):
    """Per question, check and side (fired or not): the count and weighted sums of the rated
    calls' outcomes (core.stats.WeightedSums) and how many were bad; the sums of OutcomeCheck,
    kept by the same triggers (added and subtracted as calls change). The outcomes report reads
    these rows instead of joining every rated call's verdicts."""

    question_id = models.BigIntegerField()
    src = models.CharField(max_length=40)
    chk = models.CharField(max_length=300)
    fired = models.SmallIntegerField()
    n = models.IntegerField()
    bad = models.IntegerField()
    w = models.FloatField()
    wx = models.FloatField()
    w2 = models.FloatField()
    w2x = models.FloatField()
    w2x2 = models.FloatField()

    class Meta:
        db_table = "labeling_outcome_check_sums"
        constraints = [
            models.UniqueConstraint(
                fields=["question_id", "src", "chk", "fired"], name="outcome_check_sums_key"
            )
        ]


class OutcomeCall(models.Model):
    """One rated call's outcome on one question, kept by the outcome triggers
    (labeling/services/outcome_sums.py): its mean rating x, ratings, weight w (outside: no rating
    came through the sample), agent version and day (its start, else import, in TIME_ZONE), its
    external id, and whether any non-errored verdict on it was flagged (the bad ones nothing
    flagged are listed from `outcome_call_bad`, in the report's order)."""

    question_id = models.BigIntegerField()
    transcript_id = models.BigIntegerField()
    agent_version_id = models.BigIntegerField()
    day = models.DateField()
    x = models.FloatField()
    ratings = models.IntegerField()
    outside = models.SmallIntegerField()
    w = models.FloatField()
    external_id = models.CharField(max_length=200, default="", help_text="The call's.")
    flagged = models.SmallIntegerField(
        default=0, help_text="1 when any non-errored verdict on the call was flagged."
    )

    class Meta:
        db_table = "labeling_outcome_call"
        indexes = [
            models.Index(fields=["transcript_id"], name="outcome_call_call"),
            models.Index(
                fields=["question_id", "x", "external_id"],
                condition=models.Q(x__lte=BAD_AT_MOST, flagged=0),
                name="outcome_call_bad",
            ),
        ]


class OutcomeDaySums(models.Model):
    """Per question, agent version and day: the sums of OutcomeCall the outcome figures need
    (count, ratings, outside the sample, sum of x, bad, the weighted sums of x and of the bad
    ones), kept by the same triggers; the report adds days into weeks and versions."""

    question_id = models.BigIntegerField()
    agent_version_id = models.BigIntegerField()
    day = models.DateField()
    n = models.IntegerField()
    ratings = models.IntegerField()
    outside = models.IntegerField()
    bad = models.IntegerField()
    sx = models.FloatField()
    w = models.FloatField()
    wx = models.FloatField()
    w2 = models.FloatField()
    w2x = models.FloatField()
    w2x2 = models.FloatField()
    wbad = models.FloatField()
    w2bad = models.FloatField()

    class Meta:
        db_table = "labeling_outcome_day_sums"
        constraints = [
            models.UniqueConstraint(
                fields=["question_id", "agent_version_id", "day"], name="outcome_day_sums_key"
            )
        ]


class ClassifierSpan(models.Model):
    """How many runtime-classifier verdicts alike fall in one span of days, kept by database
    triggers (labeling/services/classifier_spans.py) for the thresholds pages."""

    level = models.SmallIntegerField(help_text="0..3: 4^level days; 4: every day.")
    start = models.IntegerField(help_text="First day of the span, in days since 1970-01-01.")
    rule_version_id = models.BigIntegerField()
    judge_id = models.BigIntegerField()
    tenant = models.CharField(max_length=200)
    agent_version_id = models.BigIntegerField(help_text="0: the call names no agent version.")
    category = models.CharField(max_length=50)
    flagged = models.BooleanField()
    confidence = models.SmallIntegerField(
        help_text="A flagged and marked verdict's own, any other's histogram bin (0, 10, ... 90); "
        "-1: none given."
    )
    truth = models.SmallIntegerField(help_text="1 right, 0 wrong, -1 unmarked or tied.")
    n = models.IntegerField()

    class Meta:
        db_table = "labeling_classifier_span"
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "level",
                    "start",
                    "rule_version_id",
                    "judge_id",
                    "tenant",
                    "agent_version_id",
                    "category",
                    "flagged",
                    "confidence",
                    "truth",
                ],
                name="classifier_span_key",
            )
        ]
