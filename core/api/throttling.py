"""Throttles against abuse: bad API tokens, anonymous requests, and a generous rate for users.

One idea of where a request comes from (`client_ip`) serves these and the login lockout
(django-axes, AXES_CLIENT_IP_CALLABLE). Rates come from settings at request time
(DOCKET_API_*_RATE, e.g. "10/min"; empty turns one off), and a refusal is a 429 naming its
setting and saying when to try again.

DRF checks throttles after authentication and permissions, so a request with a bad token (401)
or none (401/403) would never reach one: the bad-token count lives in the token authentication,
and anonymous requests are counted by a last "authentication" class that only throttles.
"""

from django.conf import settings
from rest_framework import authentication, exceptions, throttling

from core.models import ApiToken
from core.tokens import api_token_authenticate


def client_ip(request) -> str | None:
    """Return the address a request came from: REMOTE_ADDR, or behind a proxy
    (DJANGO_BEHIND_PROXY) the last address of X-Forwarded-For, the one that proxy added; None
    for a request made in code (a test client's login)."""
    meta = request.META
    if settings.DOCKET_BEHIND_PROXY:
        forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded:
            return forwarded.split(",")[-1].strip()
    return meta.get("REMOTE_ADDR") or None


class _SettingRate(throttling.SimpleRateThrottle):
    """A rate read from a setting at request time; refusals raise a 429 that names it."""

    setting = ""
    what = ""

    def get_rate(self):
        return getattr(settings, self.setting, "") or None

    def get_ident(self, request):
        return client_ip(request) or "unknown"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def refuse(self):
        wait = self.wait()
        raise exceptions.Throttled(
            wait=wait,
            detail=(
                f"Too many {self.what} ({self.setting}: {self.rate}); "
                f"try again in {max(1, round(wait or 1))} seconds."
            ),
        )

    def allow_request(self, request, view):
        if not super().allow_request(request, view):
            self.refuse()
        return True


class UserRateThrottle(_SettingRate):
    """Every authenticated user: a generous rate, per user."""

    scope = "user"
    setting = "DOCKET_API_USER_RATE"
    what = "requests from this user"

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            return self.cache_format % {"scope": self.scope, "ident": request.user.pk}
        return super().get_cache_key(request, view)


class AnonRateThrottle(_SettingRate):
    scope = "anon"
    setting = "DOCKET_API_ANON_RATE"
    what = "requests without credentials from this address"


class BadTokenThrottle(_SettingRate):
    """Counts only the failures: a client past the rate is refused before its token is looked at."""

    scope = "bad_token"
    setting = "DOCKET_API_BAD_TOKEN_RATE"
    what = "requests with a bad token from this address"

    def _load(self, request) -> bool:
        """Load this address's recent failures; return True when they reach the rate."""
        self.key = self.get_cache_key(request, None)
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()
        return len(self.history) >= self.num_requests

    def check(self, request) -> None:
        if self.rate is not None and self._load(request):
            self.refuse()

    def record_failure(self, request) -> None:
        if self.rate is not None:
            self._load(request)
            self.history.insert(0, self.now)
            self.cache.set(self.key, self.history, self.duration)


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token KEY` as DRF reads it, the key checked against the stored digests
    (core.tokens), bad tokens counted per address (BadTokenThrottle)."""

    model = ApiToken

    def authenticate_credentials(self, key):
        token = api_token_authenticate(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        return token.user, token

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        throttle = BadTokenThrottle()
        throttle.check(request)
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            throttle.record_failure(request)
            raise


class AnonymousThrottle(authentication.BaseAuthentication):
    """Last of the authentication classes, so only requests none of them claimed reach it: counts
    them per address (DOCKET_API_ANON_RATE) and authenticates no one."""

    def authenticate(self, request):
        AnonRateThrottle().allow_request(request, None)  # raises Throttled past the rate
