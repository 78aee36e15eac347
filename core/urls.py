from django.urls import path

from core.views import imports, tokens

urlpatterns = [
    path("imports/", imports.import_list, name="import-list"),
    path("imports/<int:pk>/", imports.import_detail, name="import-detail"),
    path("imports/<int:pk>/start/", imports.import_start, name="import-start"),
    path("imports/<int:pk>/discard/", imports.import_discard, name="import-discard"),
    path("tokens/", tokens.token_list, name="token-list"),
    path("tokens/<int:pk>/revoke/", tokens.token_revoke, name="token-revoke"),
    path("tokens/service/", tokens.service_token_create, name="service-token-create"),
]
