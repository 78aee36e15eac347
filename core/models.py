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
            ("import_marks", "Import marks made elsewhere (a spreadsheet, Label Studio)"),
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


class ImportJob(models.Model):
    """A file uploaded on the import page: previewed, then imported in the background by its
    kind's importer (core.import_kinds); the result or the errors, each with its line, are kept."""

    class Status(models.TextChoices):
        UPLOADED = "uploaded", "uploaded"  # stored and previewed; waits for its options
        QUEUED = "queued", "queued"
        RUNNING = "running", "importing"
        DONE = "done", "imported"
        FAILED = "failed", "nothing imported"

    kind = models.CharField(max_length=40)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.UPLOADED)
    file_name = models.CharField(max_length=255)  # as uploaded
    file = models.CharField(max_length=300, blank=True)  # in the imports storage; "" once removed
    size = models.BigIntegerField(default=0)
    options = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)  # ImportResult.as_dict()
    detail = models.TextField(blank=True)  # why nothing was imported, in one line
    # [{line, field, reason, message, text}]: each error with the text of its line, if it has one
    errors = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["created_by", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} from {self.file_name}"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def startable(self) -> bool:
        return self.status in (self.Status.UPLOADED, self.Status.FAILED) and bool(self.file)


class DataVersion(models.Model):
    """How many times one kind of data (calls, verdicts, ...) has changed: the key of the
    figures cached over it (core.data_versions), so a cache is invalidated by what changed."""

    name = models.CharField(max_length=40, primary_key=True)
    version = models.BigIntegerField(default=0)

    def __str__(self):
        return f"{self.name} v{self.version}"
