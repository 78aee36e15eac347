"""What the apps above judging plug into it, each from its AppConfig.ready(); judging itself
names none of them.

- Item kinds: a kind of judge-run item besides the rule judge's LLM calls and the detectors
  (the conversation judge's whole-call item, the rule workbench's draft). It says which rule
  groups it judges, so the rule judge's planner leaves them to it; how it runs an item; what it
  stores beside the verdicts (or instead of them: a draft's verdicts are kept apart); and what an
  item that could not run at all comes to.
- Verdict hooks: called in the transaction that stores an item's verdicts (the classifiers keep
  the category of each verdict they wrote).
- Call page sections: parts of the call page another app renders (the conversation judge's score).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ItemKind:
    """A kind of judge-run item another app runs (JudgeRunItem.kind == `name`)."""

    name: str
    # run(item, rule versions, turns) -> the item's Outcome (evals.judging.services.runs)
    run: Callable[..., Any]
    rule_groups: tuple[str, ...] = ()  # rule groups judged by this kind, not by the rule judge
    # store(item, outcome.extra, judge) in the finishing transaction, when the outcome has extra;
    # it may return how many errored verdicts it stored (they count in the run's errors)
    store: Callable[..., int | None] | None = None
    # failed(item, rule versions, error) -> the Outcome of an item whose task gave up; None: every
    # rule version gets an errored verdict of the run's judge, as a rule judge's item does
    failed: Callable[..., Any] | None = None


ITEM_KINDS: dict[str, ItemKind] = {}
VERDICT_HOOKS: list[Callable[[int, dict, dict], Any]] = []
CALL_SECTIONS: list[Callable[[Any, Any], str]] = []


def item_kind_register(kind: ItemKind) -> None:
    """Let judge runs hold items of this kind."""
    ITEM_KINDS[kind.name] = kind


def judged_elsewhere(group: str) -> bool:
    """Whether the rules of `group` are judged by a registered item kind (not the rule judge)."""
    return any(group in kind.rule_groups for kind in ITEM_KINDS.values())


def verdict_hook_register(hook: Callable[[int, dict, dict], Any]) -> None:
    """Call hook(transcript id, {rule version id: verdict fields}, {rule version id: judge})
    after an item's verdicts are stored, in the same transaction."""
    if hook not in VERDICT_HOOKS:
        VERDICT_HOOKS.append(hook)


def call_section_register(render: Callable[[Any, Any], str]) -> None:
    """Add a section to the call page: render(request, transcript) returns its HTML ("" for
    none)."""
    if render not in CALL_SECTIONS:
        CALL_SECTIONS.append(render)
