"""The one shape of a run's list-and-start endpoint (judge, conversation, eval and gate runs).

GET lists recent runs, newest first, in pages. POST starts one: the work goes on in the
background, so the answer is 202 with the run (pending or running), its API endpoint to poll in
`poll` and in the `Location` header; a dry run answers 200 with the plan and spends nothing.
A refusal is the one error body (a DomainError of the service).
"""

from django.urls import reverse
from rest_framework import generics, status
from rest_framework.response import Response

from core.permissions import api_permission


class RunListCreate(generics.GenericAPIView):
    """Subclasses set `request_serializer` and `poll_name` (the run's API endpoint) and write
    `start`, `summary` and `detail`."""

    list_permission = "view_console"
    start_permission = "run_judge"
    request_serializer = None
    poll_name = ""  # the URL name of one run's API endpoint, which takes the run's pk
    plan_type: type | tuple = ()  # what `start` returns for a dry run (an estimate, no run)

    def get_permissions(self):
        needed = self.start_permission if self.request.method == "POST" else self.list_permission
        return [api_permission(needed)()]

    def start(self, data: dict, request):
        """Start the run from the validated body; return the run, or a plan for a dry run."""
        raise NotImplementedError

    def summary(self, run) -> dict:
        """One run as the list shows it."""
        raise NotImplementedError

    def detail(self, run, request) -> dict:
        """One run as its own endpoint shows it, with its `url` to poll."""
        raise NotImplementedError

    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([self.summary(r) for r in page])

    def post(self, request):
        body = self.request_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        result = self.start(body.validated_data, request)
        if self.plan_type and isinstance(result, self.plan_type):
            return Response(result.as_dict(), status=status.HTTP_200_OK)
        data = self.detail(result, request)
        data["poll"] = request.build_absolute_uri(reverse(self.poll_name, args=[result.pk]))
        return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["poll"]})
