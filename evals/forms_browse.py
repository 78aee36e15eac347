"""GET filter forms of the browsing pages: they parse query strings into selector filters."""

from django import forms

from evals.selectors.browse import CallFilters, VerdictFilters

TRI_STATE = [("", "any"), ("yes", "yes"), ("no", "no")]


def _tri(value: str) -> bool | None:
    return {"yes": True, "no": False}.get(value)


class CallFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Call id")
    agent_version = forms.IntegerField(required=False, min_value=1, label="Agent version")
    scenario = forms.CharField(required=False, max_length=200)
    language = forms.CharField(required=False, max_length=20)
    has_audio = forms.ChoiceField(required=False, choices=TRI_STATE, label="Audio")
    started_from = forms.DateField(required=False, label="Started from")
    started_to = forms.DateField(required=False, label="Started to")
    flagged_rule = forms.CharField(required=False, max_length=200, label="Flagged by rule")
    page = forms.IntegerField(required=False, min_value=1)

    def filters(self) -> CallFilters:
        """Return the filters of a bound form; fields that did not validate are ignored."""
        d = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        return CallFilters(
            q=d.get("q") or "",
            agent_version=d.get("agent_version"),
            scenario=d.get("scenario") or "",
            language=d.get("language") or "",
            has_audio=_tri(d.get("has_audio") or ""),
            started_from=d.get("started_from"),
            started_to=d.get("started_to"),
            flagged_rule=d.get("flagged_rule") or "",
        )


class VerdictFilterForm(forms.Form):
    rule = forms.CharField(required=False, max_length=200)
    version = forms.IntegerField(required=False, min_value=1)
    judge = forms.CharField(required=False, max_length=200)
    transcript = forms.CharField(required=False, max_length=200, label="Call id")
    flagged = forms.ChoiceField(required=False, choices=TRI_STATE)
    errored = forms.ChoiceField(required=False, choices=TRI_STATE)
    page = forms.IntegerField(required=False, min_value=1)

    def filters(self) -> VerdictFilters:
        """Return the filters of a bound form; fields that did not validate are ignored."""
        d = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        return VerdictFilters(
            rule=d.get("rule") or "",
            version=d.get("version"),
            judge=d.get("judge") or "",
            transcript=(d.get("transcript") or "").strip(),
            flagged=_tri(d.get("flagged") or ""),
            errored=_tri(d.get("errored") or ""),
        )
