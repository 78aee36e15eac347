"""/api/v1/rule-drafts/: the rule workbench over HTTP, with the page's services and permissions.

Make a draft (engineers and leads: edit_rules), see what a run would judge and cost, start one
(run_judge: 202, poll the draft), read the result, save it as the rule's next version
(edit_rules), and, for leads (promote), say whether it changes the rule's meaning.
"""

from decimal import Decimal

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework import status as http
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.schema import error_response
from core.errors import DomainError
from core.parsing import MAX_INT, MAX_INT32
from core.permissions import api_permission
from evals.judging.models import Judge
from evals.rules.models import Rule, RuleVersion
from evals.workbench.models import RuleDraft
from labeling.models import IssueRow
from labeling.selectors import workbench as sel
from labeling.services import workbench as svc


def _triple():
    return serializers.ListField(
        child=serializers.FloatField(),
        min_length=3,
        max_length=3,
        allow_null=True,
        help_text="[value, 95% low, 95% high]; null when undefined",
    )


class RawFiguresSerializer(serializers.Serializer):
    tp = serializers.IntegerField()
    fp = serializers.IntegerField()
    fn = serializers.IntegerField()
    tn = serializers.IntegerField()
    precision = _triple()
    recall = _triple()
    agreement = _triple()


class WorkbenchSideSerializer(serializers.Serializer):
    """One judge's figures on the compared calls against the reviewers' truth, weighted by
    1 / inclusion probability (Wilson intervals on Kish's effective n), with the raw ones."""

    precision = _triple()
    recall = _triple()
    agreement = _triple()
    effective_n = serializers.FloatField()
    weights = serializers.DictField(child=serializers.FloatField())
    raw = RawFiguresSerializer()


class AnswerSerializer(serializers.Serializer):
    flagged = serializers.BooleanField()
    turn = serializers.IntegerField(allow_null=True)
    rationale = serializers.CharField(allow_blank=True)


class FlipSerializer(serializers.Serializer):
    transcript = serializers.CharField()
    turn = serializers.IntegerField(allow_null=True)
    stratum = serializers.ChoiceField(choices=["disagreement", "rest"])
    now = serializers.ChoiceField(
        choices=["agrees", "disagrees", "unsettled"],
        help_text="with the reviewers' truth; unsettled: no truth to score (or not carried)",
    )
    current = AnswerSerializer(help_text="the base version's verdict")
    draft = AnswerSerializer()


class DraftRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    judge_run = serializers.IntegerField(allow_null=True, help_text="GET /api/v1/judge-runs/{id}/")
    status = serializers.CharField()
    stop_reason = serializers.CharField(allow_blank=True)
    finished = serializers.BooleanField()
    judge = serializers.CharField(allow_null=True, help_text="the judge of the draft")
    base_judge = serializers.CharField(
        help_text="the judge whose marked verdicts it is compared to"
    )
    judged_as_version = serializers.IntegerField()
    size = serializers.IntegerField()
    selection = serializers.DictField(help_text="strata sizes and the seed of the draw")
    calls = serializers.IntegerField()
    judged = serializers.IntegerField()
    errored = serializers.IntegerField()
    unsettled = serializers.IntegerField()
    compared = serializers.IntegerField()
    same = serializers.IntegerField(help_text="calls where the draft answers as the base version")
    calls_made = serializers.IntegerField()
    cache_hits = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=6, help_text="USD")
    carried = serializers.BooleanField(help_text="the base version's truth is carried")
    base_figures = WorkbenchSideSerializer(allow_null=True)
    draft_figures = WorkbenchSideSerializer(allow_null=True)
    now_agree = serializers.IntegerField()
    now_disagree = serializers.IntegerField()
    flips = FlipSerializer(many=True)


class DraftSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rule = serializers.CharField()
    base_version = serializers.IntegerField()
    base_rule_version_id = serializers.IntegerField()
    text = serializers.CharField()
    detector = serializers.DictField(allow_null=True)
    model = serializers.CharField(allow_null=True)
    prompt_version = serializers.CharField(allow_null=True)
    note = serializers.CharField(allow_blank=True)
    source = serializers.CharField(allow_blank=True)
    issue_row = serializers.IntegerField(allow_null=True)
    changes_meaning = serializers.BooleanField()
    meaning_reason = serializers.CharField(allow_blank=True)
    saved_as_version = serializers.IntegerField(allow_null=True)
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    run = DraftRunSerializer(allow_null=True, help_text="the newest run")


class DraftRequest(serializers.Serializer):
    rule_version = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_INT,
        help_text="the version whose marks it is checked against (its id)",
    )
    rule = serializers.CharField(
        required=False,
        max_length=200,
        help_text="a rule id: checked against its newest version with marks",
    )
    issue_row = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_INT32,
        help_text="the issue row it fixes: saving it triages the row",
    )
    text = serializers.CharField(required=False, allow_blank=True, max_length=10000)
    detector = serializers.JSONField(required=False, help_text="a detector rule's parameters")
    model = serializers.CharField(required=False, allow_blank=True, max_length=200)
    prompt_version = serializers.CharField(required=False, allow_blank=True, max_length=100)
    note = serializers.CharField(required=False, allow_blank=True, max_length=500)


class ChosenCallSerializer(serializers.Serializer):
    transcript = serializers.CharField()
    stratum = serializers.ChoiceField(choices=["disagreement", "rest"])
    p = serializers.FloatField(help_text="its inclusion probability in the workbench's draw")


class EstimateSerializer(serializers.Serializer):
    draft = serializers.IntegerField()
    base_version = serializers.IntegerField()
    base_judge = serializers.CharField(allow_null=True)
    marked_calls = serializers.IntegerField()
    calls = serializers.IntegerField()
    disagreements = serializers.IntegerField()
    disagreements_drawn = serializers.IntegerField()
    rest = serializers.IntegerField()
    rest_drawn = serializers.IntegerField()
    judge_calls = serializers.IntegerField(help_text="after cache hits")
    cache_hits = serializers.IntegerField()
    detector_checks = serializers.IntegerField()
    est_tokens_in = serializers.IntegerField()
    est_tokens_out = serializers.IntegerField()
    est_cost = serializers.DecimalField(max_digits=12, decimal_places=6, help_text="USD")
    cost_cap = serializers.DecimalField(max_digits=12, decimal_places=4, help_text="USD")
    over_cap = serializers.BooleanField()
    model = serializers.CharField(allow_null=True)
    prompt_version = serializers.CharField(allow_null=True)
    selection = ChosenCallSerializer(many=True, help_text="the calls, disagreements first")


class RunRequest(serializers.Serializer):
    size = serializers.IntegerField(required=False, help_text="calls to judge")
    judge = serializers.CharField(
        required=False, max_length=200, help_text="whose marked verdicts to compare to"
    )
    cost_cap = serializers.DecimalField(
        required=False, max_digits=12, decimal_places=4, min_value=Decimal(0)
    )


class MeaningRequest(serializers.Serializer):
    changes_meaning = serializers.BooleanField()
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500)


class SavedSerializer(serializers.Serializer):
    rule = serializers.CharField()
    version = serializers.IntegerField()
    rule_version_id = serializers.IntegerField()
    status = serializers.CharField()
    estimate = serializers.DictField(allow_null=True)


def _draft(pk: int) -> RuleDraft:
    draft = sel.draft_get(pk)
    if draft is None:
        raise NotFound("No such rule draft.")
    return draft


def _base(d: dict) -> RuleVersion:
    if d.get("rule_version") is not None:
        found = RuleVersion.objects.select_related("rule").filter(pk=d["rule_version"]).first()
        if found is None:
            raise DomainError(f"no rule version {d['rule_version']}", field="rule_version")
        return found
    if d.get("rule"):
        rule = Rule.objects.filter(rule_id=d["rule"]).first()
        base = sel.workbench_default_base(rule) if rule else None
        if base is None:
            raise DomainError(f"no rule {d['rule']!r} with a version", field="rule")
        return base
    raise DomainError("name the rule_version (or the rule) the draft fixes", field="rule_version")


class RuleDrafts(APIView):
    """GET: drafts, newest first (?rule=). POST: make a draft (201)."""

    permission_classes = [api_permission("edit_rules")]

    @extend_schema(
        parameters=[OpenApiParameter("rule", str, description="a rule id")],
        responses={200: DraftSerializer(many=True)},
    )
    def get(self, request):
        qs = RuleDraft.objects.select_related("rule", "base", "saved_as", "created_by")
        if request.query_params.get("rule"):
            qs = qs.filter(rule__rule_id=request.query_params["rule"])
        return Response([sel.workbench_draft_data(d) for d in qs.order_by("-created_at")[:100]])

    @extend_schema(request=DraftRequest, responses={201: DraftSerializer})
    def post(self, request):
        body = DraftRequest(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        row = None
        if d.get("issue_row") is not None:
            row = IssueRow.objects.select_related("rule").filter(number=d["issue_row"]).first()
            if row is None:
                raise DomainError(f"no issue row {d['issue_row']}", field="issue_row")
        draft = svc.workbench_draft_create(
            base=_base(d),
            text=d.get("text") if d.get("text") else None,
            detector=d.get("detector"),
            model=d.get("model", ""),
            prompt_version=d.get("prompt_version", ""),
            note=d.get("note", ""),
            row=row,
            source="" if row else "api",
            by=request.user,
        )
        return Response(sel.workbench_draft_data(draft), status=http.HTTP_201_CREATED)


class RuleDraftDetail(APIView):
    """GET: a draft with its newest run's progress and result (poll it while the run works)."""

    permission_classes = [api_permission("edit_rules")]

    @extend_schema(responses={200: DraftSerializer})
    def get(self, request, pk: int):
        return Response(sel.workbench_draft_data(_draft(pk)))


def _judge(name: str | None) -> Judge | None:
    if not name:
        return None
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        raise DomainError(f"no judge {name!r}", field="judge")
    return judge


class RuleDraftEstimate(APIView):
    """GET: which marked calls a run would judge and what it would cost; spends nothing."""

    permission_classes = [api_permission("edit_rules")]

    @extend_schema(
        parameters=[
            OpenApiParameter("size", int, description="calls to judge"),
            OpenApiParameter("judge", str, description="whose marked verdicts to compare to"),
        ],
        responses={200: EstimateSerializer},
    )
    def get(self, request, pk: int):
        draft = _draft(pk)
        est = sel.workbench_estimate(
            draft=draft,
            size=request.query_params.get("size"),
            judge=_judge(request.query_params.get("judge")),
        )
        return Response(est.as_dict())


class RuleDraftRuns(APIView):
    """POST: judge the draft through the judge runner (run_judge): 202 with the draft, whose
    `run` GET /api/v1/rule-drafts/{id}/ follows (also in `poll` and `Location`)."""

    permission_classes = [api_permission("run_judge")]

    @extend_schema(
        request=RunRequest,
        responses={202: OpenApiResponse(DraftSerializer, description="Started; poll `poll`.")},
    )
    def post(self, request, pk: int):
        draft = _draft(pk)
        body = RunRequest(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        svc.workbench_run_start(
            draft=draft,
            size=sel.workbench_size_clean(d.get("size")),
            judge=_judge(d.get("judge")),
            cost_cap=d.get("cost_cap"),
            by=request.user,
            background=True,
        )
        data = sel.workbench_draft_data(sel.draft_get(draft.pk))
        data["poll"] = request.build_absolute_uri(reverse("api-rule-draft", args=[draft.pk]))
        return Response(data, status=http.HTTP_202_ACCEPTED, headers={"Location": data["poll"]})


class RuleDraftSave(APIView):
    """POST: make the draft the rule's next version (a candidate), its workbench figures kept on
    it; 409 when it was saved already, is still judging, or changes nothing."""

    permission_classes = [api_permission("edit_rules")]

    @extend_schema(
        request=None,
        responses={201: SavedSerializer, 409: error_response("Saved already, or still judging.")},
    )
    def post(self, request, pk: int):
        version = svc.workbench_draft_save(draft=_draft(pk), by=request.user)
        return Response(
            {
                "rule": version.rule.rule_id,
                "version": version.number,
                "rule_version_id": version.pk,
                "status": version.status,
                "estimate": version.estimate,
            },
            status=http.HTTP_201_CREATED,
        )


class RuleDraftMeaning(APIView):
    """POST (leads): whether the draft changes the rule's meaning; if it does, the base version's
    truth is not carried to it (a reason is required)."""

    permission_classes = [api_permission("promote")]

    @extend_schema(request=MeaningRequest, responses={200: DraftSerializer})
    def post(self, request, pk: int):
        draft = _draft(pk)
        body = MeaningRequest(data=request.data)
        body.is_valid(raise_exception=True)
        svc.workbench_meaning_set(
            draft=draft,
            changes_meaning=body.validated_data["changes_meaning"],
            reason=body.validated_data.get("reason", ""),
            by=request.user,
        )
        return Response(sel.workbench_draft_data(get_object_or_404(RuleDraft, pk=pk)))
