"""Decision accuracy per kind version and agent version: the agent's choices against the
reviewers' answers (Decision.truth), the confusion matrix, and the gaps behind turn-taking."""

from collections import defaultdict
from itertools import pairwise

from django.db.models import F, Sum

from core import stats as metrics
from evals.catalog.models import AgentVersion
from evals.decisions.gate_metrics import DecisionFact
from evals.decisions.models import Decision, DecisionCell, DecisionKind, DecisionKindVersion
from evals.decisions.services.cells import GAP_EDGES


def _bin_labels(edges: list[int]) -> list[str]:
    labels = [f"< {edges[0]}"]
    labels += [f"{a}–{b}" for a, b in pairwise(edges)]
    return labels + [f"≥ {edges[-1]}"]


def decision_accuracy_table(*, kind: str = "", agent_version: str = "") -> list[dict]:
    """Return one row per (decision kind version, agent version) with decisions: counts,
    accuracy with its Wilson interval, the confusion matrix (rows: the agent's choice; columns:
    the reviewers' answer) and, where decisions carry gaps, the gap histogram by answer. Read
    from the decision cells (services/cells.py), a few rows whatever the number of decisions."""
    cells = DecisionCell.objects.all()
    if kind:
        cells = cells.filter(kind_version__kind__kind_id=kind)
    if agent_version:
        cells = cells.filter(agent_version__version=agent_version)
    groups: dict[tuple[int, int], dict] = {}
    gaps: dict[tuple[int, int], dict[str, list[int]]] = defaultdict(dict)
    for kv, av, choice, truth, b, n in (
        cells.values_list("kind_version", "agent_version", "choice", "truth", "gap_bin")
        .annotate(total=Sum("n"))
        .exclude(total=0)
        .values_list("kind_version", "agent_version", "choice", "truth", "gap_bin", "total")
        .order_by()
    ):
        g = groups.setdefault((kv, av), {"counts": {}, "decisions": 0})
        g["decisions"] += n
        if truth:
            g["counts"][(choice, truth)] = g["counts"].get((choice, truth), 0) + n
        if b >= 0:
            gaps[(kv, av)].setdefault(truth, [0] * (len(GAP_EDGES) + 1))[b] += n
    if not groups:
        return []
    versions = {
        v.pk: v
        for v in DecisionKindVersion.objects.filter(pk__in={k for k, _ in groups}).select_related(
            "kind"
        )
    }
    agents = {
        a.pk: a
        for a in AgentVersion.objects.filter(pk__in={a for _, a in groups}).select_related("agent")
    }
    rows = []
    for (kv, av), g in groups.items():
        version, agent = versions[kv], agents[av]
        counts = g["counts"]
        labeled = sum(counts.values())
        right = sum(n for (c, t), n in counts.items() if c == t)
        est = metrics.Estimate.of(right, labeled)
        answers = list(version.answers)
        matrix = metrics.confusion_matrix(counts, answers)
        order = answers + [a for a, _ in matrix if a not in answers]
        row = {
            "kind": version.kind.kind_id,
            "kind_version": version.number,
            "question": version.question,
            "answers": order,
            "agent": agent.agent.name,
            "agent_version": agent.version,
            "decisions": g["decisions"],
            "labeled": labeled,
            "right": right,
            "accuracy": est.value,
            "accuracy_ci": list(est.ci) if est.ci else None,
            "confusion": [{"choice": c, "answers": dict(zip(order, cells))} for c, cells in matrix],
            "errors": [
                {"choice": c, "answer": t, "n": n}
                for (c, t), n in sorted(counts.items(), key=lambda kv_: -kv_[1])
                if c != t
            ],
            "gaps": None,
        }
        by_truth = gaps.get((kv, av))
        if by_truth:
            series = {(t or "unlabeled"): bins for t, bins in by_truth.items()}
            row["gaps"] = {"bins": _bin_labels(GAP_EDGES), "by_answer": series}
        rows.append(row)
    rows.sort(key=lambda r: (r["kind"], r["kind_version"], r["agent"], r["agent_version"]))
    return rows


def decision_kinds_active() -> list[DecisionKind]:
    return list(DecisionKind.objects.filter(status=DecisionKind.Status.ACTIVE).order_by("kind_id"))


def decisions_wrong(*, kind: str = "", agent_version: str = "", limit: int = 12) -> list[Decision]:
    """Return the newest calls' decisions where the reviewers' answer is not the agent's choice."""
    qs = (
        Decision.objects.exclude(truth="")
        .exclude(truth=F("choice"))
        .select_related("transcript__agent_version", "kind")
        .order_by("-transcript__started_at", "transcript_id", "turn", "pk")
    )
    if kind:
        qs = qs.filter(kind__kind_id=kind)
    if agent_version:
        qs = qs.filter(transcript__agent_version__version=agent_version)
    return list(qs[:limit])


def decision_facts(transcript_ids: list[int], judge=None) -> dict[int, tuple[DecisionFact, ...]]:
    """transcript pk -> the agent's decisions on that call and the reviewers' answers (a gate
    source: the judge plays no part)."""
    out: dict[int, list[DecisionFact]] = {}
    for tid, kind, choice, truth, turn, pk in (
        Decision.objects.filter(transcript__in=transcript_ids)
        .order_by("transcript_id", "pk")
        .values_list("transcript_id", "kind__kind_id", "choice", "truth", "turn", "pk")
        .iterator(chunk_size=20000)
    ):
        out.setdefault(tid, []).append(DecisionFact(kind, choice, truth, turn, pk))
    return {tid: tuple(ds) for tid, ds in out.items()}


def decision_kind_names() -> list[str]:
    """The ids of the active decision kinds, for a gate metric that names one."""
    return [k.kind_id for k in decision_kinds_active()]
