"""The agent under test: one chat-completions call with the agent version's instructions and the
row's tools, through the judge's shared client (same retries, timeouts and error wording)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import openai
from django.conf import settings
from openai.types.chat import ChatCompletion

from evals.evalruns.services.rubrics import Attempt, ToolCall
from evals.judging.client import JudgeSettings, chat_client
from evals.judging.prompt import estimate_tokens


class AgentCallError(Exception):
    """The agent's call failed after its retries; `tokens_*` are spent anyway."""

    def __init__(self, message: str, *, tokens_in: int = 0, tokens_out: int = 0):
        super().__init__(message)
        self.tokens_in = tokens_in
        self.tokens_out = tokens_out


@dataclass(frozen=True)
class AgentReply:
    attempt: Attempt
    tokens_in: int
    tokens_out: int


def agent_settings() -> JudgeSettings:
    return JudgeSettings(
        base_url=settings.EVAL_AGENT_BASE_URL or "",
        model=settings.EVAL_AGENT_MODEL,
        api_key=settings.EVAL_AGENT_API_KEY or "",
        timeout_s=settings.JUDGE_TIMEOUT_S,
        max_retries=settings.JUDGE_MAX_RETRIES,
    )


def agent_configured() -> bool:
    s = agent_settings()
    return bool(s.base_url or s.api_key)


def agent_messages(instructions: str, messages: list[dict]) -> list[dict]:
    """Return the agent's messages: its instructions as the system message, then the row's."""
    head = [{"role": "system", "content": instructions}] if instructions.strip() else []
    return head + [dict(m) for m in messages]


def openai_tools(tools: list[dict]) -> list[dict]:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description") or "",
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def agent_call(
    *, instructions: str, messages: list[dict], tools: list[dict], cfg: JudgeSettings | None = None
) -> AgentReply:
    """Ask the agent once; return its text and the tool calls it chose, in order."""
    cfg = cfg or agent_settings()
    sent = agent_messages(instructions, messages)
    extra = {"tools": openai_tools(tools)} if tools else {}
    try:
        response = chat_client(cfg).chat.completions.create(
            model=cfg.model, messages=sent, temperature=0, **extra
        )
    except openai.APITimeoutError:
        raise AgentCallError(f"agent timed out after {cfg.timeout_s:g} s") from None
    except openai.APIStatusError as exc:
        raise AgentCallError(
            f"agent server answered HTTP {exc.status_code} after {cfg.max_retries} retries"
        ) from None
    except openai.APIConnectionError:
        raise AgentCallError("could not connect to the agent server") from None
    except (openai.OpenAIError, ValueError) as exc:
        raise AgentCallError(f"agent call failed: {type(exc).__name__}") from None
    if not isinstance(response, ChatCompletion) or not response.choices:
        raise AgentCallError("the agent server's answer is not a chat completion")
    message = response.choices[0].message
    usage = response.usage
    tokens_in = (usage.prompt_tokens or 0) if usage else 0
    tokens_out = (usage.completion_tokens or 0) if usage else 0
    if not usage:
        tokens_in = estimate_tokens(sum(len(m["content"]) for m in sent))
        tokens_out = estimate_tokens(len(message.content or ""))
    calls = []
    for c in message.tool_calls or []:
        fn = getattr(c, "function", None)
        if fn is None:
            continue
        try:
            arguments = json.loads(fn.arguments) if fn.arguments else {}
        except json.JSONDecodeError:
            arguments = fn.arguments  # kept as text: some models emit arguments that are not JSON
        calls.append(ToolCall(name=fn.name, arguments=arguments))
    return AgentReply(
        attempt=Attempt(output=message.content or "", calls=tuple(calls)),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
    )
