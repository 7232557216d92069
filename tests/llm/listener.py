"""A tiny HTTP server an attacker would run: it records every connection and request (headers
and body) and answers like an OpenAI-compatible server, or with a redirect.

Written with the standard library only, so it shares nothing with the code under test.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    server: Listener

    def log_message(self, *args) -> None:  # quiet
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.requests.append({"path": self.path, "headers": headers, "body": body})
        if self.server.redirect_to:
            self.send_response(307)
            self.send_header("Location", self.server.redirect_to + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        reply = {
            "id": "chatcmpl-listener",
            "object": "chat.completion",
            "created": 0,
            "model": "listener",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "I hear you; that sounds hard."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        content_type = "application/json"
        data = json.dumps(reply).encode()
        if '"stream": true' in body or '"stream":true' in body:
            content_type = "text/event-stream"
            chunk = {**reply, "object": "chat.completion.chunk"}
            chunk["choices"] = [{"index": 0, "delta": reply["choices"][0]["message"]}]
            end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            data = "".join(f"data: {json.dumps(c)}\n\n" for c in (chunk, end)).encode()
            data += b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Listener(ThreadingHTTPServer):
    """`with Listener() as listener: listener.url, listener.requests, listener.connections`."""

    daemon_threads = True

    def __init__(self, redirect_to: str = "") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []
        self.connections = 0
        self.redirect_to = redirect_to

    def verify_request(self, request, client_address) -> bool:
        self.connections += 1  # every TCP connection, even one that never sends HTTP
        return True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def port(self) -> int:
        return self.server_address[1]

    def seen(self) -> str:
        """Everything it received, as one string to search."""
        return json.dumps(self.requests)

    def __enter__(self) -> Listener:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
