"""A small local server speaking the OpenAI chat-completions and Anthropic messages protocols.

Tests and the demo use it instead of a paid API; the real SDKs talk to it unchanged. Each
protocol lives in its own module with an `add_routes(app)`; a new protocol (e.g. batches) adds
a module and one line in `create_app`. Run it with `python -m fakes.llm`.
"""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web

from . import anthropic_protocol, batches, core, openai_protocol


async def _stats(request: web.Request) -> web.Response:
    state = request.app[core.STATE]
    return web.json_response(
        {
            "total": state.total,
            "requests": dict(state.counts),
            "largest_request_bytes": state.largest_request,
        }
    )


async def _ttft(request: web.Request) -> web.Response:
    """The first-token delay each streamed request really got: {request id: ms since arrival}."""
    return web.json_response(dict(request.app[core.STATE].ttft))


async def _reset(request: web.Request) -> web.Response:
    request.app[core.STATE].reset()
    return web.json_response({"ok": True})


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


def create_app(*, draw: bool = False) -> web.Application:
    """The app; `draw`: answer every structured request with a value drawn from its schema."""
    app = web.Application(client_max_size=16 * 1024 * 1024)
    app[core.STATE] = core.ServerState(draw=draw)
    openai_protocol.add_routes(app)
    anthropic_protocol.add_routes(app)
    batches.add_routes(app)  # OpenAI Batch and Anthropic Message Batches
    app.router.add_get("/_control/stats", _stats)
    app.router.add_get("/_control/ttft", _ttft)
    app.router.add_post("/_control/reset", _reset)
    app.router.add_get("/healthz", _health)
    return app


class FakeServer:
    """The server on a background thread (tests): `with FakeServer() as server: server.url`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, draw: bool = False) -> None:
        self.host, self.port = host, port
        self.app = create_app(draw=draw)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="fake-llm-server")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def state(self) -> core.ServerState:
        return self.app[core.STATE]

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._runner = web.AppRunner(
            self.app, handle_signals=False, shutdown_timeout=0.5, access_log=None
        )
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        self._loop.run_until_complete(site.start())
        server = site._server
        assert isinstance(server, asyncio.Server)  # started just above
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> FakeServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        async def _cleanup() -> None:
            await self._runner.cleanup()
            # Handlers told to hang are still asleep: end them so none is left pending.
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(_cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
