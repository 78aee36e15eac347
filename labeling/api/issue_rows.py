"""/api/v1/issue-rows/: list (the sheet's filters), create
(reviewers), triage (engineers, leads), CSV export."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import renderers, serializers, viewsets
from rest_framework import status as http
from rest_framework.decorators import action
from rest_framework.exceptions import NotAcceptable, ValidationError
from rest_framework.response import Response
from rest_framework.settings import api_settings

from core.api.pagination import limit_param
from core.permissions import api_permission
from evals.catalog.models import Transcript
from evals.rules.models import Rule, Severity
from labeling.models import IssueRow
from labeling.selectors import issue_rows as sel
from labeling.services import triage
from labeling.services.issue_rows import issue_row_create
from labeling.views.issues import csv_response


class CSVRenderer(renderers.BaseRenderer):
    """Lets `?format=csv` through content negotiation; the list streams the sheet itself."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, dict):  # an error (400, 401, 403): its one-line detail
            return str(data.get("detail", "")).encode()
        return str(data or "").encode()


class IssueRowSerializer(serializers.ModelSerializer):
    transcript = serializers.CharField(source="transcript.external_id")
    agent_version = serializers.CharField(source="transcript.agent_version.version")
    reporter = serializers.CharField(source="reporter.username")
    assignee = serializers.CharField(source="assignee.username", allow_null=True, default=None)
    rule = serializers.CharField(source="rule.rule_id", allow_null=True, default=None)
    rule_version = serializers.IntegerField(
        source="rule_version.number", allow_null=True, default=None
    )
    duplicate_of = serializers.IntegerField(
        source="duplicate_of.number", allow_null=True, default=None
    )
    call_url = serializers.SerializerMethodField()

    class Meta:
        model = IssueRow
        fields = [
            "number",
            "transcript",
            "agent_version",
            "turn",
            "what",
            "severity",
            "audio_only",
            "start_ms",
            "end_ms",
            "status",
            "outcome",
            "reporter",
            "assignee",
            "rule",
            "rule_version",
            "duplicate_of",
            "signal_request",
            "reason",
            "created_at",
            "updated_at",
            "call_url",
        ]

    def get_call_url(self, row) -> str:
        return sel.call_link(row)


class IssueRowDetailSerializer(IssueRowSerializer):
    next_steps = serializers.SerializerMethodField()
    history = serializers.SerializerMethodField()

    class Meta(IssueRowSerializer.Meta):
        fields = [*IssueRowSerializer.Meta.fields, "next_steps", "history"]

    def get_next_steps(self, row) -> list[dict]:
        return sel.issue_row_next_steps(row)

    def get_history(self, row) -> list[dict]:
        return [
            {"at": e.at, "actor": e.actor.get_username(), "kind": e.kind, "data": e.data}
            for e in sel.issue_row_events(row)
        ]


class IssueRowCreateSerializer(serializers.Serializer):
    transcript = serializers.CharField(max_length=200)
    turn = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)
    what = serializers.CharField()
    severity = serializers.ChoiceField(choices=Severity.choices)
    audio_only = serializers.BooleanField(default=False)
    start_ms = serializers.IntegerField(
        min_value=0, required=False, allow_null=True, default=None, help_text="Recording range."
    )
    end_ms = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)


class AssignSerializer(serializers.Serializer):
    assignee = serializers.CharField(
        allow_null=True, allow_blank=True, required=False, default=None
    )


class StatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=IssueRow.Status.choices)
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class DuplicateSerializer(serializers.Serializer):
    duplicate_of = serializers.IntegerField(min_value=1)
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField()


class CommentSerializer(serializers.Serializer):
    text = serializers.CharField()


class WriteRuleSerializer(serializers.Serializer):
    rule_id = serializers.CharField(required=False, help_text="Defaults to a guess from the row.")
    group = serializers.CharField(required=False, help_text="Defaults to a guess from the row.")
    text = serializers.CharField(required=False, help_text="Defaults to what the reviewer wrote.")
    severity = serializers.ChoiceField(choices=Severity.choices, required=False)
    safety = serializers.BooleanField(default=False)
    phase = serializers.CharField(required=False, allow_blank=True, default="")


class AddSignalSerializer(serializers.Serializer):
    rule = serializers.CharField(required=False, help_text="Link this existing detector rule.")
    detector = serializers.DictField(
        required=False, help_text='Create a detector rule: {"name": ..., params}.'
    )
    rule_id = serializers.CharField(required=False)
    group = serializers.CharField(required=False, help_text="Default: signals.")
    text = serializers.CharField(required=False)
    severity = serializers.ChoiceField(choices=Severity.choices, required=False)
    request = serializers.CharField(
        required=False, help_text="Ask for a detector that does not exist yet."
    )

    def validate(self, data):
        ways = [k for k in ("rule", "detector", "request") if data.get(k)]
        if len(ways) != 1:
            raise serializers.ValidationError(
                "Give exactly one of rule (link), detector (create) or request."
            )
        return data


class FixRuleSerializer(serializers.Serializer):
    rule = serializers.CharField(
        required=False, help_text="Defaults to the rule the row is linked to."
    )
    text = serializers.CharField()


FILTER_PARAMS = [
    OpenApiParameter(
        "status", str, many=True, description="new, triaged, in_progress, resolved, wont_fix"
    ),
    OpenApiParameter("severity", str, many=True, description="minor, major, critical"),
    OpenApiParameter(
        "outcome",
        str,
        many=True,
        description="untriaged, new_rule, new_signal, rule_fix, duplicate, wont_fix",
    ),
    OpenApiParameter("rule", str),
    OpenApiParameter("agent_version", str),
    OpenApiParameter("reporter", str),
    OpenApiParameter("assignee", str, description="a username, or none"),
    OpenApiParameter("since", str, description="YYYY-MM-DD"),
    OpenApiParameter("until", str, description="YYYY-MM-DD"),
    OpenApiParameter("audio_only", bool),
    OpenApiParameter("q", str, description="search in what happened"),
    OpenApiParameter("sort", str, enum=list(sel.SORTS)),
    OpenApiParameter("after", str, description="cursor"),
    OpenApiParameter("before", str, description="cursor"),
    OpenApiParameter(
        "limit", int, description="rows per page (default 50; above the API's maximum, clamped)"
    ),
    OpenApiParameter("format", str, enum=["json", "csv"]),
]


class IssueRowViewSet(viewsets.GenericViewSet):
    lookup_field = "number"
    lookup_value_regex = r"[0-9]+"
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]
    serializer_class = IssueRowSerializer
    queryset = IssueRow.objects.none()

    def get_renderers(self):
        # Only the list is a CSV (the sheet's export); a row or an action answers JSON.
        found = super().get_renderers()
        return found if self.action == "list" else [r for r in found if r.format != "csv"]

    def perform_content_negotiation(self, request, force=False):
        try:
            return super().perform_content_negotiation(request, force)
        except Http404:  # DRF's answer to a ?format= no renderer has
            raise NotAcceptable(
                "?format=csv is the sheet's export (GET /api/v1/issue-rows/); a row answers json"
            ) from None

    def get_permissions(self):
        needed = "review" if self.action == "create" else "triage"
        return [api_permission(needed)()]

    def get_object(self) -> IssueRow:
        try:
            return sel.issue_row_detail(int(self.kwargs["number"]))
        except IssueRow.DoesNotExist:
            raise Http404 from None

    def _triaged(self, row: IssueRow, code=http.HTTP_200_OK) -> Response:
        row = sel.issue_row_detail(row.number)
        return Response(
            IssueRowDetailSerializer(row, context=self.get_serializer_context()).data, status=code
        )

    @extend_schema(parameters=FILTER_PARAMS, responses=IssueRowSerializer(many=True))
    def list(self, request):
        """The sheet, filtered; keyset pages (`next`/`previous`
        carry cursors); `?format=csv` for the export."""
        filters = sel.issue_sheet_filters_parse(request.query_params)
        if request.accepted_renderer.format == "csv":
            return csv_response(filters, base_url=request.build_absolute_uri("/").rstrip("/"))
        page = sel.issue_sheet_page(
            filters=filters,
            after=request.query_params.get("after", ""),
            before=request.query_params.get("before", ""),
            size=limit_param(request, default=sel.PAGE_SIZE),
        )
        base = request.query_params.copy()
        for key in ("after", "before"):
            base.pop(key, None)

        def link(key, cursor):
            if not cursor:
                return None
            q = base.copy()
            q[key] = cursor
            return request.build_absolute_uri(f"{request.path}?{q.urlencode()}")

        return Response(
            {
                "count": page.total,
                "next": link("after", page.next_cursor),
                "previous": link("before", page.prev_cursor),
                "results": IssueRowSerializer(
                    page.rows, many=True, context=self.get_serializer_context()
                ).data,
            }
        )

    @extend_schema(request=IssueRowCreateSerializer, responses={201: IssueRowDetailSerializer})
    def create(self, request):
        """File an issue row (reviewers): the next sequential number is returned."""
        data = IssueRowCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        transcript = Transcript.objects.filter(external_id=v["transcript"]).first()
        if transcript is None:
            raise ValidationError({"transcript": f"no call {v['transcript']!r}"})
        row = issue_row_create(
            reporter=request.user,
            transcript=transcript,
            turn=v["turn"],
            what=v["what"],
            severity=v["severity"],
            audio_only=v["audio_only"],
            start_ms=v["start_ms"],
            end_ms=v["end_ms"],
        )
        return self._triaged(row, code=http.HTTP_201_CREATED)

    @extend_schema(responses=IssueRowDetailSerializer)
    def retrieve(self, request, number=None):
        """One row with its next steps and history."""
        return self._triaged(self.get_object())

    def _run(self, serializer_class, do):
        row = self.get_object()
        data = serializer_class(data=self.request.data)
        data.is_valid(raise_exception=True)
        do(row, data.validated_data)
        return self._triaged(row)

    @extend_schema(request=AssignSerializer, responses=IssueRowDetailSerializer)
    @action(detail=True, methods=["post"])
    def assign(self, request, number=None):
        def do(row, v):
            assignee = triage.assignee_resolve(v.get("assignee") or "")
            triage.issue_row_assign(row=row, actor=request.user, assignee=assignee)

        return self._run(AssignSerializer, do)

    @extend_schema(request=StatusSerializer, responses=IssueRowDetailSerializer)
    @action(detail=True, methods=["post"])
    def status(self, request, number=None):
        return self._run(
            StatusSerializer,
            lambda row, v: triage.issue_row_set_status(
                row=row, actor=request.user, status=v["status"], reason=v["reason"]
            ),
        )

    @extend_schema(request=DuplicateSerializer, responses=IssueRowDetailSerializer)
    @action(detail=True, methods=["post"])
    def duplicate(self, request, number=None):
        def do(row, v):
            target = triage.duplicate_target_resolve(v["duplicate_of"])
            triage.issue_row_mark_duplicate(
                row=row, actor=request.user, of=target, reason=v["reason"]
            )

        return self._run(DuplicateSerializer, do)

    @extend_schema(request=ReasonSerializer, responses=IssueRowDetailSerializer)
    @action(detail=True, methods=["post"], url_path="wont-fix")
    def wont_fix(self, request, number=None):
        return self._run(
            ReasonSerializer,
            lambda row, v: triage.issue_row_close_wont_fix(
                row=row, actor=request.user, reason=v["reason"]
            ),
        )

    @extend_schema(request=CommentSerializer, responses=IssueRowDetailSerializer)
    @action(detail=True, methods=["post"])
    def comment(self, request, number=None):
        return self._run(
            CommentSerializer,
            lambda row, v: triage.issue_row_comment(row=row, actor=request.user, text=v["text"]),
        )

    @extend_schema(request=WriteRuleSerializer, responses=IssueRowDetailSerializer)
    @action(detail=True, methods=["post"], url_path="write-rule")
    def write_rule(self, request, number=None):
        """Way 1: a draft rule, prefilled from the row for any field left out."""

        def do(row, v):
            prefill = sel.issue_row_rule_prefill(row)
            triage.issue_row_write_rule(
                row=row,
                actor=request.user,
                rule_id=v.get("rule_id") or prefill["rule_id"],
                group=v.get("group") or prefill["group"],
                text=v.get("text") or prefill["text"],
                severity=v.get("severity") or prefill["severity"],
                safety=v["safety"],
                phase=v["phase"],
            )

        return self._run(WriteRuleSerializer, do)

    @extend_schema(request=AddSignalSerializer, responses=IssueRowDetailSerializer)
    @action(detail=True, methods=["post"], url_path="add-signal")
    def add_signal(self, request, number=None):
        """Way 2: link a detector rule, create one (parameters validated), or record a request."""

        def do(row, v):
            way = "link" if v.get("rule") else "create" if v.get("detector") else "request"
            triage.issue_row_add_signal(
                row=row,
                actor=request.user,
                way=way,
                rule=v.get("rule", ""),
                detector=v.get("detector"),
                rule_id=v.get("rule_id", ""),
                group=v.get("group", ""),
                text=v.get("text", ""),
                severity=v.get("severity", ""),
                request=v.get("request", ""),
            )

        return self._run(AddSignalSerializer, do)

    @extend_schema(request=FixRuleSerializer, responses=IssueRowDetailSerializer)
    @action(detail=True, methods=["post"], url_path="fix-rule")
    def fix_rule(self, request, number=None):
        """Way 3: the rule gets version n+1 (a candidate) with the new text."""

        def do(row, v):
            rule = Rule.objects.filter(rule_id=v["rule"]).first() if v.get("rule") else row.rule
            if rule is None:
                raise triage.TriageError(
                    "rule", f"no rule {v['rule']!r}" if v.get("rule") else "required"
                )
            triage.issue_row_fix_rule(row=row, actor=request.user, rule=rule, text=v["text"])

        return self._run(FixRuleSerializer, do)
