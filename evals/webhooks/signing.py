"""Webhook signatures: HMAC-SHA256 over a timestamp and the raw body (no Django, so a receiver
written in Python can copy this file as it is).

Every POST carries

    Docket-Signature: t=1764576000,v1=5f0c...e9

where `t` is the Unix time (seconds) of the attempt and `v1` the lowercase hex HMAC-SHA256, keyed
by the webhook's secret, of the bytes `f"{t}."` followed by the raw request body. A receiver
recomputes it over the body exactly as received, compares in constant time, and refuses a `t`
more than five minutes from its own clock, so a captured request cannot be replayed later. Each
retry is signed anew (a new `t`); `Docket-Delivery` stays the same, so receivers can dedupe.
"""

import hashlib
import hmac
import time

HEADER = "Docket-Signature"
TOLERANCE_S = 300


def webhook_signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """Return the Docket-Signature header value for `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def webhook_signature_parse(header: str) -> tuple[int, list[str]]:
    """Return (t, [v1 signatures]) from a Docket-Signature header; ValueError if malformed."""
    t, sigs = None, []
    for part in (header or "").split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            t = int(value)
        elif key == "v1" and value:
            sigs.append(value)
    if t is None or not sigs:
        raise ValueError("Docket-Signature needs t=<unix seconds> and v1=<hex>")
    return t, sigs


def webhook_signature_valid(
    *,
    secret: str,
    header: str,
    body: bytes,
    now: float | None = None,
    tolerance_s: int = TOLERANCE_S,
) -> bool:
    """Whether `header` signs `body` with `secret` and its time is within `tolerance_s` of now."""
    try:
        t, sigs = webhook_signature_parse(header)
    except ValueError:
        return False
    now = time.time() if now is None else now
    if abs(now - t) > tolerance_s:
        return False
    expected = webhook_signature(secret=secret, timestamp=t, body=body).split("v1=", 1)[1]
    return any(hmac.compare_digest(expected, s) for s in sigs)
