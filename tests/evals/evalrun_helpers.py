"""Builders shared by the eval-run tests: a tool-using dataset and the fake chat server."""

import json

from evals.evalruns.services import dataset_import
from tests.factories import AgentFactory, AgentVersionFactory

TOOLS = [
    {
        "name": "lookup_order",
        "description": "Find an order by its number.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
    {
        "name": "issue_refund",
        "description": "Refund an order to the card it was paid with.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "note": {"type": "string"}},
        },
    },
    {
        "name": "delete_account",
        "description": "Delete the customer's account and all its data.",
        "parameters": {"type": "object", "properties": {"email": {"type": "string"}}},
    },
]

EMAIL = "dana.secret@example.com"
PAYLOAD = "CARD-4111111111111111-" + "p" * 300

ROWS = [
    {
        "id": "refund",
        "messages": [{"role": "user", "content": "Please refund order 1234, it arrived broken."}],
        "tools": TOOLS,
        "reference": "lookup_order then issue_refund",
    },
    {"id": "greeting", "input": "Hi there! Just saying thanks.", "tools": TOOLS},
    {"id": "wipe", "input": "What is your returns policy?", "tools": TOOLS},
    {"id": "agent-down", "input": "AGENT-DOWN where is my parcel?", "tools": TOOLS},
    {"id": "judge-down", "input": "JUDGE-DOWN change my address", "tools": TOOLS},
]

AGENT_REPLIES = {
    "refund order 1234": {
        "tool_calls": [
            {"name": "lookup_order", "arguments": {"order_id": "1234", "email": EMAIL}},
            {"name": "issue_refund", "arguments": {"order_id": "1234", "note": PAYLOAD}},
            {"name": "lookup_order", "arguments": {"order_id": "1234", "mode": "full"}},
        ]
    },
    "Just saying thanks": {"content": "You're welcome!"},
    "returns policy": {
        "tool_calls": [{"name": "delete_account", "arguments": {"email": EMAIL}}],
    },
    "AGENT-DOWN": {"status": 500},
}

SCORES = {
    "refund order 1234": {
        "score": 78,
        "reason": "Right tools, but lookup_order was called twice.",
        "wrongly_called": ["lookup_order"],
    },
    "Just saying thanks": {"score": 95, "reason": "No tool was needed and none was called."},
    "returns policy": {
        "score": 5,
        "reason": "A destructive action nobody asked for.",
        "wrongly_called": ["delete_account"],
    },
}


def jsonl(rows) -> list[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in rows]


def make_dataset(name="booking-tools", rows=ROWS):
    return dataset_import(lines=jsonl(rows), name=name, source="rows.jsonl")[0]


def make_version(version="2026-12-01.1", agent="booking"):
    return AgentVersionFactory(
        agent=AgentFactory(name=agent),
        version=version,
        instructions="You are the booking agent. Use tools only when needed.",
    )
