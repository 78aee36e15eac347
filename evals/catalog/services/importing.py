"""Transcripts: the native JSONL shape, the OpenAI chat shape and the trajectory shape."""

import hashlib
import json
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils.dateparse import parse_datetime

from core.data_versions import data_changed
from core.import_kinds import ImportKind, ImportOption
from core.importing import (
    COMMAND,
    Errors,
    ImportResult,
    Invalid,
    Progress,
    Spelling,
    chunked,
    copy_rows,
    json_records,
    json_text,
)
from evals.catalog.formats import record_convert, records_expand
from evals.catalog.formats.chat import chat_turns, content_text, tool_call_clean
from evals.catalog.models import Agent, AgentVersion, Transcript, Turn
from evals.catalog.registry import CALL_PARTS
from evals.catalog.services.agents import (
    AgentScope,
    ScopeInvalid,
    agent_scope_clean,
    agent_scope_differs,
    agent_version_scope_set,
)

logger = logging.getLogger(__name__)

SPEAKERS = tuple(Turn.Speaker.values)
AGENT_RE = re.compile(r"^[-a-zA-Z0-9_]+$")
TURN_COLUMNS = ("transcript_id", *Turn.FIELDS)
# What a replace takes from the new line (besides the agent version).
REPLACED = ("checksum", "audio_url", "language", "scenario", "tenant", "started_at", "metadata")
# Calls parsed and written at a time: bounds the memory an import holds, whatever the file's size.
CHUNK_CALLS = 2000
CHUNK_TURNS = 50_000


def turn_canonical(turn: Any) -> dict:
    """Return the fields of a turn (a dict or a Turn) that its transcript's checksum covers."""
    get = (
        turn.get
        if isinstance(turn, dict)
        else lambda name, default=None: getattr(turn, name, default)
    )
    return {
        "speaker": get("speaker"),
        "text": get("text") or "",
        "start_ms": get("start_ms"),
        "end_ms": get("end_ms"),
        "asr_confidence": get("asr_confidence"),
        "phase": get("phase") or "",
        "tool_calls": get("tool_calls") or [],
        "tool_call_id": get("tool_call_id") or "",
    }


def transcript_checksum(turns: Iterable[Any]) -> str:
    """Return the sha256 (hex) of a transcript's canonical turns, in order."""
    canonical = [turn_canonical(t) for t in turns]
    data = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def audio_url_clean(value: Any, field: str = "audio_url") -> str:
    """Return the link if it is http(s) or one of the
    console's own absolute paths, else raise Invalid."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise Invalid(field, f"must be a string, not {type(value).__name__}")
    if len(value) > 2000:
        raise Invalid(field, "longer than 2000 characters")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value) or "\\" in value:
        raise Invalid(field, "must not contain spaces, control characters or backslashes")
    if value.startswith("/"):
        if value.startswith("//"):
            raise Invalid(field, "a path must start with a single '/' (no '//host' links)")
        return value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        scheme = (parts.scheme or value.split(":", 1)[0]) + ":" if ":" in value else "no scheme"
        raise Invalid(
            field, f"only http(s) links or paths starting with '/' are accepted, not {scheme}"
        )
    return value


@dataclass
class ParsedTranscript:
    where: str
    external_id: str
    agent: str
    agent_version: str
    started_at: Any
    audio_url: str
    language: str
    scenario: str
    metadata: dict
    turns: list[dict]
    checksum: str = ""
    tenant: str = ""
    scope: AgentScope | None = None  # the agent version's instructions and tools, when given
    scope_parts: frozenset = frozenset()  # which of them the line gave: instructions, tools
    parts: dict[str, Any] = field(default_factory=dict)  # registered call parts' values


def _str(
    obj: dict, name: str, *, max_length: int, required: bool = False, field: str | None = None
) -> str:
    value = obj.get(name)
    field = field or name
    if value is None or value == "":
        if required:
            raise Invalid(field, "missing")
        return ""
    if not isinstance(value, str):
        raise Invalid(field, f"must be a string, not {type(value).__name__}")
    if len(value) > max_length:
        raise Invalid(field, f"longer than {max_length} characters")
    return value


def _ms(value: Any, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise Invalid(field, f"must be a whole number of milliseconds, not {value!r}")
    if value < 0 or value > 2**31 - 1:
        raise Invalid(field, f"out of range: {value!r}")
    return int(value)


def _turn(raw: Any, i: int) -> dict:
    f = f"turns[{i}]"
    if not isinstance(raw, dict):
        raise Invalid(f, "must be an object with speaker and text")
    speaker = raw.get("speaker")
    if speaker is None:
        raise Invalid(f"{f}.speaker", f"missing (one of {', '.join(SPEAKERS)})")
    if speaker not in SPEAKERS:
        raise Invalid(f"{f}.speaker", f"{speaker!r} is not one of {', '.join(SPEAKERS)}")
    text = raw.get("text")
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise Invalid(f"{f}.text", f"must be a string, not {type(text).__name__}")
    start, end = _ms(raw.get("start_ms"), f"{f}.start_ms"), _ms(raw.get("end_ms"), f"{f}.end_ms")
    if start is not None and end is not None and end < start:
        raise Invalid(f"{f}.end_ms", f"{end} is before start_ms {start}")
    conf = raw.get("asr_confidence")
    if conf is not None:
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
            raise Invalid(f"{f}.asr_confidence", f"must be a number from 0 to 1, not {conf!r}")
        conf = float(conf)
    tool_calls = raw.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        raise Invalid(f"{f}.tool_calls", "must be a list")
    return {
        "speaker": speaker,
        "text": text,
        "start_ms": start,
        "end_ms": end,
        "asr_confidence": conf,
        "phase": _str(raw, "phase", max_length=50, field=f"{f}.phase"),
        "tool_calls": [
            tool_call_clean(c, f"{f}.tool_calls[{j}]") for j, c in enumerate(tool_calls)
        ],
        "tool_call_id": _str(raw, "tool_call_id", max_length=200, field=f"{f}.tool_call_id"),
    }


def trajectory_turns(obj: dict) -> list[dict]:
    """Return native turns from the trajectory shape: the
    prompt, each tool call and result, the output."""
    prompt = obj.get("prompt")
    turns: list[dict] = []
    if isinstance(prompt, list):
        turns.extend(chat_turns(prompt, "prompt"))
    elif prompt is not None:
        turns.append({"speaker": "user", "text": content_text(prompt, "prompt")})
    calls = obj.get("calls") or []
    if not isinstance(calls, list):
        raise Invalid("calls", "must be a list of {tool, args, result}")
    for i, call in enumerate(calls):
        f = f"calls[{i}]"
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str) or not call["tool"]:
            raise Invalid(f"{f}.tool", "missing")
        call_id = str(call.get("id") or f"call-{i}")
        turns.append(
            {
                "speaker": "agent",
                "text": "",
                "tool_calls": [
                    {"id": call_id, "name": call["tool"], "arguments": call.get("args", {})}
                ],
            }
        )
        result = call.get("result")
        turns.append(
            {
                "speaker": "tool",
                "tool_call_id": call_id,
                "text": result
                if isinstance(result, str)
                else json_text(result)
                if result is not None
                else "",
            }
        )
    output = obj.get("output")
    if output is not None:
        turns.append(
            {"speaker": "agent", "text": output if isinstance(output, str) else json_text(output)}
        )
    return turns


def _shape_turns(obj: dict) -> list:
    """Return the raw turns of a native record or of one in the trajectory shape."""
    if "turns" in obj:
        if not isinstance(obj["turns"], list):
            raise Invalid("turns", "must be a list")
        return obj["turns"]
    if "prompt" in obj or "calls" in obj or "output" in obj:
        return trajectory_turns(obj)
    raise Invalid(
        "turns",
        "missing: expected `turns` (native), `messages` (OpenAI chat), `prompt`/`calls`/`output` "
        "(trajectory), or one of the trace formats (tau-bench, tau2-bench, Vapi, Retell, "
        "ElevenLabs, OpenTelemetry)",
    )


def _parse(
    obj: Any,
    where: str,
    agent: str | None,
    agent_version: str | None,
    defaults: dict,
    spelling: Spelling,
) -> ParsedTranscript:
    if not isinstance(obj, dict):
        raise Invalid("transcript", "must be a JSON object")
    raw_turns = _shape_turns(obj)
    external_id = _str(obj, "id", max_length=200, required=True)
    if external_id.strip() != external_id or "/" in external_id:
        raise Invalid("id", "must not contain '/' or surrounding spaces")
    agent_name = _str(obj, "agent", max_length=100) or agent or defaults.get("agent") or ""
    if not agent_name:
        raise Invalid(
            "agent",
            "missing: set it on the line, or give the agent and version of lines that name "
            f"none ({spelling.options('agent', 'agent_version')})",
        )
    if not AGENT_RE.match(agent_name):
        raise Invalid("agent", f"{agent_name!r}: use letters, digits, '-' and '_'")
    version = obj.get("agent_version")
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        version = str(version)
        obj = {**obj, "agent_version": version}
    version = (
        _str(obj, "agent_version", max_length=100)
        or agent_version
        or defaults.get("agent_version")
        or ""
    )
    if not version:
        raise Invalid(
            "agent_version",
            "missing: set it on the line, or give the version of lines that name none "
            f"({spelling.options('agent_version')})",
        )
    started_at = obj.get("started_at")
    if started_at not in (None, ""):
        parsed = parse_datetime(started_at) if isinstance(started_at, str) else None
        if parsed is None:
            raise Invalid("started_at", f"not an ISO 8601 date and time: {started_at!r}")
        started_at = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    else:
        started_at = None
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise Invalid("metadata", "must be an object")
    if len(raw_turns) > settings.DOCKET_IMPORT_MAX_TURNS:
        raise Invalid(
            "turns",
            f"{len(raw_turns):,} turns, more than DOCKET_IMPORT_MAX_TURNS "
            f"({settings.DOCKET_IMPORT_MAX_TURNS:,})",
        )
    turns = [_turn(t, i) for i, t in enumerate(raw_turns)]
    scope = None
    if "agent_instructions" in obj or "agent_tools" in obj:
        try:
            scope = agent_scope_clean(
                instructions=obj.get("agent_instructions"), tools=obj.get("agent_tools")
            )
        except ScopeInvalid as exc:
            raise Invalid(exc.field or "agent_tools", exc.message) from None
    return ParsedTranscript(
        where=where,
        external_id=external_id,
        agent=agent_name,
        agent_version=version,
        started_at=started_at,
        audio_url=audio_url_clean(obj.get("audio_url")),
        language=_str(obj, "language", max_length=20),
        scenario=_str(obj, "scenario", max_length=200),
        metadata=metadata,
        turns=turns,
        checksum=transcript_checksum(turns),
        tenant=_str(obj, "tenant", max_length=200),
        scope=scope,
        scope_parts=frozenset(part for part in ("instructions", "tools") if f"agent_{part}" in obj),
    )


def _scopes_store(scopes: dict[tuple[str, str], AgentScope], replace: bool) -> int:
    """Store each agent version's scope (checked already); return how many changed."""
    changed = 0
    for (name, version), scope in sorted(scopes.items()):
        _, did = agent_version_scope_set(agent=name, version=version, scope=scope, replace=replace)
        changed += did
    return changed


def _agent_versions(
    parsed: Sequence[ParsedTranscript], ids: dict[tuple[str, str], int]
) -> dict[tuple[str, str], int]:
    """Return `ids` (agent, version) -> agent version pk, with the pairs these calls name and it
    lacks looked up or created."""
    pairs = {(p.agent, p.agent_version) for p in parsed} - ids.keys()
    if not pairs:
        return ids
    agents = {a.name: a for a in Agent.objects.filter(name__in={a for a, _ in pairs})}
    for name in {a for a, _ in pairs} - set(agents):
        agents[name] = Agent.objects.create(name=name)
    for name, version in sorted(pairs):
        av, _ = AgentVersion.objects.get_or_create(agent=agents[name], version=version)
        ids[(name, version)] = av.pk
    return ids


ScopesGiven = dict[tuple[str, str], dict[str, tuple[str, Any]]]


def _scopes_given(parsed: Sequence[ParsedTranscript], given: ScopesGiven, errors: Errors) -> None:
    """Add to `given` the instructions and tools each agent version is given by these lines (with
    the first line giving each), adding an error for a line that gives a version other ones than
    a line before it."""
    for p in parsed:
        if p.scope is None:
            continue
        key = (p.agent, p.agent_version)
        parts = given.setdefault(key, {})
        for part in sorted(p.scope_parts):
            value = getattr(p.scope, part)
            if part in parts and parts[part][1] != value:
                errors.add(
                    p.where,
                    f"agent_{part}",
                    f"{p.agent} {p.agent_version} is given other {part} at {parts[part][0]}; "
                    "one agent version has one scope",
                )
            parts.setdefault(part, (p.where, value))


def _scopes_check(
    given: ScopesGiven, errors: Errors, replace: bool
) -> dict[tuple[str, str], AgentScope]:
    """Return the scope each agent version is given by this import (_scopes_given), adding an
    error for one that differs from the scope stored (unless `replace`). A line may give only
    one of the two (a chat line with a system message and no tools): the other is then what the
    others give, or what is stored."""
    if not given:
        return {}
    stored = {
        (av.agent.name, av.version): av
        for av in AgentVersion.objects.filter(
            agent__name__in={a for a, _ in given}, version__in={v for _, v in given}
        ).select_related("agent")
    }
    scopes = {}
    for key, parts in given.items():
        av = stored.get(key)
        has = av is not None and bool(av.instructions or av.tools)
        values = {
            part: parts[part][1] if part in parts else getattr(av, part) if has else default
            for part, default in (("instructions", ""), ("tools", []))
        }
        scope = AgentScope(**values)
        if has and not replace and agent_scope_differs(av, scope):
            part = next(p for p in ("instructions", "tools") if values[p] != getattr(av, p))
            errors.add(
                parts[part][0],
                f"agent_{part}",
                f"{av} already has other {part}; a released version's scope does not change: "
                "use a new agent_version, or import with replace",
            )
        scopes[key] = scope
    return scopes


def _format_report(reports: dict, converted) -> None:
    report = reports.setdefault(
        converted.format, {"calls": 0, "mapped": list(converted.mapped), "metadata": []}
    )
    if converted.record is None:
        left_out = report.setdefault("left_out", {})
        left_out[converted.left_out] = left_out.get(converted.left_out, 0) + 1
        return
    report["calls"] += 1
    for name in converted.kept:
        if name not in report["metadata"]:
            report["metadata"].append(name)


def _enrich_unchanged(same: Sequence[ParsedTranscript]) -> set[int]:
    """Give known calls with the same turns what this import adds to their metadata and a
    recording link they lacked; return the pks of those that changed. The same import again
    changes nothing."""
    if not same:
        return set()
    stored = {
        t.external_id: t
        for t in Transcript.objects.filter(external_id__in=[p.external_id for p in same]).only(
            "id", "external_id", "metadata", "audio_url"
        )
    }
    changed = []
    for p in same:
        t = stored[p.external_id]
        metadata = {**(t.metadata or {}), **p.metadata}
        audio = t.audio_url or p.audio_url
        if metadata != (t.metadata or {}) or audio != t.audio_url:
            t.metadata, t.audio_url = metadata, audio
            changed.append(t)
    Transcript.objects.bulk_update(changed, ["metadata", "audio_url"], batch_size=1000)
    return {t.pk for t in changed}


def _parts_forget(old_pks: list[int], result: ImportResult) -> None:
    """Drop what the registered call parts made on the old turns of replaced calls."""
    for part in CALL_PARTS.values():
        if part.forget:
            for key, n in part.forget(old_pks).items():
                result.details[key] = result.details.get(key, 0) + n


def _parts_write(parsed, pks, replace: bool, errors: Errors, result: ImportResult) -> set[int]:
    """Write every line's registered call parts (unchanged calls' too); return the calls they
    changed."""
    touched: set[int] = set()
    for name, part in CALL_PARTS.items():
        if not part.write:
            continue
        values = [(p.where, pk, p.parts.get(name)) for p, pk in zip(parsed, pks, strict=True)]
        counts, changed = part.write(values, replace=replace, errors=errors)
        if any(counts.values()):
            for key, n in counts.items():
                result.details[key] = result.details.get(key, 0) + n
        touched |= changed
    return touched


class _Writer:
    """Writes an import's calls a chunk at a time inside its transaction: each chunk's known ids
    are locked and compared, its new and replaced calls and their turns written. Once any line
    was bad nothing more is written (the transaction rolls back), but later chunks are still
    compared so that one run names as many bad lines as it can."""

    def __init__(self, errors: Errors, result: ImportResult, replace: bool, progress):
        self.errors = errors
        self.result = result
        self.replace = replace
        self.progress = progress
        self.av_ids: dict[tuple[str, str], int] = {}
        self.turns_written = 0

    def _progress(self, done: int, total: int | None) -> None:
        self.progress(self.turns_written + done, None)

    def add(self, parsed: list[ParsedTranscript]) -> None:
        errors, replace, result = self.errors, self.replace, self.result
        existing: dict[str, Transcript] = {}
        ids = [p.external_id for p in parsed]
        for part in chunked(ids):
            for t in (
                Transcript.objects.filter(external_id__in=part)
                .select_for_update()
                .only("id", "external_id", "checksum")
            ):
                existing[t.external_id] = t
        for p in parsed:
            old = existing.get(p.external_id)
            if old is not None and old.checksum != p.checksum and not replace:
                errors.add(
                    p.where,
                    "id",
                    f"{p.external_id} was imported before with other turns "
                    f"(checksum {old.checksum[:12]}, now {p.checksum[:12]}); "
                    "import with replace to overwrite it",
                )
        if errors:
            return
        new = [p for p in parsed if p.external_id not in existing]
        changed = [
            p
            for p in parsed
            if p.external_id in existing and existing[p.external_id].checksum != p.checksum
        ]
        av_ids = _agent_versions(new + changed, self.av_ids)
        changed_ids = {p.external_id for p in changed}
        enriched = _enrich_unchanged(
            [p for p in parsed if p.external_id in existing and p.external_id not in changed_ids]
        )
        created = Transcript.objects.bulk_create(
            [
                Transcript(
                    external_id=p.external_id,
                    agent_version_id=av_ids[(p.agent, p.agent_version)],
                    checksum=p.checksum,
                    audio_url=p.audio_url,
                    language=p.language,
                    scenario=p.scenario,
                    tenant=p.tenant,
                    started_at=p.started_at,
                    metadata=p.metadata,
                )
                for p in new
            ],
            batch_size=1000,
        )
        pk_of = {t.external_id: t.pk for t in created}
        if changed:
            olds = []
            for p in changed:
                old = existing[p.external_id]
                old.agent_version_id = av_ids[(p.agent, p.agent_version)]
                for name in REPLACED:
                    setattr(old, name, getattr(p, name))
                olds.append(old)
                pk_of[p.external_id] = old.pk
            Transcript.objects.bulk_update(olds, ["agent_version", *REPLACED], batch_size=1000)
            old_pks = [t.pk for t in olds]
            _parts_forget(old_pks, result)
            Turn.objects.filter(transcript_id__in=old_pks).delete()
        result.created += len(new)
        result.replaced += len(changed)

        todo = new + changed
        rows = (
            (
                pk_of[p.external_id],
                i,
                t["speaker"],
                t["text"],
                t["start_ms"],
                t["end_ms"],
                t["asr_confidence"],
                t["phase"],
                json_text(t["tool_calls"]),
                t["tool_call_id"],
            )
            for p in todo
            for i, t in enumerate(p.turns)
        )
        written = copy_rows(
            Turn,
            TURN_COLUMNS,
            rows,
            total=sum(len(p.turns) for p in todo),
            progress=self._progress if self.progress else None,
        )
        self.turns_written += written
        result.details["turns"] += written
        # The parts of every line, unchanged calls too: a call imported before its decisions (or
        # before a kind that derives them) gets them now; the same ones again are a no-op.
        pks = [pk_of.get(p.external_id) or existing[p.external_id].pk for p in parsed]
        touched = _parts_write(parsed, pks, replace, errors, result)
        # A call whose turns are unchanged but whose parts or metadata are new counts as updated.
        updated = len((touched | enriched) - {pk_of[p.external_id] for p in todo})
        result.updated += updated
        result.unchanged += len(parsed) - len(new) - len(changed) - updated


def transcripts_import(
    *,
    lines: Iterable[str | bytes] = (),
    records: Iterable[tuple[str, Any]] | None = None,
    document: bool | None = None,
    source: str = "",
    replace: bool = False,
    agent: str | None = None,
    agent_version: str | None = None,
    progress: Progress | None = None,
    spelling: Spelling = COMMAND,
) -> ImportResult:
    """Import transcripts: JSON Lines, or one JSON document (one call, an array of calls, or a
    container such as a tau2-bench results document; `document` as json_records takes it), in
    the native shape or any registered format (evals.catalog.formats), or `records` already
    parsed ((where, object) pairs). The result's `formats` says, per format other than the
    native one, which fields were mapped and which kept as they came in the call's metadata.

    A known id with the same checksum is left alone (its metadata and recording link take what
    the import adds: a platform's later event about the same call); with a different checksum it
    is an error unless `replace`, which swaps in the new turns and deletes the verdicts (and,
    through them, the marks) made on the old ones. The parts other apps keep per call
    (evals.catalog.registry: a line's `decisions`, and those its timings imply) are stored for
    new and known calls alike.
    Nothing is written unless every line is valid.

    Streamed (bench/import_transcripts.py): calls are parsed and written CHUNK_CALLS (or
    CHUNK_TURNS turns) at a time, all in one transaction that a bad line anywhere rolls back;
    what is held beyond a chunk is each call's id and the agent versions' scopes.
    """
    errors = Errors(source)
    seen: dict[str, str] = {}
    given: ScopesGiven = {}
    parsers = {name: part.parser() for name, part in CALL_PARTS.items() if part.parser}
    reports: dict[str, dict] = {}
    result = ImportResult(
        kind="transcripts",
        details={"turns": 0, **{k: 0 for part in CALL_PARTS.values() for k in part.counts}},
        formats=reports,
    )

    def expanded():
        pairs = records if records is not None else json_records(lines, errors, document=document)
        for where, obj in pairs:
            try:
                yield from records_expand(where, obj)
            except Invalid as exc:
                errors.add(where, exc.field, exc.reason)

    def chunks() -> Iterator[list[ParsedTranscript]]:
        chunk: list[ParsedTranscript] = []
        turns = 0
        for where, obj in expanded():
            try:
                converted = record_convert(obj) if isinstance(obj, dict) else None
                if converted and converted.record is None:
                    _format_report(reports, converted)
                    continue
                record = converted.record if converted else obj
                defaults = converted.defaults if converted else {}
                p = _parse(record, where, agent, agent_version, defaults, spelling)
                p.parts = {name: parse(record, p.turns) for name, parse in parsers.items()}
            except Invalid as exc:
                errors.add(where, exc.field, exc.reason)
                continue
            if converted:
                _format_report(reports, converted)
            if p.external_id in seen:
                errors.add(
                    where,
                    "id",
                    f"{p.external_id} appears twice in this file (first at {seen[p.external_id]})",
                )
                continue
            seen[p.external_id] = where
            chunk.append(p)
            turns += len(p.turns)
            if len(chunk) >= CHUNK_CALLS or turns >= CHUNK_TURNS:
                yield chunk
                chunk, turns = [], 0
        if chunk:
            yield chunk

    with transaction.atomic():
        writer = _Writer(errors, result, replace, progress)
        for chunk in chunks():
            _scopes_given(chunk, given, errors)
            writer.add(chunk)
        errors.check()
        scopes = _scopes_check(given, errors, replace)
        errors.check()
        if scopes:
            result.details["agent_scopes"] = _scopes_store(scopes, replace)
        data_changed("calls")  # again once committed: the trigger's bump came before the commit
    logger.info("transcripts_imported", extra=result.log_extra(source))
    return result


def transcripts_defaults_missing(records: Iterable[Any]) -> set[str]:
    """Return which of `agent` and `agent_version` some of these records (a file's first ones,
    in any format) neither carry nor get from their format: the defaults an import must be
    given."""
    missing: set[str] = set()
    for where, obj in ((w, o) for r in records for w, o in _expand_quietly(r)):
        if not isinstance(obj, dict):
            continue
        try:
            converted = record_convert(obj)
        except Invalid:
            continue
        if converted is not None and converted.record is None:
            continue
        record = converted.record if converted else obj
        defaults = converted.defaults if converted else {}
        for name in ("agent", "agent_version"):
            if not (record.get(name) not in (None, "") or defaults.get(name)):
                missing.add(name)
    return missing


def _expand_quietly(obj: Any) -> Iterator[tuple[str, Any]]:
    try:
        yield from records_expand("preview", obj)
    except Invalid:
        return


def _transcripts_run(
    *,
    lines,
    source,
    document,
    progress,
    spelling,
    agent=None,
    agent_version=None,
    replace=False,
    **_,
) -> ImportResult:
    return transcripts_import(
        lines=lines,
        document=document,
        source=source,
        replace=replace,
        agent=agent,
        agent_version=agent_version,
        progress=progress,
        spelling=spelling,
    )


TRANSCRIPTS_KIND = ImportKind(
    name="transcripts",
    label="Transcripts",
    formats="JSON Lines, one call a line, or one JSON document: Docket's shape, OpenAI chat, "
    "trajectories, tau-bench and tau2-bench results, Vapi, Retell, ElevenLabs, OpenTelemetry",
    run=_transcripts_run,
    options=(
        ImportOption("agent", "Agent", help="for calls that name none", max_length=100),
        ImportOption("agent_version", "Agent version", help="for calls that name none"),
        ImportOption(
            "replace",
            "Replace calls whose turns changed",
            help="deletes the verdicts and marks made on their old turns",
            flag=True,
        ),
    ),
    missing=transcripts_defaults_missing,
    command="import_transcripts",
    api="api-transcripts-import",
    order=10,
)
