"""The layers above gating that feed gate metrics of their own, registered from their
AppConfig.ready(); gating names none of them.

A gate source gathers its layer's facts for a gate run (per golden-set call, or per agent
version), says which judge's work counts, and starts that judge on what the calls lack. Its
metric kinds, pure, register in evals.gating.decision.METRIC_KINDS and read the facts under the
source's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GateSource:
    name: str  # the key of its facts in CallFacts.layers and MetricInput.*_layers
    kinds: tuple[str, ...] = ()  # the metric kinds that read its facts
    # Rule groups whose verdicts the gate takes from this source's judge (not the gate's judge):
    # the conversation checks, judged by the conversation judge over the whole call.
    rule_groups: tuple[str, ...] = ()
    # judge(transcripts) -> the Judge whose facts and verdicts count on these calls, or None
    judge: Callable[[list], Any] | None = None
    # start_missing(transcripts=, by=) -> a JudgeRun judging what the calls lack, or None
    start_missing: Callable[..., Any] | None = None
    # call_facts(transcript pks, judge) -> {transcript pk: the layer's fact about that call}
    call_facts: Callable[[list[int], Any], dict[int, Any]] | None = None
    # version_facts(agent version) -> the layer's facts about that version (its eval runs)
    version_facts: Callable[[Any], Any] | None = None


GATE_SOURCES: dict[str, GateSource] = {}


def gate_source_register(source: GateSource) -> None:
    """Have gate runs gather this layer's facts when a gate reads them."""
    GATE_SOURCES[source.name] = source


def gate_sources_used(kinds, groups) -> list[GateSource]:
    """The sources a gate run needs: those whose metric kinds the gate has, or whose rule groups
    it counts."""
    kinds, groups = set(kinds), set(groups)
    return [s for s in GATE_SOURCES.values() if kinds & set(s.kinds) or groups & set(s.rule_groups)]
