"""The fake judge server answering the runtime classifiers (tests/evals/judge_server.py)."""

import json

# What the server answers each classifier until a test says otherwise: no finding.
NO_FINDING = {
    "injection": {
        "reason": "An ordinary request.",
        "flagged": False,
        "category": "none",
        "confidence": 90,
    },
    "scope_drift": {
        "reason": "Within scope.",
        "drift": False,
        "category": "none",
        "confidence": 90,
    },
    "frustration": {"reason": "Calm.", "target": "none", "confidence": 90},
}


def answer_classifiers(server) -> None:
    """Make the server answer classifier requests from `server.answers` (by schema name)."""
    server.answers = {k: dict(v) for k, v in NO_FINDING.items()}

    def respond(body):
        name = body.get("response_format", {}).get("json_schema", {}).get("name")
        return json.dumps(server.answers[name]) if name in server.answers else None

    server.responder = respond
