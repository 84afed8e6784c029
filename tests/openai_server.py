"""A small OpenAI-compatible completions server on loopback, streaming token ids like `vllm serve`.

It answers `GET /v1/models` and `POST /v1/completions` with `stream: true`: server-sent events whose
choices carry `token_ids` (vLLM's `return_token_ids`), a last chunk with `finish_reason`, then
`data: [DONE]`. `POST /v1/chat/completions` streams the same way after the chat's opening chunk (the
assistant's role, no tokens), answering to the length of the messages' JSON. The answer to a prompt is
deterministic (see `answer`), so tests can check what LoadGen recorded. Every request body is kept in
`requests`.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def answer(prompt: list[int], length: int) -> list[int]:
    return [1000 + (sum(prompt) + position) % 50000 for position in range(length)]


def chat_prompt(messages: list[dict[str, Any]]) -> list[int]:
    """What a chat's answer is derived from: its messages' JSON length, as one number."""
    return [len(json.dumps(messages, sort_keys=True))]


class _Server(ThreadingHTTPServer):
    # The listen backlog of `vllm serve` (uvicorn's 2048) rather than socketserver's 5: the harness opens
    # hundreds of streams at once, and on a busy machine a backlog of 5 overflows into reset connections.
    request_queue_size = 2048


class CompletionsServer:
    def __init__(self, token_delay_s: float = 0.0, with_token_ids: bool = True) -> None:
        self.requests: list[dict[str, Any]] = []
        self.token_delay_s = token_delay_s
        self.with_token_ids = with_token_ids
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> CompletionsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection; the body ends when it closes

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path != "/v1/models":
                    self.send_error(404)
                    return
                self._send_json({"object": "list", "data": [{"id": "test-model", "object": "model"}]})

            def do_POST(self) -> None:
                chat = self.path == "/v1/chat/completions"
                if self.path != "/v1/completions" and not chat:
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append({**body, "path": self.path})
                prompt = chat_prompt(body["messages"]) if chat else body["prompt"]
                tokens = answer(prompt, body["max_tokens"])
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                if chat:
                    opening = {
                        "index": 0,
                        "delta": {"role": "assistant", "content": ""},
                        "finish_reason": None,
                    }
                    self._event({"id": "chat-test", "object": "chat.completion.chunk", "choices": [opening]})
                for position, token in enumerate(tokens):
                    time.sleep(server.token_delay_s)
                    last = position == len(tokens) - 1
                    choice: dict[str, Any] = {
                        "index": 0,
                        "finish_reason": "length" if last else None,
                        "token_ids": [token] if server.with_token_ids else None,
                    }
                    if chat:
                        choice["delta"] = {"content": f"t{token} "}
                    else:
                        choice["text"] = f"t{token} "
                    self._event({"id": "cmpl-test", "object": "text_completion", "choices": [choice]})
                self.wfile.write(b"data: [DONE]\n\n")

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
                self.wfile.flush()

            def _send_json(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
