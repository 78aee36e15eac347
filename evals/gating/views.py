"""Pages for golden sets, gates, gate runs and their
history. Thin: services decide, selectors read."""

import re

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from core.permissions import require
from evals.catalog.models import AgentVersion
from evals.gating import decision as gates
from evals.gating import selectors as sel
from evals.gating import services as gating
from evals.gating.models import Gate, GateMetric, GateRun
from evals.gating.output import evidence_text, fmt, threshold_text
from evals.rules.models import Rule


class RunGateForm(forms.Form):
    candidate = forms.ModelChoiceField(
        queryset=AgentVersion.objects.none(), label="Candidate version"
    )
    baseline = forms.ModelChoiceField(
        queryset=AgentVersion.objects.none(),
        required=False,
        label="Baseline",
        empty_label="last passing version",
    )

    def __init__(self, *args, gate: Gate | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        # The page offers the gate's own agent's versions; a posted one of another agent reaches
        # the service, whose one rule refuses it with the reason (as the API and command do).
        qs = (
            sel.gate_candidates(gate)
            if gate is not None
            else AgentVersion.objects.select_related("agent").order_by("agent__name", "-version")
        )
        self.fields["candidate"].queryset = qs
        self.fields["baseline"].queryset = qs


class MetricAddForm(forms.Form):
    kind = forms.ChoiceField()
    rule = forms.ModelChoiceField(
        queryset=Rule.objects.filter(status=Rule.Status.ACTIVE),
        required=False,
        to_field_name="rule_id",
        empty_label="—",
    )
    group = forms.CharField(required=False, max_length=100)
    measure = forms.ChoiceField(required=False)
    limit = forms.FloatField(required=False, label="Max, min or tolerance", min_value=0)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        kinds = gates.METRIC_KINDS.values()
        self.fields["kind"].choices = [(k.name, k.title) for k in kinds]
        options = dict.fromkeys(o for k in kinds for o in k.options)
        # A kind that names something of its own layer (a decision kind) takes it here too.
        for k in kinds:
            if k.names is not None:
                options.update(dict.fromkeys(k.names()))
        self.fields["measure"].choices = [("", "—")] + [(o, o) for o in options]

    def metric_data(self) -> dict:
        """The metric in its YAML shape: the form's fields under the names its kind takes."""
        d = self.cleaned_data
        kind = gates.METRIC_KINDS[d["kind"]]
        data = {"kind": kind.name}
        if d.get("rule"):
            data["rule"] = d["rule"].rule_id
        if d.get("group"):
            data["group"] = d["group"]
        for key in ("measure", "score", kind.named):
            if key and key in kind.fields and d.get("measure"):
                data[key] = d["measure"]
        limit = gating.metric_limit_field(kind.name)
        if limit and d.get("limit") is not None:
            data[limit] = d["limit"]
        return data


def _who(request) -> str:
    return request.user.get_username()


def _metric_rows(gate: Gate) -> list[dict]:
    rows = []
    for m in gate.metrics.all():
        kind = gates.METRIC_KINDS.get(m.kind)
        limit = gating.metric_limit_field(m.kind)
        rows.append(
            {
                "m": m,
                "label": gating.metric_specs_one(m).label,
                "title": kind.title if kind else m.kind,
                "fixed": kind.fixed_threshold if kind else None,
                "editable": limit is not None,
                "field": "tolerance" if limit == "tolerance" else "threshold",
                "limit_name": limit or "max",
                "limit": fmt(m.tolerance if limit == "tolerance" else m.threshold),
            }
        )
    return rows


@require("run_gate")
@require_GET
def gate_index(request):
    return render(
        request,
        "gating/index.html",
        {
            "rows": sel.gates_with_last_run(),
            "golden_sets": sel.golden_sets_latest(),
        },
    )


@require("run_gate")
@require_GET
def gate_detail(request, name):
    gate = sel.gate_with_metrics(name)
    if gate is None:
        raise Http404("No gate with that name.")
    rules, versions = gating.promoted_rules()
    return render(
        request,
        "gating/gate.html",
        {
            "gate": gate,
            "metric_rows": _metric_rows(gate),
            "runs": sel.gate_runs_recent(gate),
            "run_form": RunGateForm(gate=gate),
            "promoted": sorted(versions.values(), key=lambda rv: (rv.rule.group, rv.rule.rule_id)),
            "unpromoted": sum(1 for r in rules.values() if r.version is None),
            "add_form": MetricAddForm(),
            **sel.gate_page_choices(gate),
        },
    )


@require("manage_gates")
@require_POST
def gate_metric_edit(request, name, pk):
    metric = get_object_or_404(
        GateMetric.objects.select_related("gate", "rule"), pk=pk, gate__name=name
    )
    raw = request.POST.get("limit", "").strip()
    error = ""
    try:
        value = float(raw)
    except ValueError:
        error = f"{raw!r} is not a number"
    else:
        try:
            gating.gate_metric_update(
                metric=metric, threshold=value, tolerance=value, by=_who(request)
            )
        except gating.GateConfigInvalid as e:
            error = str(e).split(": ", 1)[-1]
    metric.refresh_from_db()
    if request.htmx:
        row = next(r for r in _metric_rows(metric.gate) if r["m"].pk == metric.pk)
        return render(
            request,
            "gating/gate.html#metric-row",
            {
                "row": row,
                "gate": metric.gate,
                "error": error,
                "saved": not error,
                "perms_edit": True,
            },
        )  # 200 even on a bad value: htmx swaps only 2xx, and the row shows the error
    if error:
        messages.error(request, f"Metric not saved: {error}")
    else:
        messages.success(request, "Metric saved.")
    return redirect("gate-detail", name=name)


@require("manage_gates")
@require_POST
def gate_metric_remove(request, name, pk):
    metric = get_object_or_404(GateMetric, pk=pk, gate__name=name)
    try:
        gating.gate_metric_delete(metric=metric, by=_who(request))
        messages.success(request, "Metric removed.")
    except gating.GateConfigInvalid as e:
        messages.error(request, str(e))
    return redirect("gate-detail", name=name)


@require("manage_gates")
@require_POST
def gate_metric_add(request, name):
    gate = get_object_or_404(Gate, name=name)
    form = MetricAddForm(request.POST)
    if not form.is_valid():
        messages.error(
            request,
            "Metric not added: " + "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()),
        )
        return redirect("gate-detail", name=name)
    try:
        gating.gate_metric_add(gate=gate, data=form.metric_data(), by=_who(request))
        messages.success(request, "Metric added.")
    except gating.GateConfigInvalid as e:
        messages.error(request, f"Metric not added: {e}")
    return redirect("gate-detail", name=name)


@require("manage_gates")
@require_POST
def gate_settings(request, name):
    gate = get_object_or_404(Gate, name=name)
    try:
        gating.gate_settings_update(
            gate=gate,
            golden_set_id=request.POST.get("golden_set") or None,
            judge_id=request.POST.get("judge") or None,
            by=_who(request),
        )
        messages.success(request, "Gate settings saved.")
    except gating.GateConfigInvalid as e:
        messages.error(request, f"Settings not saved: {e}")
    return redirect("gate-detail", name=name)


@require("run_gate")
@require_POST
def gate_run_start(request, name):
    gate = get_object_or_404(Gate.objects.select_related("golden_set", "judge"), name=name)
    form = RunGateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Pick a candidate version.")
        return redirect("gate-detail", name=name)
    cand, base = form.cleaned_data["candidate"], form.cleaned_data.get("baseline")
    try:
        # Queued: the run's page shows it pending and polls until it is decided.
        run = gating.gate_run_start(gate=gate, candidate=cand, baseline=base, by=_who(request))
    except gating.GateCannotRun as e:
        messages.error(request, f"The gate could not run: {e}")
        return redirect("gate-detail", name=name)
    return redirect("gate-run-detail", pk=run.pk)


PROBLEM_CALL = re.compile(r"call (\S+) \(")


def _problem_call(problem: str) -> str:
    """The call a missing-data problem names ("call X (scenario): no verdict ..."), or ""."""
    found = PROBLEM_CALL.search(problem)
    return found.group(1) if found else ""


def _metric_view(m: dict, run: GateRun, verdicts: dict) -> dict:
    """A metric of a run, with links to the calls, turns and verdicts behind it."""
    evidence = []
    for e in m.get("evidence", []):
        rule, _, version = (e.get("rule") or "").rpartition(" v")
        v = verdicts.get(e.get("verdict"))
        evidence.append({**e, "rule_id": rule, "version": version, "verdict_obj": v})
    rules = []
    cited = {e.get("rule") for e in m.get("evidence", []) if e.get("rule")}
    for label in m.get("rules", []):
        if label not in cited:
            continue
        rule, _, version = label.rpartition(" v")
        rules.append({"label": label, "rule": rule, "version": version})
    problems = [{"text": p, "call": _problem_call(p)} for p in m.get("problems", [])]
    return {
        **m,
        "evidence_rows": evidence,
        "rule_links": rules,
        "problem_rows": problems,
        "value_text": fmt(m.get("value")),
        "baseline_text": fmt(m.get("baseline")),
        "limit_text": threshold_text(m),
        "evidence_summary": evidence_text(m),
    }


@require("run_gate")
@require_GET
def gate_run_detail(request, pk):
    run = get_object_or_404(
        GateRun.objects.select_related(
            "gate", "candidate__agent", "baseline", "golden_set", "judge"
        ),
        pk=pk,
    )
    payload = sel.gate_run_payload(run)
    verdicts = sel.gate_run_verdicts(run)
    metrics = [_metric_view(m, run, verdicts) for m in payload["metrics"]]
    finished = run.status not in (GateRun.Status.PENDING, GateRun.Status.RUNNING)
    context = {
        "run": run,
        "p": payload,
        "metrics": metrics,
        "failed": [m for m in metrics if not m["passed"]],
        "finished": finished,
        "poll_s": max(1, round(settings.GATE_POLL_S)),
    }
    if request.htmx:
        # The run body polls while the run is pending or running; 286 stops it once decided.
        html = render_to_string("gating/run.html#run-body", context, request=request)
        return HttpResponseStopPolling(html) if finished else HttpResponse(html)
    return render(request, "gating/run.html", context)


@require("run_gate")
@require_GET
def gate_history(request, name):
    gate = sel.gate_with_metrics(name)
    if gate is None:
        raise Http404("No gate with that name.")
    groups = sel.gate_history(gate)
    return render(request, "gating/history.html", {"gate": gate, "groups": groups})


@require("run_gate")
@require_GET
def golden_set_detail(request, name, version=None):
    versions = sel.golden_set_versions(name)
    if not versions:
        raise Http404("No golden set with that name.")
    gs = (
        versions[0]
        if version is None
        else next((v for v in versions if v.version == version), None)
    )
    if gs is None:
        raise Http404("No such version of the golden set.")
    members = list(gs.members.select_related("transcript"))
    current = gating.golden_checksum(gating.golden_set_member_specs(gs))
    calls = sel.golden_set_calls(gs)
    return render(
        request,
        "gating/golden_set.html",
        {
            "gs": gs,
            "versions": versions,
            "intact": current == gs.checksum,
            "members": [{"m": m, "calls": calls.get(m.scenario, [])} for m in members],
            "current_checksum": current,
        },
    )
