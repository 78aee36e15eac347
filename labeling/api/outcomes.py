"""/api/v1/outcomes/ (the report, leads), /api/v1/outcome-ratings/ (rate a call, reviewers) and
/api/v1/outcome-questions/ (read: the console; set: those who edit rules)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework import status as http
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.permissions import api_permission
from evals.catalog.models import Transcript
from labeling.api.calibration import _interval
from labeling.models import RATING_MAX, RATING_MIN, OutcomeQuestion, OutcomeRating
from labeling.selectors.outcomes import outcome_agent, outcome_data, outcome_question
from labeling.services.outcomes import outcome_question_set, outcome_rate


class OutcomeSummarySerializer(serializers.Serializer):
    """Weighted figures of a set of rated calls (weights: 1 / inclusion probability)."""

    calls = serializers.IntegerField()
    ratings = serializers.IntegerField()
    outside_sample = serializers.IntegerField(help_text="rated outside the daily sample (weight 1)")
    mean = serializers.FloatField(allow_null=True, help_text="weighted mean rating")
    mean_ci = _interval()
    raw_mean = serializers.FloatField(allow_null=True)
    bad = serializers.IntegerField(help_text="calls rated bad_at_most or less")
    bad_share = serializers.FloatField(allow_null=True)
    bad_share_ci = _interval()
    effective_n = serializers.FloatField()


class OutcomeVersionSerializer(OutcomeSummarySerializer):
    version = serializers.CharField()


class OutcomePeriodSerializer(OutcomeVersionSerializer):
    period = serializers.DateField(help_text="the Monday of the week (or the day) of the calls")


class OutcomeSideSerializer(serializers.Serializer):
    mean = serializers.FloatField(allow_null=True)
    mean_ci = _interval()
    calls = serializers.IntegerField()


class PredictorSerializer(serializers.Serializer):
    source = serializers.CharField(help_text="what produced the check: LLM judge, detector, ...")
    check = serializers.CharField()
    fired = OutcomeSideSerializer()
    not_fired = OutcomeSideSerializer()
    difference = serializers.FloatField(allow_null=True, help_text="fired minus not fired")
    difference_ci = _interval()
    enough_calls = serializers.BooleanField()
    never_fired = serializers.BooleanField()
    worth_a_look = serializers.BooleanField()
    bad_fired = serializers.IntegerField()


class SaidSerializer(serializers.Serializer):
    rating = serializers.IntegerField()
    reason = serializers.CharField()
    key_factor = serializers.CharField()
    reviewer = serializers.CharField()


class BadCallSerializer(serializers.Serializer):
    transcript = serializers.CharField()
    version = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    rating = serializers.FloatField()
    issue_rows = serializers.IntegerField()
    ratings = SaidSerializer(many=True)


class OutcomeReportSerializer(serializers.Serializer):
    agent = serializers.CharField()
    question = serializers.CharField()
    question_text = serializers.CharField()
    by = serializers.ChoiceField(choices=["week", "day"])
    scale = serializers.ListField(child=serializers.IntegerField())
    bad_at_most = serializers.IntegerField()
    overall = OutcomeSummarySerializer()
    versions = OutcomeVersionSerializer(many=True)
    trend = OutcomePeriodSerializer(many=True)
    predictors = PredictorSerializer(many=True)
    bad_unflagged = BadCallSerializer(many=True, help_text="One page of them (50 at a time)")
    bad_unflagged_total = serializers.IntegerField()
    bad_page = serializers.IntegerField()
    bad_pages = serializers.IntegerField()


class Outcomes(APIView):
    """The outcome report of one agent and question: figures per agent version and week (or
    day), what predicts the outcome, and the bad calls nothing flagged."""

    permission_classes = [api_permission("view_calibration")]

    @extend_schema(
        parameters=[
            OpenApiParameter("agent", str, description="Agent name; may be left out with one"),
            OpenApiParameter("question", str, description="Question key; default the first"),
            OpenApiParameter("by", str, enum=["week", "day"]),
            OpenApiParameter("bad_page", int, description="Page of the bad calls nothing flagged"),
        ],
        responses={200: OutcomeReportSerializer},
    )
    def get(self, request):
        return Response(outcome_data(request.query_params))


class RatingInSerializer(serializers.Serializer):
    transcript = serializers.CharField(max_length=200)
    question = serializers.CharField(
        required=False, allow_blank=True, max_length=50, help_text="Default: the agent's first"
    )
    rating = serializers.IntegerField(min_value=RATING_MIN, max_value=RATING_MAX)
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Required for 1 and 2"
    )
    key_factor = serializers.CharField(required=False, allow_blank=True, default="")


class RatingSerializer(serializers.ModelSerializer):
    transcript = serializers.CharField(source="transcript.external_id")
    question = serializers.CharField(source="question.key")
    in_sample = serializers.SerializerMethodField()

    class Meta:
        model = OutcomeRating
        fields = [
            "id",
            "transcript",
            "question",
            "rating",
            "reason",
            "key_factor",
            "in_sample",
            "created_at",
            "updated_at",
        ]

    def get_in_sample(self, rating) -> bool:
        return rating.assignment_id is not None


class OutcomeRatings(APIView):
    permission_classes = [api_permission("review")]

    @extend_schema(
        request=RatingInSerializer,
        responses={200: RatingSerializer, 201: RatingSerializer},
        summary="Rate a call's outcome (idempotent: one rating per call, question and reviewer)",
    )
    def post(self, request):
        data = RatingInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        transcript = (
            Transcript.objects.select_related("agent_version__agent")
            .filter(external_id=d["transcript"])
            .first()
        )
        if transcript is None:
            raise ValidationError({"transcript": [f"No call with id {d['transcript']!r}."]})
        question = outcome_question(
            agent=transcript.agent_version.agent, key=d.get("question") or None
        )
        rating, created = outcome_rate(
            reviewer=request.user,
            transcript=transcript,
            rating=d["rating"],
            reason=d["reason"],
            key_factor=d["key_factor"],
            question=question if question.pk else None,
        )
        return Response(
            RatingSerializer(rating).data,
            status=http.HTTP_201_CREATED if created else http.HTTP_200_OK,
        )


class QuestionSerializer(serializers.ModelSerializer):
    agent = serializers.CharField(source="agent.name")

    class Meta:
        model = OutcomeQuestion
        fields = ["id", "agent", "key", "text", "position", "active"]


class QuestionInSerializer(serializers.Serializer):
    agent = serializers.CharField(max_length=100)
    key = serializers.CharField(max_length=50)
    text = serializers.CharField(max_length=300)
    position = serializers.IntegerField(required=False, min_value=0, max_value=32767)
    active = serializers.BooleanField(required=False, default=True)


class OutcomeQuestions(APIView):
    def get_permissions(self):
        return [api_permission("edit_rules" if self.request.method == "POST" else "view_console")()]

    @extend_schema(
        parameters=[OpenApiParameter("agent", str, description="Agent name")],
        responses={200: QuestionSerializer(many=True)},
        summary="The outcome questions of an agent (or of every agent)",
    )
    def get(self, request):
        questions = OutcomeQuestion.objects.select_related("agent")
        if request.query_params.get("agent"):
            questions = questions.filter(agent=outcome_agent(request.query_params["agent"]))
        return Response(QuestionSerializer(questions, many=True).data)

    @extend_schema(
        request=QuestionInSerializer,
        responses={200: QuestionSerializer, 201: QuestionSerializer},
        summary="Create or change an outcome question of an agent (idempotent by agent and key)",
    )
    def post(self, request):
        data = QuestionInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        agent = outcome_agent(d["agent"])
        question, created = outcome_question_set(
            agent=agent,
            key=d["key"],
            text=d["text"],
            position=d.get("position"),
            active=d["active"],
        )
        return Response(
            QuestionSerializer(question).data,
            status=http.HTTP_201_CREATED if created else http.HTTP_200_OK,
        )
