"""A minimal OpenAI-compatible chat server on 127.0.0.1, for litellm's real HTTP path in tests.

It streams server-sent events the way the OpenAI API does, and can be told to fail the ways real
servers fail: a refused key (401), a rate limit (429), a server error (500), a reply too slow for
the client's timeout, or a body that is not JSON. Every request body is kept for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    def __init__(self, replies=None):
        self.replies = list(replies or [])   # str, or ("status", code), ("slow", seconds, text), ("garbage",)
        self.requests: list[dict] = []
        self.default = "Which index does each thread use when it reads `a`?"
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self._json(200, {"object": "list", "data": [{"id": "tiny", "object": "model"}]})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "body": body,
                                        "authorization": self.headers.get("Authorization")})
                reply = server.replies.pop(0) if server.replies else server.default
                if isinstance(reply, tuple) and reply[0] == "status":
                    self._json(reply[1], {"error": {"message": f"scripted {reply[1]}", "type": "scripted",
                                                    "code": reply[1]}})
                    return
                if isinstance(reply, tuple) and reply[0] == "garbage":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b"<html>this is not an API</html>")
                    return
                delay = 0.0
                if isinstance(reply, tuple) and reply[0] == "slow":
                    delay, reply = reply[1], reply[2]
                if body.get("stream"):
                    self._stream(reply, delay, body)
                else:
                    time.sleep(delay)
                    self._json(200, _completion(reply, body))

            def _stream(self, text, delay, body):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                words = text.split(" ")
                try:
                    for n, word in enumerate(words):
                        piece = word if n == len(words) - 1 else word + " "
                        chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "tiny",
                                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece},
                                              "finish_reason": None}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        if delay:
                            time.sleep(delay)
                    end = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "tiny",
                           "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                    self.wfile.write(f"data: {json.dumps(end)}\n\n".encode())
                    usage = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "tiny",
                             "choices": [], "usage": {"prompt_tokens": _tokens(body), "completion_tokens": len(words),
                                                      "total_tokens": _tokens(body) + len(words)}}
                    self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client cancelled

            def _json(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _tokens(body) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))


def _completion(text, body):
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "tiny",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": _tokens(body), "completion_tokens": len(text.split()),
                      "total_tokens": _tokens(body) + len(text.split())}}
