"""A chat-completions endpoint on the loopback interface that answers from a script, for the `llm` proposer's tests.

Each request takes the next scripted reply: a string is a completion whose message is that text;
``Status(code, ...)`` is an HTTP error (``retry-after-ms`` set, so the client's backoff is short);
``Raw(body)`` is a 200 whose body is not a chat completion; ``Slow(seconds, reply)`` answers late.
The server records each request's body and headers, and the most requests it served at once.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Status:
    code: int
    message: str = "try again"


@dataclass
class Raw:
    body: bytes
    content_type: str = "text/html"


@dataclass
class Slow:
    seconds: float
    reply: Any


def completion(model: str, text: str) -> bytes:
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                       "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 1000, "completion_tokens": 250, "total_tokens": 1250}}).encode()


class ChatServer:
    def __init__(self, script: list[Any], delay_s: float = 0.0):
        self.script, self.delay_s = list(script), delay_s
        self.requests: list[dict[str, Any]] = []
        self.active = self.most_at_once = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def __enter__(self) -> "ChatServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    owner.requests.append({"path": self.path, "body": body, "headers": {k.lower(): v for k, v in self.headers.items()}})
                    reply = owner.script.pop(0) if owner.script else Status(500, "script exhausted")
                    owner.active += 1
                    owner.most_at_once = max(owner.most_at_once, owner.active)
                try:
                    time.sleep(owner.delay_s)
                    self._answer(reply, body["model"])
                finally:
                    with owner.lock:
                        owner.active -= 1

            def _answer(self, reply: Any, model: str) -> None:
                if isinstance(reply, Slow):
                    time.sleep(reply.seconds)
                    reply = reply.reply
                headers = {"Content-Type": "application/json"}
                if isinstance(reply, Status):
                    code, data = reply.code, json.dumps({"error": {"message": reply.message, "type": "x"}}).encode()
                    headers["retry-after-ms"] = "10"
                elif isinstance(reply, Raw):
                    code, data, headers["Content-Type"] = 200, reply.body, reply.content_type
                else:
                    code, data = 200, completion(model, reply)
                try:
                    self.send_response(code)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout)

            def log_message(self, *args):
                pass

        return Handler
