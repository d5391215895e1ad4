"""The HTTP side of the node's JSON-RPC, in bitcoind's conventions (docs/node-rpc.md §2.1–2.5).

Request path, in bitcoind's order: peer not allowed → **403**; path other than ``/`` or
``/wallet/<name>`` → **404** (empty body); method other than POST → **405** "JSONRPC server handles
only POST requests"; no or wrong ``Authorization`` → **401** with ``WWW-Authenticate: Basic
realm="jsonrpc"``; request line or headers over 8192 bytes → **400**; body over 32 MiB → **413**;
work queue full → **503** "Work queue depth exceeded" (text/plain); once shutdown has begun →
**503** and ``Connection: close``.

The doors (docs/node-rpc.md §2.2, §2.8): wrong credentials are answered after bitcoind's 250 ms
pause (``src/httprpc.cpp``), taken in turn by every failed attempt of every connection
(``AuthThrottle``), so guesses are serialised node-wide at four a second while a good client
never waits; the "incorrect password attempt" line is written at most ``AUTH_LOG_BURST`` times
per ``AUTH_LOG_INTERVAL`` (then one count of the lines left out); at most
``HttpConfig.max_connections`` connections are open (the oldest one that never authenticated is
closed to admit a new one), and a connection idle for ``-rpcservertimeout`` is closed, so idle
sockets cannot exhaust the node's file descriptors. Replies carry no ``Server:`` header (libevent
sends none; naming the HTTP library only helps an attacker).

The event loop (aiohttp's low-level server: parsing, keep-alive, timeouts) only routes bytes: the
body is decoded, executed and encoded by a worker thread of a bounded pool (``rpcthreads``
workers, at most ``rpcworkqueue`` requests waiting), so a slow call never delays another client.
JSON replies carry exactly ``Content-Type: application/json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from aiohttp import hdrs, web
from aiohttp.http import RawRequestMessage
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.streams import StreamReader

from rpc.auth import Credentials
from rpc.logs import category_logger

log = logging.getLogger("ctplugin.rpc")
http_log = category_logger("http")

MAX_BODY = 32 * 1024 * 1024  # MAX_SIZE: libevent refuses larger bodies
MAX_HEADERS_SIZE = 8192
AUTH_FAILURE_DELAY = 0.25  # bitcoind's UninterruptibleSleep(250ms) after a wrong password
AUTH_LOG_BURST = 10  # "incorrect password attempt" lines per interval, at most
AUTH_LOG_INTERVAL = 60.0
DEFAULT_MAX_CONNECTIONS = 1024
WALLET_PREFIX = "/wallet/"
JSON_HEADERS = {"Content-Type": "application/json"}
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
LOOPBACK: tuple[IpNetwork, ...] = (ipaddress.ip_network("127.0.0.0/8"),
                                   ipaddress.ip_network("::1/128"))

Dispatch = Callable[[bytes, "str | None", str], "tuple[int, bytes | None]"]
"""(body, wallet name from the URI or None, authenticated user) -> (status, JSON or None=204);
runs on a worker thread."""


def parse_allowip(spec: str) -> IpNetwork:
    """An ``-rpcallowip`` entry: an IP, ``net/prefix`` or ``net/netmask``."""
    try:
        return ipaddress.ip_network(spec, strict=False)
    except ValueError:
        raise ValueError(f"Invalid -rpcallowip subnet specification: {spec}") from None


def format_peer(peer: object) -> str:
    """A socket's peer as a user reads it: ``127.0.0.1:1234``, ``[::1]:1234`` (Core's
    ``CService::ToStringAddrPort``); "unknown" when the transport has none."""
    if isinstance(peer, (tuple, list)) and len(peer) >= 2:
        host, port = str(peer[0]), peer[1]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return str(peer) if peer else "unknown"


@dataclass(frozen=True, slots=True)
class HttpConfig:
    bind: Sequence[tuple[str, int]] = (("127.0.0.1", 0),)
    allow: Sequence[IpNetwork] = ()
    threads: int = 16
    workqueue: int = 64
    timeout: float = 30.0  # -rpcservertimeout: idle connections (new or kept alive) are closed
    max_connections: int = DEFAULT_MAX_CONNECTIONS  # open HTTP connections, at most
    extra: dict[str, Any] = field(default_factory=dict)


class _WorkQueue:
    """A bounded pool: at most ``depth`` requests waiting for one of ``threads`` workers."""

    def __init__(self, threads: int, depth: int) -> None:
        self.depth = depth
        self.threads = threads
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rpc-worker")
        self._lock = threading.Lock()
        self._waiting = 0
        self.active = 0

    def try_enter(self) -> bool:
        with self._lock:
            if self._waiting >= self.depth:
                return False
            self._waiting += 1
            return True

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn`` on a worker once ``try_enter`` admitted the request."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._started, fn, args)

    def _started(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        with self._lock:
            self._waiting -= 1
            self.active += 1
        try:
            return fn(*args)
        finally:
            with self._lock:
                self.active -= 1

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True)


class AuthThrottle:
    """Failed authentications, node-wide: each one waits its turn, then ``AUTH_FAILURE_DELAY``,
    so however many connections guess at once, one guess is answered per delay; the log line of
    a failure is rate limited (module docstring). Runs on the event loop only."""

    def __init__(self, delay: float = AUTH_FAILURE_DELAY, burst: int = AUTH_LOG_BURST,
                 interval: float = AUTH_LOG_INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.delay = delay
        self.burst = burst
        self.interval = interval
        self._clock = clock
        self._turn = asyncio.Lock()
        self._window_start = -float("inf")
        self._logged = 0
        self._suppressed = 0

    async def failed(self, peer: str) -> None:
        """Log (within the rate) and pause one failed attempt from ``peer``."""
        self.note(peer)
        async with self._turn:
            await asyncio.sleep(self.delay)

    def note(self, peer: str) -> None:
        now = self._clock()
        if now - self._window_start >= self.interval:
            if self._suppressed:
                log.warning("ThreadRPCServer %d more incorrect password attempts in the last "
                            "%.0f s not logged", self._suppressed, self.interval)
            self._window_start = now
            self._logged = 0
            self._suppressed = 0
        if self._logged < self.burst:
            self._logged += 1
            log.warning("ThreadRPCServer incorrect password attempt from %s", peer)
        else:
            self._suppressed += 1


class _ParserLog(logging.LoggerAdapter):
    """What aiohttp's connection handler logs. A request it could not parse (bad request line,
    oversized header, bad Content-Length: 400) is one line in the ``http`` debug category,
    never a traceback — bitcoind's libevent answers those 400 without a word, and anyone who
    can connect could otherwise write tracebacks to stderr at will. Anything else (an
    exception in our own handler) keeps its traceback, in debug.log."""

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info")
        if isinstance(exc, HttpProcessingError) or level < logging.WARNING:
            first_line = (str(exc).splitlines() or [""])[0] if exc else ""
            http_log.debug("%s: %s", str(msg) % args, first_line)
            return
        log.log(level, msg, *args, **kwargs)


class _Request(web.BaseRequest):
    """A request whose reply, ours or aiohttp's own error page, goes out without ``Server:``."""

    async def _prepare_hook(self, response: web.StreamResponse) -> None:
        # Called after aiohttp filled in its default headers and before they are written.
        response.headers.popall(hdrs.SERVER, None)
        await super()._prepare_hook(response)


class RpcHttpServer:
    """Listens on ``config.bind``; ``ports`` after ``start`` (port 0 picks a free one)."""

    def __init__(self, dispatch: Dispatch, credentials: Credentials, config: HttpConfig) -> None:
        self._dispatch = dispatch
        self._credentials = credentials
        self.config = config
        self._allowed = (*LOOPBACK, *config.allow)
        self._peer_verdicts: dict[str, bool] = {}  # peer address -> allowed (cached)
        self._queue = _WorkQueue(config.threads, config.workqueue)
        self._throttle = AuthThrottle()
        # Open connections that have not authenticated yet, oldest first: the ones closed to
        # make room at ``max_connections``.
        self._unauthenticated: OrderedDict[Any, None] = OrderedDict()
        self._server: web.Server | None = None
        self._listeners: list[asyncio.Server] = []
        self.addresses: list[tuple[str, int]] = []
        self.stopping = False
        self.in_flight = 0

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = web.Server(self._handle, request_factory=self._make_request,
                                  keepalive_timeout=self.config.timeout, access_log=None,
                                  max_line_size=MAX_HEADERS_SIZE, max_field_size=MAX_HEADERS_SIZE,
                                  max_headers=128,
                                  # bitcoind ignores Content-Encoding: the body is read as sent
                                  # (no decompressor error page, no decompression bomb).
                                  auto_decompress=False,
                                  logger=_ParserLog(logging.getLogger("aiohttp.server")),
                                  **self.config.extra)
        try:
            for host, port in self.config.bind:
                if port == 0 and self.addresses:
                    port = self.addresses[0][1]  # one free port for every address
                try:
                    listener = await loop.create_server(self._accept, host, port,
                                                        reuse_address=True)
                except OSError as exc:
                    # bitcoind: a failed address is logged; no address bound is fatal.
                    log.warning("Binding RPC on address %s port %d failed: %s", host, port, exc)
                    continue
                self._listeners.append(listener)
                for sock in listener.sockets:
                    name = sock.getsockname()
                    self.addresses.append((name[0], name[1]))
            if not self.addresses:
                raise OSError("no RPC address could be bound")
        except BaseException:
            await self.close()
            raise

    def _accept(self) -> Any:
        """The protocol of a new connection; at ``max_connections`` the oldest connection that
        never authenticated is closed first (then the oldest of all), so a flood of idle
        sockets cannot keep a good client out."""
        assert self._server is not None
        connections = self._server.connections
        if len(connections) >= self.config.max_connections:
            open_now = set(connections)
            victim = None
            while self._unauthenticated and victim is None:
                oldest, _ = self._unauthenticated.popitem(last=False)
                victim = oldest if oldest in open_now else None
            if victim is None:
                victim = connections[0]
            victim.force_close()
        elif len(self._unauthenticated) > 2 * self.config.max_connections:
            open_now = set(connections)  # forget connections that have ended meanwhile
            for gone in [h for h in self._unauthenticated if h not in open_now]:
                del self._unauthenticated[gone]
        handler = self._server()
        self._unauthenticated[handler] = None
        return handler

    @property
    def port(self) -> int:
        return self.addresses[0][1]

    def begin_shutdown(self) -> None:
        """From now on: new requests get 503, replies carry ``Connection: close``."""
        self.stopping = True

    async def close(self, timeout: float = 10.0) -> None:
        """Stop listening, let running requests finish (their replies go out), drain workers."""
        self.stopping = True
        for listener in self._listeners:
            listener.close()
        for listener in self._listeners:
            with contextlib.suppress(Exception):
                await listener.wait_closed()
        self._listeners.clear()
        if self._server is not None:
            # Idle keep-alive connections are closed now (a connection in the middle of a
            # request closes once its reply is out); without this, aiohttp's shutdown waits
            # the whole timeout for every idle client (AuthServiceProxy keeps one open).
            for connection in self._server.connections:
                connection.close()
            with contextlib.suppress(Exception):
                await self._server.shutdown(timeout)
            self._server = None
        await asyncio.get_running_loop().run_in_executor(None, self._queue.shutdown)

    # --- requests ------------------------------------------------------------------------------

    def _make_request(self, message: RawRequestMessage, payload: StreamReader,
                      protocol: Any, writer: Any, task: asyncio.Task[None]) -> web.BaseRequest:
        return _Request(message, payload, protocol, writer, task,
                        asyncio.get_running_loop(), client_max_size=MAX_BODY)

    def _peer_allowed(self, request: web.BaseRequest) -> bool:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        if not peer:
            return False
        host = peer[0]
        allowed = self._peer_verdicts.get(host)
        if allowed is None:
            allowed = self._check_peer(host)
            if len(self._peer_verdicts) < 4096:
                self._peer_verdicts[host] = allowed
        return allowed

    def _check_peer(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in net for net in self._allowed if net.version == address.version)

    def _reply(self, status: int, body: bytes | None = None, *,
               headers: dict[str, str] | None = None, text: str | None = None) -> web.Response:
        response_headers = dict(headers or {})
        if text is not None:
            body = text.encode()
            response_headers.setdefault("Content-Type", "text/plain")
        response = web.Response(status=status, body=body, headers=response_headers)
        if self.stopping:
            response.force_close()
            response.headers["Connection"] = "close"
        return response

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        if not self._peer_allowed(request):
            return self._reply(403)
        if self.stopping:
            return self._reply(503, text="Service Unavailable")
        header_bytes = len(request.raw_path) + sum(len(k) + len(v) + 4
                                                   for k, v in request.raw_headers)
        if header_bytes > MAX_HEADERS_SIZE:
            return self._reply(400)
        raw_path = request.raw_path
        if raw_path == "/":
            wallet: str | None = None
        elif raw_path.startswith(WALLET_PREFIX):
            try:
                wallet = unquote(raw_path[len(WALLET_PREFIX):], errors="strict")
            except UnicodeDecodeError:
                return self._reply(404)
        else:
            return self._reply(404)
        if request.method != "POST":
            return self._reply(405, text="JSONRPC server handles only POST requests")
        header = request.headers.get("Authorization")
        if header is None:
            return self._reply(401, headers={"WWW-Authenticate": 'Basic realm="jsonrpc"'})
        user = self._credentials.check_header(header)
        if user is None:
            peer = request.transport.get_extra_info("peername") if request.transport else None
            await self._throttle.failed(format_peer(peer))
            return self._reply(401, headers={"WWW-Authenticate": 'Basic realm="jsonrpc"'})
        self._unauthenticated.pop(request.protocol, None)
        if request.content_length is not None and request.content_length > MAX_BODY:
            return self._reply(413)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._reply(413)
        if not self._queue.try_enter():
            log.warning("Request rejected because http work queue depth exceeded, it can be "
                        "increased with the -rpcworkqueue= setting")
            return self._reply(503, text="Work queue depth exceeded")
        self.in_flight += 1
        try:
            status, payload = await self._queue.run(self._dispatch, body, wallet, user)
        finally:
            self.in_flight -= 1
        if payload is None:
            return self._reply(status)
        return self._reply(status, payload, headers=JSON_HEADERS)
