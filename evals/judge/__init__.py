"""The LLM judge: prompts per rule group, the answer's JSON schema, and the chat-completions client.

One call grades one transcript against one rule group (rules sharing a group and a phase).
Nothing here touches the database: the judge runner (evals/services/judging.py) loads rows,
calls `judge_call`, and stores verdicts.
"""

from .client import JudgeAnswer, JudgeCallError, judge_call, judge_cost, judge_settings
from .prompt import (
    PROMPT_VERSION,
    PromptRule,
    answer_schema,
    answer_validate,
    build_messages,
    cache_key,
)

__all__ = [
    "PROMPT_VERSION",
    "JudgeAnswer",
    "JudgeCallError",
    "PromptRule",
    "answer_schema",
    "answer_validate",
    "build_messages",
    "cache_key",
    "judge_call",
    "judge_cost",
    "judge_settings",
]
