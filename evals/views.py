from django.shortcuts import render

from console.permissions import require


@require("view_console")
def transcript_list(request):
    return render(request, "evals/transcript_list.html", {})


@require("view_console")
def transcript_detail(request, external_id):
    return render(request, "evals/transcript_detail.html", {})


@require("view_console")
def rule_list(request):
    return render(request, "evals/rule_list.html", {})


@require("view_console")
def rule_detail(request, rule_id):
    return render(request, "evals/rule_detail.html", {})


@require("view_console")
def verdict_list(request):
    return render(request, "evals/verdict_list.html", {})
