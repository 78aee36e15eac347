from django.urls import path

from core import views_tokens

urlpatterns = [
    path("tokens/", views_tokens.token_list, name="token-list"),
    path("tokens/<int:pk>/revoke/", views_tokens.token_revoke, name="token-revoke"),
    path("tokens/service/", views_tokens.service_token_create, name="service-token-create"),
]
