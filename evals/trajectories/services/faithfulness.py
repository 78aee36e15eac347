"""Faithfulness of a trajectory's output: the judge splits the agent's words into atomic claims
and says which the tool results or the context support. One call per trajectory through the
judge's client and settings, cached like the judge (JudgeCacheEntry: same output, same evidence,
same model and prompt version, same answer). An error is returned, never scored as zero.
"""

from __future__ import annotations

import hashlib
import json
import logging

import jsonschema
import openai
from django.db import IntegrityError, transaction

from core import parsing
from evals.catalog.models import Transcript, Turn
from evals.judging.client import _client, judge_configured, judge_settings
from evals.judging.models import JudgeCacheEntry

logger = logging.getLogger(__name__)

PROMPT_VERSION = "faithfulness-v1"
OUTPUT_MAX = 6000
EVIDENCE_ITEM_MAX = 1500
EVIDENCE_MAX = 24000
CLAIM_MAX = 300

SYSTEM_PROMPT = """\
You check whether what an AI agent told a user is supported by the evidence it had.
Split the agent's OUTPUT into atomic factual claims: one checkable statement each (a price, a
date, a status, a policy, what was done). Leave out greetings, questions, offers and promises.
For each claim say whether the EVIDENCE (tool results [T..], the user's words [U..] and the
system instructions [S..]) supports it, and cite the evidence ids that do. A claim the evidence
does not state or imply is unsupported, even if it may be true.
Answer with JSON only, matching the schema you were given."""

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["claims"],
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["claim", "supported", "evidence"],
                "properties": {
                    "claim": {"type": "string"},
                    "supported": {"type": "boolean"},
                    "evidence": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def output_and_evidence(turns: list[Turn]) -> tuple[str, str]:
    """The agent's words (its text turns) and the numbered evidence it had."""
    output = "\n".join(t.text.strip() for t in turns if t.speaker == "agent" and t.text.strip())
    items = []
    prefix = {"tool": "T", "user": "U", "system": "S"}
    for t in turns:
        if t.speaker in prefix and t.text.strip():
            items.append(
                f"[{prefix[t.speaker]}{t.index}] {_clip(t.text.strip(), EVIDENCE_ITEM_MAX)}"
            )
    return _clip(output, OUTPUT_MAX), _clip("\n".join(items), EVIDENCE_MAX)


def messages_for(output: str, evidence: str) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"EVIDENCE:\n{evidence or '(none)'}\n\nOUTPUT:\n{output}"},
    ]


def claims_cache_key(*, output: str, evidence: str, model: str) -> str:
    payload = json.dumps(
        {"output": output, "evidence": evidence, "model": model, "prompt": PROMPT_VERSION},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def claims_validate(content: str | None) -> list[dict]:
    """The claims of an answer, clipped; ValueError naming what is wrong."""
    try:
        data = parsing.json_value((content or "").strip() or "null")
    except parsing.ParseProblem as e:
        raise ValueError(f"answer is not JSON ({e.reason})") from None
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data))
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path) or "answer"
        raise ValueError(f"answer does not match the schema at {where}")
    return [
        {
            "claim": _clip(" ".join(c["claim"].split()), CLAIM_MAX),
            "supported": c["supported"],
            "evidence": [str(e)[:20] for e in c["evidence"][:10]],
        }
        for c in data["claims"]
    ]


def faithfulness_claims(t: Transcript, turns: list[Turn]) -> tuple[list[dict] | None, str]:
    """(claims, "") for a trajectory, from the cache or one judge call; ([], "") when the agent
    said nothing; (None, error) when the judge is missing or failed (excluded, never zero)."""
    output, evidence = output_and_evidence(turns)
    if not output:
        return [], ""
    cfg = judge_settings()
    key = claims_cache_key(output=output, evidence=evidence, model=cfg.model)
    hit = JudgeCacheEntry.objects.filter(key=key).first()
    if hit is not None:  # a cached answer needs no judge
        return hit.answer["claims"], ""
    if not judge_configured():
        return None, "no judge configured (JUDGE_BASE_URL or JUDGE_API_KEY)"
    try:
        response = _client(cfg).chat.completions.create(
            model=cfg.model,
            messages=messages_for(output, evidence),
            temperature=0,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "claims", "strict": True, "schema": SCHEMA},
            },
        )
        claims = claims_validate(response.choices[0].message.content)
    except (openai.OpenAIError, ValueError, AttributeError, IndexError, TypeError) as e:
        logger.warning(
            "faithfulness_call_failed", extra={"transcript": t.pk, "error": type(e).__name__}
        )
        return None, f"judge call failed: {type(e).__name__}"
    usage = getattr(response, "usage", None)
    try:
        with transaction.atomic():
            JudgeCacheEntry.objects.create(
                key=key,
                model=cfg.model,
                prompt_version=PROMPT_VERSION,
                answer={"claims": claims},
                tokens_in=(usage.prompt_tokens or 0) if usage else 0,
                tokens_out=(usage.completion_tokens or 0) if usage else 0,
            )
    except IntegrityError:
        pass  # another run cached the same answer meanwhile
    return claims, ""
