"""Webhook endpoints and the deliveries of events to them.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models


class Webhook(models.Model):
    """A URL an operator registered for some events; Docket POSTs each event there, signed with
    `secret` (HMAC-SHA256, see evals.webhooks.services)."""

    url = models.URLField(max_length=2000, help_text="http(s) URL that receives the POSTs.")
    events = models.JSONField(default=list, help_text="Event names, from WEBHOOK_EVENTS.")
    secret = models.CharField(max_length=200, help_text="The HMAC-SHA256 key receivers verify.")
    description = models.CharField(max_length=200, blank=True)
    active = models.BooleanField(default=True)
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_webhook"
        ordering = ["pk"]

    def __str__(self):
        return self.url


class WebhookDelivery(models.Model):
    """One event sent to one webhook: the body as sent, every attempt, the last answer's status and
    length (never its text)."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RETRYING = "retrying", "retrying"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed (gave up)"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    uuid = models.UUIDField(unique=True, help_text="Sent as Docket-Delivery; receivers dedupe.")
    event = models.CharField(max_length=50, db_index=True)
    payload = models.JSONField()
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    attempts = models.JSONField(
        default=list, help_text="One {at, status, error, ms, length} per attempt, oldest first."
    )
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_length = models.PositiveIntegerField(
        null=True, blank=True, help_text="Bytes in the last answer (counted up to 1 MiB)."
    )
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "evals_webhookdelivery"
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "webhook deliveries"

    def __str__(self):
        return f"{self.event} → {self.webhook_id} ({self.status})"
