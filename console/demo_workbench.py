"""Demo step: a finished rule workbench on boundaries.no-hints, whose drafts fix the demo judge's
known misreadings of it (a rephrased question taken for a hint, a subtle hint missed).

`make run` has no model, so the judge's answers were recorded ahead in demo/workbench.json
(demo/workbench_answers.py writes it). They go into the judge's cache under the keys the runner
looks up (each call's checksum, the group's rule versions with the draft in place of the rule,
the model and the prompt version); then each draft runs through the ordinary judge runner, here in
this process, and every item is a cache hit. Idempotent: a draft already run is left alone.
"""

import json
from pathlib import Path

from django.contrib.auth import get_user_model

from evals.catalog.models import Transcript
from evals.judging.models import JudgeCacheEntry
from evals.judging.services.runs import item_cache_key, judge_run_item_execute
from evals.rules.models import Rule, RuleVersion
from evals.workbench.models import RuleDraft
from evals.workbench.services import draft_create, draft_siblings
from labeling.selectors.workbench import workbench_estimate
from labeling.services.workbench import workbench_run_start


def _record_answers(draft: RuleDraft, data: dict, answers: dict, transcript_ids) -> int:
    """Put the recorded answers of the draft's group on these calls in the judge's cache."""
    rule = draft.rule
    number = (rule.versions.order_by("-number").values_list("number", flat=True).first() or 0) + 1
    # The group as the runner will judge it: the other rules' current versions and the draft in
    # place of the rule, as the version number it would take.
    probe = RuleVersion(rule=rule, number=number, text=draft.text)
    group = [*draft_siblings(draft), probe]
    rules = {rv.rule.rule_id for rv in group}
    made = 0
    for t in Transcript.objects.filter(pk__in=transcript_ids).only("pk", "checksum", "external_id"):
        cid = t.external_id
        if cid not in answers:
            raise ValueError(f"workbench.json: no recorded answer on {cid} for draft {draft.pk}")
        answer = {**data["siblings"][cid], rule.rule_id: answers[cid]}
        missing = rules - set(answer)
        if missing:
            raise ValueError(f"workbench.json: {cid} has no answer for {', '.join(missing)}")
        key = item_cache_key(
            checksum=t.checksum,
            rule_versions=group,
            phase=rule.phase,
            model=draft.model,
            prompt_version=draft.prompt_version,
        )
        tokens_in, tokens_out = data["tokens"][cid]
        _, created = JudgeCacheEntry.objects.get_or_create(
            key=key,
            defaults={
                "model": draft.model,
                "prompt_version": draft.prompt_version,
                "answer": {rid: answer[rid] for rid in sorted(rules)},
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
            },
        )
        made += created
    return made


def demo_workbench_load(demo_dir: Path) -> str:
    """Make the demo's drafts, record their answers in the judge's cache and run them."""
    data = json.loads((demo_dir / "workbench.json").read_text(encoding="utf-8"))
    rule = Rule.objects.get(rule_id=data["rule"])
    base = rule.versions.select_related("rule").get(number=data["base_version"])
    by = get_user_model().objects.filter(username=data["by"]).first()
    lines = []
    for spec in data["drafts"]:
        draft = RuleDraft.objects.filter(rule=rule, text=spec["text"]).first()
        if draft is not None and draft.runs.exists():
            lines.append(f"draft {spec['name']} already run")
            continue
        draft = draft or draft_create(
            base=base,
            text=spec["text"],
            model=data["model"],
            prompt_version=data["prompt_version"],
            note=spec["note"],
            source="demo",
            by=by,
        )
        estimate = workbench_estimate(draft=draft)
        ids = [pk for pk, _, _ in estimate.selection.calls]
        _record_answers(draft, data, spec["answers"], ids)
        draft_run = workbench_run_start(draft=draft, by=by)
        # Judged here, inside load_demo's transaction: the queueing after commit finds none left.
        for item_id in draft_run.judge_run.items.order_by("pk").values_list("pk", flat=True):
            judge_run_item_execute(item_id=item_id)
        draft_run.judge_run.refresh_from_db()
        lines.append(
            f"draft {spec['name']} judged on {len(ids)} marked calls "
            f"({draft_run.judge_run.cache_hits} answers from the cache)"
        )
    return f"{rule.rule_id}: " + "; ".join(lines)
