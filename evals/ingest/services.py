"""Voice hooks and OTLP traces in: each verified or authenticated, then handed to the one
transcript importer (atomic, idempotent, errors naming the field)."""

import secrets
import time
from collections.abc import Mapping

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.errors import DomainError, NotFound
from core.importing import Errors, ImportResult, Invalid
from evals.catalog.formats import format_of
from evals.catalog.formats.otel import spans_conversational, spans_from_export, spans_keyed
from evals.catalog.formats.voice import AGENT_IDS
from evals.catalog.models import Agent
from evals.catalog.services.importing import transcripts_import
from evals.ingest.models import TraceSpan, VoiceHook
from evals.ingest.otlp import json_object
from evals.ingest.signing import VERIFY


class SignatureRefused(DomainError):
    """No configured hook's secret verifies the request: nothing is stored."""

    status = 401
    code = "signature_refused"


class HookUnmapped(DomainError):
    status = 422
    code = "hook_unmapped"


# ---- voice hooks -----------------------------------------------------------------------------


def voice_hook_save(
    *,
    hook: VoiceHook | None = None,
    platform: str | None = None,
    platform_agent_id: str | None = None,
    agent: str | None = None,
    agent_version: str | None = None,
    secret: str | None = None,
    active: bool | None = None,
    by: str = "",
) -> VoiceHook:
    """Create a hook (platform, agent and version needed; a secret is made when none is given)
    or change one; a platform agent mapped twice is refused."""
    hook = hook or VoiceHook(created_by=by)
    if platform is not None:
        if platform not in VoiceHook.Platform.values:
            raise DomainError(
                f"{platform!r} is not one of {', '.join(VoiceHook.Platform.values)}",
                field="platform",
            )
        hook.platform = platform
    if platform_agent_id is not None:
        hook.platform_agent_id = platform_agent_id.strip()
    if agent is not None:
        hook.agent, _ = Agent.objects.get_or_create(name=agent)
    if agent_version is not None:
        if not agent_version.strip():
            raise DomainError("missing", field="agent_version")
        hook.agent_version = agent_version.strip()
    if secret is not None:
        if len(secret) < 8:
            raise DomainError("at least 8 characters", field="secret")
        hook.secret = secret
    elif not hook.secret:
        hook.secret = secrets.token_hex(32)
    if active is not None:
        hook.active = active
    for name in ("platform", "agent_id", "agent_version"):
        if not getattr(hook, name, None):
            raise DomainError("missing", field=name.removesuffix("_id"))
    clash = VoiceHook.objects.filter(
        platform=hook.platform, platform_agent_id=hook.platform_agent_id
    ).exclude(pk=hook.pk)
    if clash.exists():
        raise DomainError(
            f"{hook.platform} agent {hook.platform_agent_id or '(any)'} already has a hook",
            field="platform_agent_id",
        )
    hook.save()
    return hook


def voice_hook_endpoint(platform: str, request=None) -> str:
    """The URL a platform is given for its webhooks: under DOCKET_PUBLIC_URL, else the host the
    request came to."""
    path = f"/api/v1/hooks/{platform}/"
    if settings.DOCKET_PUBLIC_URL:
        return settings.DOCKET_PUBLIC_URL.rstrip("/") + path
    return request.build_absolute_uri(path) if request is not None else path


def voice_hook_get(pk: int) -> VoiceHook:
    try:
        return VoiceHook.objects.select_related("agent").get(pk=pk)
    except VoiceHook.DoesNotExist:
        raise NotFound(f"no voice hook {pk}") from None


def hook_receive(
    *, platform: str, body: bytes, headers: Mapping[str, str], now: float | None = None
) -> ImportResult | str:
    """Import a platform's end-of-call webhook as a call of the agent version its hook maps to;
    return the import's result, or the event's name when it is not an end-of-call event (kept
    nowhere). Raises SignatureRefused (401) when no active hook's secret verifies the body."""
    now = time.time() if now is None else now
    verify = VERIFY[platform]
    hooks = [
        h
        for h in VoiceHook.objects.filter(platform=platform, active=True).select_related("agent")
        if verify(body, headers, h.secret, now)
    ]
    if not hooks:
        raise SignatureRefused(f"the request is not signed by any {platform} hook's secret")
    obj = json_object(body)
    fmt = format_of(obj)
    if fmt is None or fmt.name != platform:
        return _event_name(obj) or "unknown"
    platform_agent = AGENT_IDS[platform](obj)
    hook = next((h for h in hooks if h.platform_agent_id == platform_agent), None) or next(
        (h for h in hooks if not h.platform_agent_id), None
    )
    if hook is None:
        raise HookUnmapped(
            f"no {platform} hook maps agent {platform_agent!r} to a Docket agent version",
            field="agent",
        )
    with transaction.atomic():
        result = transcripts_import(
            records=[("body", obj)],
            source=f"{platform} hook",
            agent=hook.agent.name,
            agent_version=hook.agent_version,
        )
        VoiceHook.objects.filter(pk=hook.pk).update(last_received_at=timezone.now())
    return result


def _event_name(obj: dict) -> str:
    message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    for value in (message.get("type"), obj.get("event"), obj.get("type")):
        if isinstance(value, str) and value:
            return value[:100]
    return ""


# ---- OpenTelemetry ---------------------------------------------------------------------------


def otlp_receive(
    *, export: dict, agent: str | None = None, agent_version: str | None = None
) -> ImportResult:
    """Store an OTLP export's spans (a span sent again replaces itself) and import, for every
    call they touch, the call rebuilt from all its spans so far: spans of one trace that arrive
    in several requests join the same call, and the same spans again change nothing."""
    errors = Errors("otlp")
    try:
        spans = spans_from_export(export)
    except Invalid as exc:
        errors.add("body", exc.field, exc.reason)
        errors.check()
    if not spans:
        return ImportResult(kind="transcripts")
    with transaction.atomic():
        traces = {s["trace_id"] for s in spans}
        known = dict(
            TraceSpan.objects.filter(trace_id__in=traces).values_list("trace_id", "key").distinct()
        )
        groups = spans_keyed(spans, known)
        # Spans are kept for calls: a trace with no conversation in it (a web request's) is left
        # out, and said so, unless spans of its call came before.
        known_keys = set(known.values())
        kept = {k: g for k, g in groups.items() if k in known_keys or spans_conversational(g)}
        moved = {
            s["trace_id"]: key
            for key, group in groups.items()
            for s in group
            if known.get(s["trace_id"], key) != key
        }
        for trace_id, key in moved.items():  # a trace that now names its session joins it
            TraceSpan.objects.filter(trace_id=trace_id).update(key=key)
        stored = {
            (t.trace_id, t.span_id): t
            for t in TraceSpan.objects.filter(trace_id__in=traces).only(
                "id", "trace_id", "span_id", "key", "start_ns", "data"
            )
        }
        new, changed = [], []
        for key, group in kept.items():
            for s in group:
                row = stored.get((s["trace_id"], s["span_id"]))
                if row is None:
                    new.append(
                        TraceSpan(
                            key=key,
                            trace_id=s["trace_id"],
                            span_id=s["span_id"],
                            start_ns=s["start_ns"],
                            data=s,
                        )
                    )
                elif row.data != s or row.key != key:
                    row.data, row.key, row.start_ns = s, key, s["start_ns"]
                    changed.append(row)
        TraceSpan.objects.bulk_create(new, batch_size=1000)
        TraceSpan.objects.bulk_update(changed, ["data", "key", "start_ns"], batch_size=1000)
        records = [
            (key, {"otel_key": key, "otel_spans": group})
            for key, group in sorted(groups.items())
            if key not in kept
        ]
        for key in sorted(kept):
            all_spans = list(
                TraceSpan.objects.filter(key=key)
                .order_by("start_ns", "span_id")
                .values_list("data", flat=True)
            )
            records.append((key, {"otel_key": key, "otel_spans": all_spans}))
        return transcripts_import(
            records=records,
            source="otlp",
            replace=True,
            agent=agent,
            agent_version=agent_version,
        )
