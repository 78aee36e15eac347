"""The events a webhook can subscribe to. The app that emits an event registers it in its
AppConfig.ready(), so this app never names the features above it."""

# name -> what it means, in the order the apps registered them
WEBHOOK_EVENTS: dict[str, str] = {}


def webhook_event_register(name: str, description: str) -> None:
    """Make `name` an event webhooks can subscribe to (idempotent)."""
    WEBHOOK_EVENTS.setdefault(name, description)
