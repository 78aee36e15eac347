"""The agent versions' pages: each version's instructions and tools."""

import json

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.permissions import require
from evals.catalog import selectors as catalog


@require("view_console")
@require_GET
def agent_version_list(request):
    return render(
        request, "catalog/agent_versions.html", {"versions": catalog.agent_versions_listed()}
    )


@require("view_console")
@require_GET
def agent_version_detail(request, agent, version):
    av = catalog.agent_version_found(agent, version)
    if av is None:
        raise Http404("No such agent version.")
    tools = [
        {**tool, "parameters_json": json.dumps(tool["parameters"], indent=2)} for tool in av.tools
    ]
    return render(request, "catalog/agent_version.html", {"av": av, "tools": tools})
