from django.urls import path

from core import views_imports, views_tokens

urlpatterns = [
    path("imports/", views_imports.import_list, name="import-list"),
    path("imports/<int:pk>/", views_imports.import_detail, name="import-detail"),
    path("imports/<int:pk>/start/", views_imports.import_start, name="import-start"),
    path("imports/<int:pk>/discard/", views_imports.import_discard, name="import-discard"),
    path("tokens/", views_tokens.token_list, name="token-list"),
    path("tokens/<int:pk>/revoke/", views_tokens.token_revoke, name="token-revoke"),
    path("tokens/service/", views_tokens.service_token_create, name="service-token-create"),
]
