"""GET filter forms of the browsing pages: they parse query strings into selector filters."""

from django import forms

from evals.catalog.selectors import AgentVersionUnknown, agent_version_resolve
from evals.judging.selectors.browse import CallFilters, VerdictFilters

TRI_STATE = [("", "any"), ("yes", "yes"), ("no", "no")]
INT32_MAX = 2**31 - 1  # the largest rule version number a column holds
PAGE_MAX = 10**6  # beyond it a page number is nonsense, so the form drops it (page 1)
YES, NO = {"yes", "true", "1", "on"}, {"no", "false", "0", "off"}


class TriStateField(forms.Field):
    """Yes, no or any (blank): yes/true/1/on or no/false/0/off, as the page's select or an API
    client spells it."""

    choices = TRI_STATE  # what the page's select offers

    def to_python(self, value) -> bool | None:
        word = (value or "").strip().lower()
        if not word:
            return None
        if word in YES | NO:
            return word in YES
        raise forms.ValidationError("must be yes or no (or true/false, 1/0)")


def _tri(value) -> bool | None:
    return value if isinstance(value, bool) else None


class CallFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Call id")
    agent = forms.CharField(required=False, max_length=100)
    agent_version = forms.CharField(
        required=False, max_length=300, label="Agent version", help_text="VERSION or AGENT:VERSION"
    )
    scenario = forms.CharField(required=False, max_length=200)
    tenant = forms.CharField(required=False, max_length=200)
    language = forms.CharField(required=False, max_length=20)
    has_audio = TriStateField(required=False, label="Audio")
    started_from = forms.DateField(required=False, label="Started from")
    started_to = forms.DateField(required=False, label="Started to")
    flagged_rule = forms.CharField(required=False, max_length=200, label="Flagged by rule")
    page = forms.IntegerField(required=False, min_value=1, max_value=PAGE_MAX)

    def clean(self):
        data = super().clean()
        text = (data.get("agent_version") or "").strip()
        if text:
            # The one reading of a version's name: a VERSION two agents share is an error.
            try:
                agent_version_resolve(text, agent=(data.get("agent") or "").strip())
            except AgentVersionUnknown as exc:
                self.add_error("agent_version", exc.message)
        return data

    def filters(self) -> CallFilters:
        """Return the filters of a bound form; fields that did not validate are ignored."""
        d = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        return CallFilters(
            q=d.get("q") or "",
            agent=(d.get("agent") or "").strip(),
            agent_version=(d.get("agent_version") or "").strip(),
            scenario=d.get("scenario") or "",
            tenant=(d.get("tenant") or "").strip(),
            language=d.get("language") or "",
            has_audio=_tri(d.get("has_audio")),
            started_from=d.get("started_from"),
            started_to=d.get("started_to"),
            flagged_rule=d.get("flagged_rule") or "",
        )


class VerdictFilterForm(forms.Form):
    rule = forms.CharField(required=False, max_length=200)
    version = forms.IntegerField(required=False, min_value=1, max_value=INT32_MAX)
    judge = forms.CharField(required=False, max_length=200)
    transcript = forms.CharField(required=False, max_length=200, label="Call id")
    flagged = TriStateField(required=False)
    errored = TriStateField(required=False)
    page = forms.IntegerField(required=False, min_value=1, max_value=PAGE_MAX)

    def filters(self) -> VerdictFilters:
        """Return the filters of a bound form; fields that did not validate are ignored."""
        d = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        return VerdictFilters(
            rule=d.get("rule") or "",
            version=d.get("version"),
            judge=d.get("judge") or "",
            transcript=(d.get("transcript") or "").strip(),
            flagged=_tri(d.get("flagged")),
            errored=_tri(d.get("errored")),
        )
