"""Rule drafts, the workbench runs that judge them on calls already marked for a released version,
and the drafts' verdicts: a table of their own, so no sample, gate or released version's figure
can count them."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from evals.catalog.models import Transcript
from evals.judging.models import Judge, JudgeRun
from evals.rules.models import Rule, RuleVersion, Severity


class RuleDraft(models.Model):
    """A rule's text (and detector parameters, or judge) tried before it ships, against the marks
    reviewers gave `base`'s verdicts."""

    rule = models.ForeignKey(Rule, on_delete=models.CASCADE, related_name="drafts")
    base = models.ForeignKey(
        RuleVersion,
        on_delete=models.CASCADE,
        related_name="drafts",
        help_text="The released version whose marked calls the draft is judged on.",
    )
    text = models.TextField()
    detector = models.JSONField(null=True, blank=True)
    model = models.CharField(
        max_length=200, blank=True, help_text="The judge's model ('' for a detector draft)."
    )
    prompt_version = models.CharField(max_length=100, blank=True)
    note = models.CharField(max_length=500, blank=True)
    source = models.CharField(max_length=200, blank=True, help_text="Where the draft was made.")
    issue_row = models.PositiveIntegerField(
        null=True, blank=True, help_text="The number of the issue row it fixes, if any."
    )
    changes_meaning = models.BooleanField(
        default=False,
        help_text="A lead said the text changes the rule's meaning: the base's truth is not "
        "carried to it.",
    )
    meaning_reason = models.CharField(max_length=500, blank=True)
    meaning_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    meaning_at = models.DateTimeField(null=True, blank=True)
    saved_as = models.OneToOneField(
        RuleVersion,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="from_draft",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="rule_drafts",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"draft {self.pk} of {self.rule.rule_id}"

    @property
    def is_detector(self) -> bool:
        return self.detector is not None


class DraftRun(models.Model):
    """One judging of a draft on chosen calls, through a judge run of the ordinary runner."""

    draft = models.ForeignKey(RuleDraft, on_delete=models.CASCADE, related_name="runs")
    judge_run = models.OneToOneField(
        JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="draft_run"
    )
    base_judge = models.ForeignKey(
        Judge,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The judge whose marked verdicts of the base version the draft is compared to.",
    )
    number = models.PositiveIntegerField(
        help_text="The version number the draft was judged as (the rule's next one then)."
    )
    size = models.PositiveIntegerField(help_text="How many calls were asked for.")
    params = models.JSONField(default=dict, blank=True, help_text="Strata, seed and counts.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"run {self.pk} of draft {self.draft_id}"


class DraftVerdict(models.Model):
    """One call of a workbench run: why it was chosen and with what probability, then the draft's
    verdict of the one shape (flagged None until judged)."""

    class Stratum(models.TextChoices):
        DISAGREEMENT = "disagreement", "disagreement"
        REST = "rest", "uniform share"

    run = models.ForeignKey(DraftRun, on_delete=models.CASCADE, related_name="verdicts")
    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="+")
    stratum = models.CharField(max_length=12, choices=Stratum.choices)
    inclusion_probability = models.FloatField()
    flagged = models.BooleanField(null=True, blank=True)
    turn = models.PositiveIntegerField(null=True, blank=True)
    turns = models.JSONField(default=list, blank=True)
    severity = models.CharField(max_length=10, choices=Severity.choices, blank=True)
    rationale = models.TextField(blank=True)
    confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    judged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["run", "transcript"], name="draft_verdict_unique"),
            models.CheckConstraint(
                condition=Q(inclusion_probability__gt=0, inclusion_probability__lte=1),
                name="draft_verdict_probability_range",
            ),
        ]

    def __str__(self):
        return f"{self.run_id}/{self.transcript_id}"
