from django.urls import path

from evals.webhooks import api, views

urlpatterns = [
    path("webhooks/", views.webhook_list, name="webhook-list"),
    path("webhooks/<int:pk>/", views.webhook_detail, name="webhook-detail"),
    path("webhooks/<int:pk>/toggle/", views.webhook_toggle, name="webhook-toggle"),
]

api_urlpatterns = [
    path("webhooks/", api.WebhookListCreate.as_view(), name="api-webhooks"),
    path("webhooks/<int:pk>/", api.WebhookDetail.as_view(), name="api-webhook"),
    path("webhook-deliveries/", api.WebhookDeliveryList.as_view(), name="api-webhook-deliveries"),
]
