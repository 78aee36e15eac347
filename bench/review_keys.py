"""Keys per reviewed demo call, before and after "mark the rest right".

Loads the demo into a throwaway SQLite database, then reviews every call of today's sample as
the demo reviewer priya through the review page's own views (Django's test client), pressing
what a reviewer would press, and counts the presses:

- before: one r (or w) per verdict, then n to finish;
- after: one r per flagged verdict, a (mark the rest right) when unflagged ones are left, n.

Each press is one request to the page's view (r/w: the mark view, a: mark-rest, n: finish), so
the count is what the server saw, and each call must end finished. Judge and reviewer agree in
this count (every r, no w): a w costs the same in both.

    .venv/bin/python bench/review_keys.py
"""

import io
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from support import ROOT, django_setup


def child() -> None:
    django_setup(migrate=True)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from evals.catalog.models import Transcript
    from labeling.models import Assignment
    from labeling.selectors.queue import assignment_for_review, review_page_data

    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("load_demo", verbosity=0, stdout=io.StringIO())

    reviewer = get_user_model().objects.get(username="priya")
    client = Client()
    client.force_login(reviewer)
    hx = {"HX-Request": "true"}
    before, after = [], []
    while True:
        claimed = client.post(reverse("review-next"))
        if reverse("review") == claimed.url:
            break
        external_id = claimed.url.rstrip("/").split("/")[-1]
        assert client.get(claimed.url).status_code == 200
        transcript = Transcript.objects.get(external_id=external_id)
        page = review_page_data(
            reviewer=reviewer,
            transcript=transcript,
            assignment=assignment_for_review(reviewer=reviewer, transcript=transcript),
        )
        verdicts = [v for t in page.turns for v in t.verdicts_here] + page.top_verdicts
        markable = [v for v in verdicts if not v.error]
        flagged = [v for v in markable if v.flagged]
        before.append(len(markable) + 1)
        keys = 0
        for v in flagged:  # r on each flagged verdict
            url = reverse("review-mark", args=[external_id, v.pk])
            assert client.post(url, {"correct": "1"}, headers=hx).status_code == 200
            keys += 1
        if len(markable) > len(flagged):  # a
            url = reverse("review-mark-rest", args=[external_id])
            assert client.post(url, headers=hx).status_code == 200
            keys += 1
        client.post(reverse("review-finish", args=[external_id]))  # n
        keys += 1
        assignment = Assignment.objects.get(
            reviewer=reviewer, item__transcript__external_id=external_id
        )
        assert assignment.finished_at is not None, f"{external_id} did not finish"
        after.append(keys)
    n = len(before)
    print(f"{n} sampled demo calls reviewed, {sum(before) - n} verdicts marked")
    for name, keys in (("before (r per verdict, n)", before), ("after (r per flag, a, n)", after)):
        print(
            f"  {name:28} keys per call: mean {statistics.mean(keys):5.1f}  "
            f"median {statistics.median(keys):4.0f}  max {max(keys):3d}  total {sum(keys)}"
        )
    print(f"  {sum(before) / sum(after):.1f}x fewer keys")


def main() -> None:
    if "--child" in sys.argv:
        child()
        return
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")
        }
        env.update(
            DJANGO_DEBUG="1",
            DOCKET_VAR_DIR=tmp,
            DOCKET_LOG_LEVEL="WARNING",
            DOCKET_TEST_DB_NAME=str(Path(tmp) / "bench.sqlite3"),
        )
        subprocess.run([sys.executable, __file__, "--child"], env=env, cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
