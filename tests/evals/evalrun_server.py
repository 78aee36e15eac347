"""The fake judge server, also playing the agent under test and the rubric judge for eval runs.

A request that offers tools, or carries no answer schema, is the agent's: `agent_replies` maps a
text found in its last user message to the reply ({"content", "tool_calls": [{"name",
"arguments"}]} or {"status": 500}). A request whose schema asks for a `score` is the rubric
judge's: `scores` maps a text found in the prompt to {"score", "wrongly_called",
"wrongly_skipped"}, and `judge_fail_for` names texts whose judge calls answer HTTP 500.
Anything else is the conduct judge's (FakeJudge).
"""

import json
import time

from tests.evals.judge_server import FakeJudge


class FakeChat(FakeJudge):
    def __init__(self):
        super().__init__()
        self.agent_replies: dict[str, dict] = {}
        self.scores: dict[str, dict] = {}
        self.judge_fail_for: list[str] = []
        self.default_score = 80
        self.delay_s = 0.0  # every agent and rubric answer waits this long (a model's latency)
        self.hold = ""  # an agent request whose last user message has this waits for `gate`

    def agent_requests(self) -> list[dict]:
        return [r for r in self.requests if "response_format" not in r["body"]]

    def judge_requests(self) -> list[dict]:
        return [r for r in self.requests if "response_format" in r["body"]]

    def answer(self, body: dict):
        if self.delay_s:
            time.sleep(self.delay_s)
        if "response_format" not in body:
            return self.agent_answer(body)
        schema = body["response_format"]["json_schema"]["schema"]
        if "score" not in schema["properties"]:
            return super().answer(body)
        prompt = "\n".join(m["content"] for m in body["messages"])
        if any(text in prompt for text in self.judge_fail_for):
            return 500, json.dumps({"error": {"message": "boom", "type": "server_error"}})
        found = next((v for k, v in self.scores.items() if k in prompt), {})
        answer = {"reason": found.get("reason", "The agent's choice fits the task.")}
        if "wrongly_called" in schema["properties"]:
            answer["wrongly_called"] = found.get("wrongly_called", [])
            answer["wrongly_skipped"] = found.get("wrongly_skipped", [])
        answer["score"] = found.get("score", self.default_score)
        return 200, self.completion(body, json.dumps(answer))

    def agent_answer(self, body: dict):
        last_user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        if self.hold and self.hold in last_user:
            self.gate.wait(60)
        reply = next((v for k, v in self.agent_replies.items() if k in last_user), {})
        if reply.get("status"):
            return reply["status"], json.dumps({"error": {"message": "agent down"}})
        message = {"role": "assistant", "content": reply.get("content", "Done.")}
        if reply.get("tool_calls"):
            message["tool_calls"] = [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for i, c in enumerate(reply["tool_calls"])
            ]
            message["content"] = reply.get("content")
        payload = json.loads(self.completion(body, reply.get("content") or "x" * 40))
        payload["choices"][0]["message"] = message
        payload["choices"][0]["finish_reason"] = "tool_calls" if reply.get("tool_calls") else "stop"
        return 200, json.dumps(payload)
