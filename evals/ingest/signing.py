"""Each voice platform's own webhook signature, checked over the body as received (no Django).

- Vapi: the server URL secret in `X-Vapi-Secret`, or an HMAC credential: `X-Vapi-Signature` is
  the hex HMAC-SHA256 of the body keyed by the secret.
- Retell: `X-Retell-Signature: v=<unix ms>,d=<hex HMAC-SHA256 of body + "<unix ms>">`, keyed by
  the API key that has the webhook badge; refused more than five minutes from our clock.
- ElevenLabs: `ElevenLabs-Signature: t=<unix s>,v0=<hex HMAC-SHA256 of "<t>." + body>`, keyed by
  the webhook's secret; refused more than thirty minutes old.
"""

import hashlib
import hmac
import re
import time
from collections.abc import Callable, Mapping

RETELL_TOLERANCE_MS = 5 * 60 * 1000
ELEVENLABS_TOLERANCE_S = 30 * 60
RETELL_RE = re.compile(r"^v=(\d{1,15}),d=([0-9a-fA-F]{64})$")


def _hex(key: str, message: bytes) -> str:
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def vapi_verify(body: bytes, headers: Mapping[str, str], secret: str, now: float) -> bool:
    sent = headers.get("X-Vapi-Secret")
    if sent:
        return _same(sent, secret)
    signature = (headers.get("X-Vapi-Signature") or "").removeprefix("sha256=")
    return bool(signature) and _same(signature.lower(), _hex(secret, body))


def retell_verify(body: bytes, headers: Mapping[str, str], secret: str, now: float) -> bool:
    match = RETELL_RE.match(headers.get("X-Retell-Signature") or "")
    if not match:
        return False
    stamp = int(match.group(1))
    if abs(now * 1000 - stamp) > RETELL_TOLERANCE_MS:
        return False
    return _same(match.group(2).lower(), _hex(secret, body + str(stamp).encode()))


def elevenlabs_verify(body: bytes, headers: Mapping[str, str], secret: str, now: float) -> bool:
    parts = dict(
        p.split("=", 1) for p in (headers.get("ElevenLabs-Signature") or "").split(",") if "=" in p
    )
    stamp, signature = parts.get("t", ""), parts.get("v0", "")
    # ASCII digits only: "²" is a digit to isdigit() but not a number to int().
    if not (stamp.isascii() and stamp.isdigit()) or len(stamp) > 12 or not signature:
        return False
    if not -60 <= now - int(stamp) <= ELEVENLABS_TOLERANCE_S:
        return False
    return _same(signature.lower(), _hex(secret, stamp.encode() + b"." + body))


VERIFY: dict[str, Callable[[bytes, Mapping[str, str], str, float], bool]] = {
    "vapi": vapi_verify,
    "retell": retell_verify,
    "elevenlabs": elevenlabs_verify,
}


def sign_headers(platform: str, body: bytes, secret: str, now: float | None = None) -> dict:
    """The headers the platform would send with `body` (for tests, benches and local tries)."""
    now = time.time() if now is None else now
    if platform == "vapi":
        return {"X-Vapi-Signature": _hex(secret, body)}
    if platform == "retell":
        stamp = int(now * 1000)
        return {"X-Retell-Signature": f"v={stamp},d={_hex(secret, body + str(stamp).encode())}"}
    stamp = str(int(now))
    return {"ElevenLabs-Signature": f"t={stamp},v0={_hex(secret, stamp.encode() + b'.' + body)}"}
