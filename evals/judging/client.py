"""The chat-completions client: one judge call, its tokens and its cost."""

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import openai
from django.conf import settings
from openai.types.chat import ChatCompletion

from evals.judging.prompt import (
    AnswerInvalid,
    answer_validate,
    estimate_tokens,
    response_format,
    schema_instructions,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JudgeSettings:
    base_url: str
    model: str
    api_key: str
    timeout_s: float
    max_retries: int
    response_format: str = "json_schema"


@dataclass(frozen=True)
class JudgeAnswer:
    """A parsed, validated answer ({rule_id: verdict fields} for the conduct judge, or what the
    call's `validate` returns), with the call's token counts."""

    verdicts: Any
    tokens_in: int
    tokens_out: int


NON_JSON = "the server answered non-JSON"


class JudgeCallError(Exception):
    """The call failed after its retries, or its answer
    could not be used. `tokens_*` are spent anyway."""

    def __init__(self, message: str, *, tokens_in: int = 0, tokens_out: int = 0):
        super().__init__(message)
        self.tokens_in = tokens_in
        self.tokens_out = tokens_out


def judge_settings() -> JudgeSettings:
    return JudgeSettings(
        base_url=settings.JUDGE_BASE_URL or "",
        model=settings.JUDGE_MODEL,
        api_key=settings.JUDGE_API_KEY or "",
        timeout_s=settings.JUDGE_TIMEOUT_S,
        max_retries=settings.JUDGE_MAX_RETRIES,
        response_format=getattr(settings, "JUDGE_RESPONSE_FORMAT", "json_schema"),
    )


def judge_configured() -> bool:
    """Whether a judge server is configured: a base URL (any OpenAI-compatible server) or an
    API key (OpenAI itself). Without either every LLM call would fail as an errored verdict."""
    s = judge_settings()
    return bool(s.base_url or s.api_key)


def judge_cost(model: str, tokens_in: int, tokens_out: int) -> Decimal:
    """Return the cost in USD of a call, from settings.JUDGE_PRICES (unknown models cost 0)."""
    price_in, price_out = settings.JUDGE_PRICES.get(model, (0, 0))
    cost = Decimal(str(price_in)) * tokens_in / 1000 + Decimal(str(price_out)) * tokens_out / 1000
    return cost.quantize(Decimal("0.000001"))


_clients: dict[tuple, openai.OpenAI] = {}
_clients_lock = threading.Lock()


def _client(cfg: JudgeSettings) -> openai.OpenAI:
    """Return a shared client per configuration: building one (its TLS context) costs ~100 ms."""
    key = (cfg.base_url, cfg.api_key, cfg.timeout_s, cfg.max_retries)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            # The client retries connection errors, timeouts, 429 and 5xx with exponential backoff.
            client = _clients[key] = openai.OpenAI(
                base_url=cfg.base_url or None,
                # Local servers (vLLM, Ollama, llama.cpp) accept any key; the client insists on one.
                api_key=cfg.api_key or "not-needed",
                timeout=cfg.timeout_s,
                max_retries=cfg.max_retries,
            )
        return client


def chat_client(cfg: JudgeSettings) -> openai.OpenAI:
    """Return the shared OpenAI-compatible client for a configuration (retries, timeouts)."""
    return _client(cfg)


def judge_call(
    messages: list[dict],
    schema: dict,
    *,
    cfg: JudgeSettings | None = None,
    validate: Callable[[str | None, dict], Any] = answer_validate,
) -> JudgeAnswer:
    """Send one judge request with the answer's schema as response_format; return the answer
    `validate` made of it (the conduct judge's verdicts by default)."""
    cfg = cfg or judge_settings()
    extra = {}
    if cfg.response_format == "json_schema":
        extra["response_format"] = response_format(schema)
    else:
        # The server will not enforce the schema: spell it
        # out in the prompt (validated below either way).
        messages = [
            *messages[:-1],
            {**messages[-1], "content": messages[-1]["content"] + schema_instructions(schema)},
        ]
        if cfg.response_format == "json_object":
            extra["response_format"] = {"type": "json_object"}
    try:
        response = _client(cfg).chat.completions.create(
            model=cfg.model,
            messages=messages,
            temperature=0,
            **extra,
        )
    except openai.APITimeoutError:
        raise JudgeCallError(
            f"timed out after {cfg.timeout_s:g} s and {cfg.max_retries} retries"
        ) from None
    except openai.APIStatusError as exc:
        raise JudgeCallError(
            f"server answered HTTP {exc.status_code} after {cfg.max_retries} retries"
        ) from None
    except openai.APIConnectionError:
        raise JudgeCallError(
            f"could not connect to the judge server after {cfg.max_retries} retries"
        ) from None
    except openai.OpenAIError as exc:
        raise JudgeCallError(f"judge call failed: {type(exc).__name__}") from None
    except ValueError:  # a body labelled JSON that does not parse
        raise JudgeCallError(NON_JSON + " (a body labelled JSON that does not parse)") from None
    if not isinstance(response, ChatCompletion):
        # The client hands back the text of a body that is not JSON (a proxy's error page).
        raise JudgeCallError(NON_JSON)
    try:
        return _answer(response, messages, schema, validate)
    except (AttributeError, IndexError, TypeError):  # JSON, but not a chat completion's shape
        raise JudgeCallError("the server's answer is not a chat completion") from None


def _answer(
    response: ChatCompletion, messages: list[dict], schema: dict, validate: Callable
) -> JudgeAnswer:
    usage = response.usage
    tokens_in = (usage.prompt_tokens or 0) if usage else 0
    tokens_out = (usage.completion_tokens or 0) if usage else 0
    if not usage:
        # Some servers leave usage out: estimate it, so costs and the cost cap still count.
        tokens_in = estimate_tokens(sum(len(m["content"]) for m in messages))
        content = response.choices[0].message.content if response.choices else ""
        tokens_out = estimate_tokens(len(content or ""))
    if not response.choices:
        raise JudgeCallError("answer has no choices", tokens_in=tokens_in, tokens_out=tokens_out)
    choice = response.choices[0]
    try:
        verdicts = validate(choice.message.content, schema)
    except AnswerInvalid as exc:
        reason = str(exc)
        if choice.finish_reason == "length":
            reason += " (the answer was cut off at the token limit)"
        raise JudgeCallError(reason, tokens_in=tokens_in, tokens_out=tokens_out) from None
    return JudgeAnswer(verdicts=verdicts, tokens_in=tokens_in, tokens_out=tokens_out)
