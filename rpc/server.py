"""The HTTP JSON-RPC server (aiohttp), in bitcoind's conventions.

- JSON-RPC 1.0 (no ``"jsonrpc"`` member): ``{"result", "error", "id"}``; an error answers HTTP 500,
  or 404 for an unknown method and 400 for an invalid request (bitcoind's legacy statuses).
- JSON-RPC 2.0: HTTP 200 with ``result`` or ``error``; a request without ``id`` is a
  notification (no reply). A batch (array) is answered with an array, HTTP 200.
- Optional HTTP basic authentication (``rpcuser``/``rpcpassword``), compared in constant time.
- Request bodies are capped (``max_body``) before they are read; all node work runs on one worker
  thread, in order, so the event loop stays responsive and the node sees one caller at a time.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from aiohttp import web

from ctplugin.elements.rpcjson import dumps
from rpc.errors import RpcCode, RpcError
from rpc.methods import MAX_HEX_CHARS, call
from validator import Node

MAX_BATCH = 1000

_LEGACY_STATUS = {RpcCode.METHOD_NOT_FOUND: 404, RpcCode.INVALID_REQUEST: 400}


def _reply(request: object, result: Any = None, error: RpcError | None = None) -> dict[str, Any]:
    ident = request.get("id") if isinstance(request, dict) else None
    if isinstance(request, dict) and request.get("jsonrpc") == "2.0":
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
        if error is None:
            body["result"] = result
        else:
            body["error"] = error.to_json()
        return body
    return {"result": result, "error": error.to_json() if error else None, "id": ident}


class RpcServer:
    """Serves ``node`` on ``host:port`` (port 0 picks a free one; see ``port`` after start)."""

    def __init__(self, node: Node, host: str = "127.0.0.1", port: int = 0, *,
                 auth: tuple[str, str] | None = None,
                 max_body: int = MAX_HEX_CHARS + 4096) -> None:
        self.node = node
        self.host = host
        self.port = port
        self._auth = None if auth is None else base64.b64encode(
            f"{auth[0]}:{auth[1]}".encode()).decode()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctplugin-node")
        self._app = web.Application(client_max_size=max_body)
        self._app.router.add_post("/", self._handle)
        self._runner: web.AppRunner | None = None
        self.stopped = asyncio.Event()
        self._stop_requested = False

    async def start(self) -> None:
        self._runner = web.AppRunner(self._app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = cast(asyncio.Server | None, site._server)  # aiohttp keeps the socket here
        if server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self._executor.shutdown(wait=True)
        self.stopped.set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    # --- request handling ------------------------------------------------------------------

    def _authorized(self, request: web.Request) -> bool:
        if self._auth is None:
            return True
        header = request.headers.get("Authorization", "")
        return hmac.compare_digest(header.encode(), f"Basic {self._auth}".encode())

    async def _handle(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="jsonrpc"'})
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return web.Response(status=413, text="request too large")
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            error = RpcError(RpcCode.PARSE_ERROR, "Parse error")
            return self._respond(_reply(None, error=error), status=500)
        loop = asyncio.get_running_loop()
        if isinstance(payload, list):
            if not payload or len(payload) > MAX_BATCH:
                error = RpcError(RpcCode.INVALID_REQUEST, f"Batch must hold 1..{MAX_BATCH} calls")
                return self._respond(_reply(None, error=error), status=400)
            replies = await loop.run_in_executor(self._executor, self._run_batch, payload)
            return self._respond([r for r in replies if r is not None], status=200)
        reply, status = await loop.run_in_executor(self._executor, self._run_one, payload)
        if reply is None:
            return web.Response(status=204)
        if self._stop_requested:
            loop.call_soon(self.stopped.set)
        return self._respond(reply, status=status)

    def _run_batch(self, payload: list[Any]) -> list[dict[str, Any] | None]:
        return [self._run_one(item)[0] for item in payload]

    def _run_one(self, request: object) -> tuple[dict[str, Any] | None, int]:
        is_v2 = isinstance(request, dict) and request.get("jsonrpc") == "2.0"
        if not isinstance(request, dict):
            error = RpcError(RpcCode.INVALID_REQUEST, "Invalid Request object")
            return _reply(None, error=error), 400
        try:
            if request.get("method") == "stop":
                self._stop_requested = True
                result: Any = "ctplugin stopping"
            else:
                result = call(self.node, request.get("method"), request.get("params"))
        except RpcError as error:
            if is_v2 and "id" not in request:
                return None, 204
            status = 200 if is_v2 else _LEGACY_STATUS.get(error.code, 500)
            return _reply(request, error=error), status
        if is_v2 and "id" not in request:
            return None, 204
        return _reply(request, result=result), 200

    @staticmethod
    def _respond(body: Any, status: int) -> web.Response:
        return web.Response(status=status, text=dumps(body, indent=None),
                            content_type="application/json")
