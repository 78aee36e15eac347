"""Webhooks over HTTP: register URLs for events, and read each delivery: its attempts, the
status, time and length of each answer (never its text)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.parsing import whole_number
from core.permissions import api_permission
from evals.webhooks.events import WEBHOOK_EVENTS
from evals.webhooks.models import Webhook, WebhookDelivery
from evals.webhooks.services import webhook_create, webhook_get, webhook_update

MANAGE = [api_permission("manage_webhooks")]


class WebhookSerializer(serializers.ModelSerializer):
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WEBHOOK_EVENTS), allow_empty=False
    )
    secret = serializers.CharField(
        read_only=True, help_text="the HMAC-SHA256 key; shown to those who manage webhooks"
    )

    class Meta:
        model = Webhook
        fields = ["id", "url", "events", "description", "active", "secret", "created_by"]
        read_only_fields = ["id", "secret", "created_by"]


class WebhookCreateRequest(serializers.Serializer):
    url = serializers.CharField(max_length=2000)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WEBHOOK_EVENTS), allow_empty=False
    )
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)
    secret = serializers.CharField(
        max_length=200, min_length=16, required=False, help_text="default: 64 random hex digits"
    )


class WebhookUpdateRequest(serializers.Serializer):
    url = serializers.CharField(max_length=2000, required=False)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WEBHOOK_EVENTS), allow_empty=False, required=False
    )
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)
    active = serializers.BooleanField(required=False)


class AttemptSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    status = serializers.IntegerField(allow_null=True, help_text="HTTP status; null: no answer")
    error = serializers.CharField(allow_blank=True)
    ms = serializers.IntegerField()
    length = serializers.IntegerField(
        allow_null=True, required=False, help_text="bytes in the answer (up to 1 MiB); null: none"
    )


class WebhookDeliverySerializer(serializers.ModelSerializer):
    attempts = AttemptSerializer(many=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "uuid",
            "webhook",
            "event",
            "status",
            "payload",
            "attempts",
            "response_status",
            "response_length",
            "error",
            "created_at",
            "delivered_at",
        ]


class WebhookListCreate(generics.GenericAPIView):
    """GET: the registered webhooks. POST: register one for some events (manage_webhooks)."""

    permission_classes = MANAGE
    serializer_class = WebhookSerializer
    queryset = Webhook.objects.order_by("pk")

    @extend_schema(responses={200: WebhookSerializer(many=True)})
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(WebhookSerializer(page, many=True).data)

    @extend_schema(request=WebhookCreateRequest, responses={201: WebhookSerializer})
    def post(self, request):
        body = WebhookCreateRequest(data=request.data)
        body.is_valid(raise_exception=True)
        hook = webhook_create(**body.validated_data, by=request.user.get_username())
        return Response(WebhookSerializer(hook).data, status=status.HTTP_201_CREATED)


class WebhookDetail(generics.GenericAPIView):
    """GET one webhook; PATCH its url, events, description or active flag; DELETE it."""

    permission_classes = MANAGE
    serializer_class = WebhookSerializer

    @extend_schema(responses={200: WebhookSerializer})
    def get(self, request, pk: int):
        return Response(WebhookSerializer(webhook_get(pk)).data)

    @extend_schema(request=WebhookUpdateRequest, responses={200: WebhookSerializer})
    def patch(self, request, pk: int):
        hook = webhook_get(pk)
        body = WebhookUpdateRequest(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(WebhookSerializer(webhook_update(webhook=hook, **body.validated_data)).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk: int):
        webhook_get(pk).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookDeliveryList(generics.GenericAPIView):
    """Deliveries, newest first, each with its attempts and the status and length of the
    receiver's last answer (?webhook=&event=&status=)."""

    permission_classes = MANAGE
    serializer_class = WebhookDeliverySerializer

    def get_queryset(self):
        qs = WebhookDelivery.objects.order_by("-created_at", "-pk")
        params = self.request.query_params
        if params.get("status") and params["status"] not in WebhookDelivery.Status.values:
            raise ValidationError(
                {"status": f"must be one of {', '.join(WebhookDelivery.Status.values)}"}
            )
        if params.get("webhook"):
            qs = qs.filter(webhook_id=whole_number(params["webhook"], field="webhook", low=1))
        for name in ("event", "status"):
            if params.get(name):
                qs = qs.filter(**{name: params[name]})
        return qs

    @extend_schema(
        parameters=[
            OpenApiParameter("webhook", int),
            OpenApiParameter("event", str, enum=list(WEBHOOK_EVENTS)),
            OpenApiParameter("status", str, enum=WebhookDelivery.Status.values),
        ],
        responses={200: WebhookDeliverySerializer(many=True)},
    )
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(WebhookDeliverySerializer(page, many=True).data)
