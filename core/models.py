from django.conf import settings
from django.db import models
from django.utils import timezone


class Access(models.Model):
    """Holds the console's permissions; roles (auth groups) are granted a subset of them."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("view_console", "Use the console: dashboard, calls, rules, verdicts"),
            ("review", "Claim sampled calls, mark verdicts, file issue rows"),
            ("triage", "Triage issue rows: assign, write rules, add signals, fix rules"),
            ("edit_rules", "Create rules and new rule versions"),
            ("import_data", "Import transcripts, rules and verdicts"),
            ("run_judge", "Start judge runs"),
            ("view_calibration", "See judge calibration per rule version"),
            ("promote", "Promote and demote rule versions, settle disagreements"),
            ("manage_sample", "Make daily samples and queue calls by hand"),
            ("manage_gates", "Edit golden sets and gates"),
            ("run_gate", "Run gates and read gate results"),
            ("manage_webhooks", "Register webhook URLs and read their deliveries"),
            ("manage_service_accounts", "Make service accounts and their API tokens"),
        ]


class ApiToken(models.Model):
    """A user's key to the API, stored as its SHA-256 (the key itself is shown once, when made).

    A key is high-entropy random text, so one unsalted hash is enough: nobody can guess a key from
    its digest, and a lookup by digest is one indexed read. `prefix`, the key's first characters,
    names it on pages and in the admin.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.CharField(max_length=150, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name}, {self.user})"

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class ServiceAccount(models.Model):
    """A user that is a program (CI, the agent platform): no password, reached by its API tokens
    only, made by a lead in the engineer role."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="service_account"
    )
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return str(self.user)
