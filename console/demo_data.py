"""What every demo step shares: where the demo's files are, its agent, and what really happened
in its calls (demo/truth.json)."""

import json
from pathlib import Path

from django.conf import settings

DEMO_DIR = Path(settings.BASE_DIR) / "demo"
DEMO_AGENT = "phone-screen"


def demo_truth(demo_dir: Path = DEMO_DIR) -> dict:
    """Return demo/truth.json: what really happened in
    the demo calls, for steps that make marks or rows.

    `verdicts` maps "<call id>|<rule id>|<version>" to whether the judge's verdict is right,
    `errors` says why the wrong ones are wrong, `faults` lists each call's real violations (rule,
    turns), `signals` the timing and transcription events, `audio_only` problems heard only in a
    recording, `golden` maps scenario -> version -> call id, and `gate` names the version that
    passes and the one that fails (with the call and turn of the rubric leak).
    """
    return json.loads((demo_dir / "truth.json").read_text(encoding="utf-8"))
