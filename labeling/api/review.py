"""/api/v1/ queue, marks and samples: the same services the review page uses."""

from datetime import date

from django.db.models import Count, Q
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework import status as http
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.schema import error_response
from core.parsing import MAX_INT32
from core.permissions import api_permission
from evals.catalog.models import Transcript
from evals.judging.api.browse import TurnSerializer
from evals.judging.models import Verdict
from labeling.models import Assignment, DailySample, Mark, SampleItem
from labeling.selectors.queue import ReviewQueue, review_page_data
from labeling.selectors.sampling import samples_with_item_counts
from labeling.services.marks import mark_rest_right, mark_set
from labeling.services.queue import assignment_finish, assignment_skip, sample_claim_next
from labeling.services.sampling import daily_sample_make


class MyMarkSerializer(serializers.Serializer):
    correct = serializers.BooleanField()
    note = serializers.CharField()


class ReviewVerdictSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rule = serializers.CharField(source="rule_version.rule.rule_id")
    rule_version = serializers.IntegerField(source="rule_version.number")
    rule_text = serializers.CharField(source="rule_version.text")
    judge = serializers.CharField(source="judge.name")
    flagged = serializers.BooleanField()
    turn = serializers.IntegerField(allow_null=True)
    turns = serializers.JSONField()
    severity = serializers.CharField()
    rationale = serializers.CharField()
    confidence = serializers.IntegerField(allow_null=True)
    error = serializers.CharField()
    my_mark = MyMarkSerializer(
        allow_null=True, help_text="Your own mark only; others' marks are never shown."
    )


class AssignmentSerializer(serializers.ModelSerializer):
    transcript = serializers.CharField(source="item.transcript.external_id")
    sample_day = serializers.DateField(source="item.sample.day")
    reason = serializers.CharField(source="item.reason")
    inclusion_probability = serializers.FloatField(source="item.inclusion_probability")

    class Meta:
        model = Assignment
        fields = [
            "id",
            "transcript",
            "sample_day",
            "reason",
            "inclusion_probability",
            "claimed_at",
            "lease_expires_at",
            "finished_at",
            "version",
        ]
        extra_kwargs = {
            "version": {
                "help_text": "Moves on with every change to your marks on the call and when it "
                "is finished or skipped. Send it back with a mark, finish, skip or "
                "mark-rest-right to be refused (409 conflict) if the call changed since: "
                "another tab, window or client finished it or changed a mark."
            }
        }


class ClaimedTranscriptSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="the id the call was imported with")
    agent = serializers.CharField()
    agent_version = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    audio_url = serializers.CharField(help_text="the recording; empty when there is none")
    language = serializers.CharField()
    scenario = serializers.CharField()
    turns = TurnSerializer(many=True)


class ClaimedCallSerializer(serializers.Serializer):
    assignment = AssignmentSerializer()
    transcript = ClaimedTranscriptSerializer()
    verdicts = ReviewVerdictSerializer(many=True)


def _claimed_call(assignment: Assignment, reviewer) -> dict:
    transcript = assignment.item.transcript
    page = review_page_data(reviewer=reviewer, transcript=transcript, assignment=assignment)
    verdicts = page.top_verdicts + [v for t in page.turns for v in t.verdicts_here]
    return {
        "assignment": AssignmentSerializer(assignment).data,
        "transcript": {
            "id": transcript.external_id,
            "agent": transcript.agent_version.agent.name,
            "agent_version": transcript.agent_version.version,
            "started_at": transcript.started_at,
            "audio_url": transcript.audio_url,
            "language": transcript.language,
            "scenario": transcript.scenario,
            "turns": TurnSerializer(page.turns, many=True).data,
        },
        "verdicts": ReviewVerdictSerializer(verdicts, many=True).data,
    }


class QueueChoiceSerializer(serializers.Serializer):
    queue = serializers.CharField(
        required=False,
        default="all",
        help_text='Which calls: "all", "flagged", "group:<name>" or "rule:<id>" (calls where '
        "the judge flagged something, a rule of that group, or that rule).",
    )


class QueueNext(APIView):
    permission_classes = [api_permission("review")]

    @extend_schema(
        request=QueueChoiceSerializer,
        responses={
            200: ClaimedCallSerializer,
            204: OpenApiResponse(description="Nothing left to review."),
        },
        summary="Claim the next call (or get the one you hold) with its turns and verdicts",
    )
    def post(self, request):
        data = QueueChoiceSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        queue = ReviewQueue.parse(data.validated_data["queue"])
        assignment = sample_claim_next(reviewer=request.user, queue=queue)
        if assignment is None:
            return Response(status=http.HTTP_204_NO_CONTENT)
        assignment = Assignment.objects.select_related(
            "item__transcript__agent_version__agent", "item__sample"
        ).get(pk=assignment.pk)
        return Response(_claimed_call(assignment, request.user))


CHANGED = error_response(
    "The call changed since the `version` sent (another tab, window or client finished it or "
    "changed a mark): nothing was done."
)
VERSION_HELP = (
    "Optional: the version of the call you last read (the assignment's `version`); when the "
    "call changed since, nothing is done and the answer is 409 conflict."
)


class TranscriptRefSerializer(serializers.Serializer):
    transcript = serializers.CharField(help_text="The call's id (external id).")
    version = serializers.IntegerField(required=False, min_value=1, help_text=VERSION_HELP)


def _transcript(value: str) -> Transcript:
    transcript = Transcript.objects.filter(external_id=value).first()
    if transcript is None:
        raise ValidationError({"transcript": [f"No call with id {value!r}."]})
    return transcript


def _held_call_action(request, action) -> Response:
    """Run a queue service (finish or skip) on the call named in the body; answer the assignment."""
    data = TranscriptRefSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    assignment = action(
        reviewer=request.user,
        transcript=_transcript(data.validated_data["transcript"]),
        version=data.validated_data.get("version"),
    )
    return Response(AssignmentSerializer(assignment).data)


class QueueFinish(APIView):
    permission_classes = [api_permission("review")]

    @extend_schema(
        request=TranscriptRefSerializer,
        responses={200: AssignmentSerializer, 409: CHANGED},
        summary="Finish the held call once every verdict on it carries your mark",
    )
    def post(self, request):
        return _held_call_action(request, assignment_finish)


class QueueSkip(APIView):
    permission_classes = [api_permission("review")]

    @extend_schema(
        request=TranscriptRefSerializer,
        responses={200: AssignmentSerializer, 409: CHANGED},
        summary="Give the held call back to the queue for someone else",
    )
    def post(self, request):
        return _held_call_action(request, assignment_skip)


class MarkedRestSerializer(serializers.Serializer):
    marked = serializers.ListField(child=serializers.IntegerField(), help_text="Verdict ids.")


class QueueMarkRestRight(APIView):
    permission_classes = [api_permission("review")]

    @extend_schema(
        request=TranscriptRefSerializer,
        responses={200: MarkedRestSerializer, 409: CHANGED},
        summary="Mark right every unflagged verdict on the call you have not marked "
        "(refused while a flagged one lacks your mark)",
    )
    def post(self, request):
        data = TranscriptRefSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ids = mark_rest_right(
            reviewer=request.user,
            transcript=_transcript(data.validated_data["transcript"]),
            version=data.validated_data.get("version"),
        )
        return Response({"marked": ids})


class MarkInSerializer(serializers.Serializer):
    verdict = serializers.IntegerField()
    correct = serializers.BooleanField()
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    version = serializers.IntegerField(required=False, min_value=1, help_text=VERSION_HELP)


class MarkSerializer(serializers.ModelSerializer):
    in_sample = serializers.SerializerMethodField()
    version = serializers.IntegerField(
        source="assignment.version",
        allow_null=True,
        read_only=True,
        help_text="The call's version after this mark (null outside the sample): send it with "
        "the next change.",
    )

    class Meta:
        model = Mark
        fields = [
            "id",
            "verdict",
            "correct",
            "note",
            "assignment",
            "in_sample",
            "source",
            "version",
            "created_at",
            "updated_at",
        ]

    def get_in_sample(self, mark) -> bool:
        return mark.assignment_id is not None


class Marks(APIView):
    permission_classes = [api_permission("review")]

    @extend_schema(
        request=MarkInSerializer,
        responses={200: MarkSerializer, 201: MarkSerializer, 409: CHANGED},
        summary="Mark a verdict right or wrong (idempotent: one mark per verdict and reviewer)",
    )
    def post(self, request):
        data = MarkInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        verdict = Verdict.objects.filter(pk=data.validated_data["verdict"]).first()
        if verdict is None:
            raise ValidationError(
                {"verdict": [f"No verdict with id {data.validated_data['verdict']}."]}
            )
        mark, created = mark_set(
            reviewer=request.user,
            verdict=verdict,
            correct=data.validated_data["correct"],
            note=data.validated_data["note"],
            version=data.validated_data.get("version"),
        )
        return Response(
            MarkSerializer(mark).data, status=http.HTTP_201_CREATED if created else http.HTTP_200_OK
        )


class SampleItemSerializer(serializers.ModelSerializer):
    transcript = serializers.CharField(source="transcript.external_id")
    reviews_done = serializers.IntegerField(read_only=True)

    class Meta:
        model = SampleItem
        fields = [
            "transcript",
            "reason",
            "inclusion_probability",
            "reviews_needed",
            "reviews_done",
            "created_at",
        ]


class DailySampleSerializer(serializers.ModelSerializer):
    items = serializers.SerializerMethodField()

    class Meta:
        model = DailySample
        fields = ["day", "size", "params", "created_at", "items"]

    def get_items(self, sample) -> list[dict]:
        items = (
            sample.items.select_related("transcript")
            .annotate(
                reviews_done=Count("assignments", filter=Q(assignments__finished_at__isnull=False))
            )
            .order_by("pk")
        )
        return SampleItemSerializer(items, many=True).data


class DailySampleBriefSerializer(serializers.ModelSerializer):
    items = serializers.IntegerField(source="n_items", help_text="number of calls in the sample")

    class Meta:
        model = DailySample
        fields = ["day", "size", "params", "created_at", "items"]


class MakeSampleSerializer(serializers.Serializer):
    day = serializers.DateField(required=False, help_text="Default: today.")
    size = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_INT32, help_text="Default: DOCKET_SAMPLE_SIZE."
    )


class SampleToday(APIView):
    permission_classes = [api_permission("review")]

    @extend_schema(
        parameters=[OpenApiParameter("day", str, description="YYYY-MM-DD; default today")],
        responses={200: DailySampleSerializer, 404: error_response("No sample drawn that day.")},
        summary="A day's sample (today by default) and its items",
    )
    def get(self, request):
        raw = request.query_params.get("day")
        try:
            day = date.fromisoformat(raw) if raw else timezone.localdate()
        except ValueError:
            raise ValidationError({"day": [f"Expected YYYY-MM-DD, got {raw!r}."]}) from None
        sample = get_object_or_404(DailySample, day=day)
        return Response(DailySampleSerializer(sample).data)


class Samples(ListAPIView):
    serializer_class = DailySampleBriefSerializer
    # Each listed sample's count read from its few delta rows (labeling.services.sample_counts),
    # not from its items: the page costs the same however many calls each sample holds.
    queryset = samples_with_item_counts(DailySample.objects.all()).order_by("-day")

    def get_permissions(self):
        return [api_permission("manage_sample" if self.request.method == "POST" else "review")()]

    @extend_schema(
        request=MakeSampleSerializer,
        responses={201: DailySampleSerializer, 200: DailySampleSerializer},
        summary="Draw a day's sample (leads); drawing a day twice returns the same sample",
    )
    def post(self, request):
        data = MakeSampleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        day = data.validated_data.get("day") or timezone.localdate()
        sample, created = daily_sample_make(day=day, size=data.validated_data.get("size"))
        return Response(
            DailySampleSerializer(sample).data,
            status=http.HTTP_201_CREATED if created else http.HTTP_200_OK,
        )
