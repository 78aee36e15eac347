"""A local HTTP server that speaks the OpenAI chat completions protocol, for judge tests.

It records every request and answers each rule of the schema it was sent. Tests steer it:
`flag` maps rule ids to the turns to cite, `responder` answers other schemas (a function of the
request body returning the content), `mode` picks a failure ("malformed", "missing-rule",
"user-turn", "slow", "error500", "no-usage"), optionally
only for requests whose prompt mentions `only_for`.

A conversation judge request (its schema asks for a `score`) gets `conversation_score` and
`conversation_findings` ({"type", "turns", "note"}), or, for a prompt that mentions a key of
`conversation_by_text`, that key's (score, findings).
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeJudge:
    def __init__(self):
        self.requests: list[dict] = []
        self.flag: dict[str, list[int]] = {}
        self.mode = ""
        self.only_for = ""
        self.conversation_score = 9
        self.conversation_findings: list[dict] = []
        self.conversation_by_text: dict[str, tuple[int, list[dict]]] = {}
        self.slow_s = 3.0
        self.junk_type = "text/html"  # what "junk" answers with, status 200
        self.junk_body = "<html><body>502 Bad Gateway</body></html>"
        # Answers other prompts (the runtime classifiers): body -> content, or None for the judge's.
        self.responder = None
        self.hang_s = 30.0  # "hang" holds each answer this long (or until stop), past any timeout
        self.stopping = threading.Event()
        self.gate = threading.Event()  # clear it to hold every answer until the test sets it again
        self.gate.set()
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    # ---- what the server answers ----

    def answer(self, body: dict) -> tuple[int, str] | tuple[int, str, str]:
        self.gate.wait(60)
        prompt = "\n".join(m["content"] for m in body["messages"])
        mode = self.mode if (not self.only_for or self.only_for in prompt) else ""
        if mode == "slow":
            time.sleep(self.slow_s)
        if mode == "hang":
            self.stopping.wait(self.hang_s)
        if mode == "junk":
            return 200, self.junk_body, self.junk_type
        if mode == "error500":
            return 500, json.dumps({"error": {"message": "boom", "type": "server_error"}})
        if mode == "malformed":
            return 200, self.completion(body, "Sure! Here are the verdicts: flagged, mostly.")
        if self.responder is not None and (content := self.responder(body)) is not None:
            return 200, self.completion(body, content)
        if body.get("response_format", {}).get("type") == "json_schema":
            schema = body["response_format"]["json_schema"]["schema"]
        else:  # json_object or none: the schema is in the prompt
            schema = json.loads(prompt.rsplit("matches this JSON schema:\n", 1)[1])
        if "score" in schema["properties"]:
            return 200, self.completion(body, json.dumps(self.conversation_answer(prompt, mode)))
        answer = {}
        for rid, prop in schema["properties"].items():
            allowed = prop["properties"]["turns"]["items"]["enum"]
            turns = self.flag.get(rid)
            answer[rid] = {
                "reason": f"Checked {rid}.",
                "flagged": turns is not None,
                "turns": turns or [],
                "severity": "major" if turns is not None else "minor",
                "confidence": 90,
            }
            if mode == "user-turn":
                answer[rid].update(flagged=True, turns=[max(set(range(100)) - set(allowed))])
        if mode == "missing-rule":
            answer.pop(next(iter(answer)))
        if mode == "no-usage":
            payload = json.loads(self.completion(body, json.dumps(answer)))
            del payload["usage"]
            return 200, json.dumps(payload)
        return 200, self.completion(body, json.dumps(answer))

    def conversation_answer(self, prompt: str, mode: str) -> dict:
        score, findings = self.conversation_score, self.conversation_findings
        for needle, (s, f) in self.conversation_by_text.items():
            if needle in prompt:
                score, findings = s, f
                break
        answer = {
            "plan_reason": "Every phase happened in order.",
            "drift_reason": "The agent kept one persona.",
            "findings": findings,
            "score": score,
        }
        if mode == "user-turn":
            answer["findings"] = [{"type": "loop", "turns": [1], "note": "a user turn"}]
        if mode == "missing-rule":
            del answer["score"]
        return answer

    @staticmethod
    def completion(body: dict, content: str) -> str:
        prompt_chars = sum(len(m["content"]) for m in body["messages"])
        usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content) // 4}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return json.dumps(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
        )

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                with fake.lock:
                    fake.requests.append(
                        {
                            "path": self.path,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": body,
                        }
                    )
                kind = []
                if self.path != "/v1/chat/completions":
                    status, payload = 404, json.dumps({"error": {"message": "not found"}})
                else:
                    status, payload, *kind = fake.answer(body)
                data = payload.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind[0] if kind else "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up

            def log_message(self, *args):
                pass

        return Handler
