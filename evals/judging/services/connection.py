"""The judge's connection: what it is set to (never the key) and a test that sends one real judge
prompt through the judge's client, with the answer, the latency and the cost.

The runtime classifiers' model has the same two (evals.classifiers.services), in these shapes.
"""

import logging
import time
from dataclasses import dataclass, field
from decimal import Decimal
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

from evals.judging import prompt as jp
from evals.judging.client import JudgeCallError, judge_call, judge_cost, judge_settings
from evals.rules.detectors import TurnView

logger = logging.getLogger(__name__)

OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Connection:
    """Where a model is and how it is called, from the settings; the key is only said to be set."""

    name: str  # "judge" or "classifier model"
    model: str
    base_url: str  # as configured, without any user:password part
    key_set: bool
    timeout_s: float
    retries: int
    response_format: str
    price: tuple[float, float] | None  # USD per 1,000 tokens in and out; None: no price known
    variables: dict[str, str] = field(default_factory=dict)  # what sets each field
    notes: list[str] = field(default_factory=list)

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.key_set)

    @property
    def server(self) -> str:
        """The server the client calls: the base URL, OpenAI's with only a key, or none."""
        if self.base_url:
            return self.base_url
        return OPENAI_URL if self.key_set else ""


@dataclass(frozen=True)
class ConnectionCheck:
    """One test call through a connection: what came back, how long it took and what it cost."""

    ok: bool
    model: str
    latency_ms: float
    answer: str = ""  # the model's answer, in one line
    expected: str = ""  # what a right answer says
    as_expected: bool | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Decimal = Decimal(0)
    priced: bool = False
    error: str = ""
    notes: list[str] = field(default_factory=list)


def url_shown(url: str) -> str:
    """Return a base URL fit to show: a user:password part (a credential) is left out."""
    if not url:
        return ""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def model_price(model: str) -> tuple[float, float] | None:
    """Return the model's price per 1,000 tokens in and out (JUDGE_PRICES), or None."""
    price = settings.JUDGE_PRICES.get(model)
    return (float(price[0]), float(price[1])) if price else None


def judge_connection() -> Connection:
    """Return the judge's connection as the settings make it."""
    cfg = judge_settings()
    return Connection(
        name="judge",
        model=cfg.model,
        base_url=url_shown(cfg.base_url),
        key_set=bool(cfg.api_key),
        timeout_s=cfg.timeout_s,
        retries=cfg.max_retries,
        response_format=cfg.response_format,
        price=model_price(cfg.model),
        variables={
            "model": "JUDGE_MODEL",
            "base_url": "JUDGE_BASE_URL",
            "key": "JUDGE_API_KEY",
            "timeout_s": "JUDGE_TIMEOUT_S",
            "retries": "JUDGE_MAX_RETRIES",
            "response_format": "JUDGE_RESPONSE_FORMAT",
            "price": "JUDGE_PRICE_IN_PER_1K, JUDGE_PRICE_OUT_PER_1K (or JUDGE_PRICES)",
        },
        notes=[
            (
                f"A judge run stops at its cost cap, ${settings.JUDGE_COST_CAP_USD:g} by default "
                "(JUDGE_COST_CAP_USD)."
            )
        ],
    )


# The test: a three-turn call against one rule the agent plainly breaks at turn 2, so the answer
# shows whether the model follows the judge's prompt, not only whether the server answers.
SAMPLE_RULE = jp.PromptRule(
    rule_id="asking.one-question",
    version=1,
    text="Ask one question per turn. A short clarifier of the same question is still one question.",
    severity="major",
)
SAMPLE_TURNS = [
    TurnView(0, "agent", "Hi Dana, thanks for making time today. Are you ready to start?"),
    TurnView(1, "user", "Yes, ready when you are."),
    TurnView(2, "agent", "What does your current role involve, and why are you looking to leave?"),
    TurnView(3, "user", "I run the payments platform team, and I want to work on search."),
]
SAMPLE_EXPECTED = "flagged at turn 2 (two questions in one turn)"


def judge_connection_test() -> ConnectionCheck:
    """Send one real judge prompt (SAMPLE_TURNS against SAMPLE_RULE) through the judge's client
    with its own settings, retries and schema; return the answer, the latency and the cost."""
    cfg = judge_settings()
    messages = jp.build_messages([SAMPLE_RULE], SAMPLE_TURNS)
    schema = jp.answer_schema([SAMPLE_RULE.rule_id], jp.agent_turn_indices(SAMPLE_TURNS))
    start = time.perf_counter()
    try:
        answer = judge_call(messages, schema, cfg=cfg)
    except JudgeCallError as exc:
        check = ConnectionCheck(
            ok=False,
            model=cfg.model,
            latency_ms=(time.perf_counter() - start) * 1000,
            expected=SAMPLE_EXPECTED,
            tokens_in=exc.tokens_in,
            tokens_out=exc.tokens_out,
            cost=judge_cost(cfg.model, exc.tokens_in, exc.tokens_out),
            priced=model_price(cfg.model) is not None,
            error=str(exc),
        )
    else:
        v = answer.verdicts[SAMPLE_RULE.rule_id]
        said = (
            f"flagged at turn {', '.join(map(str, v['turns']))}" if v["flagged"] else "not flagged"
        )
        check = ConnectionCheck(
            ok=True,
            model=cfg.model,
            latency_ms=(time.perf_counter() - start) * 1000,
            answer=f"{said} ({v['severity'] or 'no severity'}, confidence "
            f"{v['confidence']}): {v['rationale']}",
            expected=SAMPLE_EXPECTED,
            as_expected=bool(v["flagged"] and v["turns"] == [2]),
            tokens_in=answer.tokens_in,
            tokens_out=answer.tokens_out,
            cost=judge_cost(cfg.model, answer.tokens_in, answer.tokens_out),
            priced=model_price(cfg.model) is not None,
        )
    logger.info(
        "judge_connection.tested",
        extra={"ok": check.ok, "model": check.model, "latency_ms": round(check.latency_ms)},
    )
    return check
