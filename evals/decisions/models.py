"""Decision points: kinds of moments where the agent must choose (versioned like rules), and the
agent's decisions at those moments, imported with the call or derived from its timings.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models
from django.db.models import Q

from evals.catalog.models import Transcript


class DecisionKind(models.Model):
    """A kind of decision point (turn-taking, interruption, handoff...). Its question and allowed
    answers live in versions; `derive` names how decisions of this kind come from turn timings."""

    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        RETIRED = "retired", "retired"

    class Derive(models.TextChoices):
        NONE = "", "reported only"
        TURN_GAP = "turn_gap", "from turn timings (agent start after a user turn)"

    kind_id = models.CharField(max_length=50, unique=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    derive = models.CharField(max_length=20, choices=Derive.choices, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_decisionkind"
        ordering = ["kind_id"]

    def __str__(self):
        return self.kind_id


class DecisionKindVersion(models.Model):
    """Immutable question and answers of a decision kind. Changing either creates version n+1."""

    kind = models.ForeignKey(DecisionKind, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    question = models.TextField()
    answers = models.JSONField(help_text="The allowed answers, in order.")
    source = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_decisionkindversion"
        ordering = ["kind__kind_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "number"], name="decision_kind_version_unique"),
            models.CheckConstraint(
                condition=Q(number__gte=1), name="decision_kind_version_positive"
            ),
        ]

    def __str__(self):
        return f"{self.kind.kind_id} v{self.number}"


class Decision(models.Model):
    """The agent's choice at one moment of one call. `truth` is the reviewers' answer (their
    majority, kept by labeling whenever a label changes); empty while unlabeled or tied."""

    class Source(models.TextChoices):
        REPORTED = "reported", "reported with the call"
        DERIVED = "derived", "derived from timings"

    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="decisions", db_index=False
    )
    kind = models.ForeignKey(DecisionKind, on_delete=models.PROTECT, related_name="decisions")
    # Indexed by decision_kv_truth (kind_version, truth), which starts with it.
    kind_version = models.ForeignKey(
        DecisionKindVersion, on_delete=models.PROTECT, related_name="decisions", db_index=False
    )
    key = models.CharField(max_length=30, help_text="turn:N or ms:N, unique per call and kind.")
    turn = models.PositiveIntegerField(null=True, blank=True)
    at_ms = models.PositiveIntegerField(null=True, blank=True)
    choice = models.CharField(max_length=100)
    confidence = models.FloatField(null=True, blank=True)
    gap_ms = models.IntegerField(
        null=True, blank=True, help_text="Agent start minus the user's end (negative: overlap)."
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.REPORTED)
    truth = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_decision"
        ordering = ["transcript", "turn", "at_ms", "kind"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "kind", "key"], name="decision_key_unique"
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__gte=0, confidence__lte=1),
                name="decision_confidence_range",
            ),
            models.CheckConstraint(
                condition=Q(turn__isnull=False) | Q(at_ms__isnull=False),
                name="decision_has_a_moment",
            ),
        ]
        indexes = [models.Index(fields=["kind_version", "truth"], name="decision_kv_truth")]

    def __str__(self):
        return f"{self.transcript_id} {self.kind_id} {self.key}"

    @property
    def agent_right(self) -> bool | None:
        """Whether the agent chose what the reviewers say; None while there is no truth."""
        return None if not self.truth else self.truth == self.choice


class DecisionCell(models.Model):
    """A count of decisions that share a kind version, agent version, choice, reviewers' answer
    and gap bin (-1: no gap): the decision accuracy page's figures. The rows are deltas appended
    by database triggers on decisions and calls (evals.decisions.services.cells); a cell is the
    sum of its rows, folded into one by `decision_cells_compact` and checked by
    `decision_cells_rebuild --check`."""

    kind_version = models.ForeignKey(
        DecisionKindVersion, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    agent_version = models.ForeignKey(
        "catalog.AgentVersion", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    choice = models.CharField(max_length=100)
    truth = models.CharField(max_length=100, blank=True, default="")
    gap_bin = models.SmallIntegerField(help_text="services.cells.GAP_EDGES bin; -1: no gap.")
    n = models.BigIntegerField(help_text="Decisions added to the cell (negative: removed).")

    class Meta:
        db_table = "evals_decisioncell"

    def __str__(self):
        return f"{self.kind_version_id}/{self.agent_version_id} {self.choice}/{self.truth}"
