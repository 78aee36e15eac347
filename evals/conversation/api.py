"""The conversation judge over HTTP: start a run (202, then follow it at /judge-runs/{id}/), read
the scores per call and the figures per agent version."""

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.api.runs import RunListCreate
from core.permissions import api_permission
from evals.catalog.selectors import agent_version_resolve
from evals.conversation.models import ConversationScore
from evals.conversation.selectors import conversation_versions
from evals.conversation.services import conversation_judge_create
from evals.judging.api.runs import (
    JudgeRunDetailSerializer,
    JudgeRunPlanSerializer,
    JudgeRunRequest,
    _payload,
)
from evals.judging.selectors.runs import judge_run_get, judge_run_list, judge_run_summary
from evals.judging.services.runs import JudgeRunPlan


class ConversationRunRequest(JudgeRunRequest):
    """A judge run's request without rules: the conversation judge has its own two checks."""

    rules = None
    detectors_only = None


# Lowest score first, errored scores last, then in the order calls were imported: the index
# conversation_score_order, so a page never sorts every score (156 ms at 50,000 scores).
SCORE_LIST_ORDER = ("error", "score", "transcript_id", "judge_id")


@extend_schema_view(
    get=extend_schema(
        operation_id="conversation_runs_list",
        responses={200: JudgeRunDetailSerializer(many=True)},
    ),
    post=extend_schema(
        operation_id="conversation_runs_create",
        request=ConversationRunRequest,
        responses={
            202: OpenApiResponse(JudgeRunDetailSerializer, description="Started; poll `poll`."),
            200: JudgeRunPlanSerializer,
        },
    ),
)
class ConversationRunList(RunListCreate):
    """GET: recent conversation judge runs, newest first. POST: start one (needs run_judge): 202
    with the run, which GET /api/v1/judge-runs/{id}/ follows; with dry_run, 200 with the plan."""

    serializer_class = JudgeRunDetailSerializer
    request_serializer = ConversationRunRequest
    plan_type = JudgeRunPlan
    poll_name = "api-judge-run"

    def get_queryset(self):
        return judge_run_list().filter(params__conversation=True)

    def summary(self, run) -> dict:
        return judge_run_summary(run)

    def detail(self, run, request) -> dict:
        return _payload(judge_run_get(run.pk), request)

    def start(self, d: dict, request):
        return conversation_judge_create(
            transcript_ids=d.get("transcripts") or None,
            agent_version=d.get("agent_version") or None,
            dry_run=d["dry_run"],
            cost_cap=d.get("cost_cap"),
            started_by=request.user.get_username(),
            background=True,
        )


class FindingSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="phase_missing, persona_shift, repeated_ground, ...")
    check = serializers.CharField(help_text="the rule it counts against")
    turns = serializers.ListField(child=serializers.IntegerField())
    note = serializers.CharField()


class ConversationScoreSerializer(serializers.ModelSerializer):
    transcript = serializers.CharField(source="transcript.external_id")
    agent = serializers.CharField(source="transcript.agent_version.agent.name")
    agent_version = serializers.CharField(source="transcript.agent_version.version")
    judge = serializers.CharField(source="judge.name")
    findings = FindingSerializer(many=True)
    plan = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = ConversationScore
        fields = [
            "id",
            "transcript",
            "agent",
            "agent_version",
            "judge",
            "judge_run",
            "score",
            "reason",
            "findings",
            "plan",
            "error",
            "created_at",
        ]


@extend_schema(
    parameters=[
        OpenApiParameter("transcript", str, description="a call id"),
        OpenApiParameter("agent_version", str, description="VERSION or AGENT:VERSION"),
        OpenApiParameter("judge", str, description="e.g. gpt-4o-mini/conversation-v1"),
        OpenApiParameter(
            "with_findings", str, description="yes: only calls with findings; no: only without"
        ),
    ]
)
class ConversationScoreList(generics.ListAPIView):
    """Conversation judge scores, one per (call, judge), lowest score first."""

    permission_classes = [api_permission("view_console")]
    serializer_class = ConversationScoreSerializer

    def get_queryset(self):
        qs = ConversationScore.objects.select_related(
            "transcript__agent_version__agent", "judge"
        ).order_by(*SCORE_LIST_ORDER)
        p = self.request.query_params
        if p.get("transcript"):
            qs = qs.filter(transcript__external_id=p["transcript"])
        if p.get("agent_version"):
            qs = qs.filter(transcript__agent_version=agent_version_resolve(p["agent_version"]))
        if p.get("judge"):
            qs = qs.filter(judge__name=p["judge"])
        flag = p.get("with_findings", "").lower()
        if flag in ("yes", "true", "1"):
            qs = qs.exclude(findings=[])
        elif flag in ("no", "false", "0"):
            qs = qs.filter(findings=[])
        elif flag:
            raise ValidationError({"with_findings": "yes or no (also true/false, 1/0)"})
        return qs


class VersionSerializer(serializers.Serializer):
    agent = serializers.CharField()
    version = serializers.CharField()
    judge = serializers.CharField()
    calls = serializers.IntegerField(help_text="calls with a score")
    errored = serializers.IntegerField(help_text="calls whose judgement failed (not counted)")
    mean = serializers.FloatField(allow_null=True, help_text="mean 1-10 score")
    interval = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="95% interval of the mean"
    )
    flagged_calls = serializers.IntegerField(help_text="calls with at least one finding")
    finding_counts = serializers.DictField(child=serializers.IntegerField())


class ConversationVersionList(generics.GenericAPIView):
    """The conversation judge's figures per agent version and conversation judge."""

    permission_classes = [api_permission("view_console")]
    serializer_class = VersionSerializer
    pagination_class = None

    @extend_schema(responses={200: VersionSerializer(many=True)})
    def get(self, request):
        rows = [
            {
                **r.__dict__,
                "interval": list(r.interval) if r.interval else None,
            }
            for r in conversation_versions()
        ]
        return Response(VersionSerializer(rows, many=True).data)
