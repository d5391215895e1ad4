"""``ctplugin node``: a regtest node served over JSON-RPC, started and stopped as elementsd is.

Start-up order (bitcoind's): the cookie is written and the HTTP server listens first, so clients
can authenticate and get -28 "Loading block index…" while the data directory is opened (crash
recovery included), ``--load-chain`` is imported, the wallets load and catch up; then warm-up ends.
``stop``, SIGTERM and SIGINT shut down the same way: the stop reply goes out, new requests get 503,
running calls finish (long waits end with -9), the work queue drains, the listeners close, the
node and wallets are closed, the cookie is removed, exit code 0. ``DATADIR/ctplugin.pid`` holds
the running node's process id (bitcoind's ``-pid`` file).

``--chain NAME`` (elementsd's ``-chain=NAME``) selects one of our chains
(``regtest.params.select_chain``, ``ctregtest`` by default); a data directory made for another
chain is refused at start-up (exit 1, both names in the message).

``--daemon`` returns once the node answers calls (like ``-daemonwait``), leaving it in the
background; its output goes to ``DATADIR/debug.log`` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import ipaddress
import logging
import os
import signal
import sys
from collections.abc import Sequence

import rpc.methods  # noqa: F401  (registers every RPC method)
from ctplugin.closing import Closeable
from rpc.auth import AuthConfigError, CookieFile, Credentials
from rpc.config import NodeConfig, parse_config
from rpc.context import NodeContext
from rpc.server import HttpConfig, RpcHttpServer, parse_allowip
from rpc.startup import close_node, open_node

log = logging.getLogger("ctplugin.rpc")


class StartupError(Exception):
    """The node cannot start (message for the user; exit code 1)."""


def setup_logging(config: NodeConfig) -> None:
    root = logging.getLogger("ctplugin")
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    formatter = logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%dT%H:%M:%SZ")
    file_handler = logging.FileHandler(os.path.join(config.datadir, "debug.log"))
    file_handler.setFormatter(formatter)
    root.addHandler(file_handler)
    if config.printtoconsole and not config.daemon:
        console = logging.StreamHandler(sys.stdout)
        console.setFormatter(formatter)
        root.addHandler(console)
    root.propagate = False


def _split_hostport(spec: str, default_port: int) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6]:port``; ValueError for a port outside 1..65535."""
    if spec.startswith("["):
        host, _, rest = spec[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
    elif spec.count(":") == 1:
        host, _, port = spec.partition(":")
    else:
        host, port = spec, None
    if port is None:
        return host, default_port
    number = int(port)
    if not 1 <= number <= 65535:
        raise ValueError(f"port {port} out of range")
    return host, number


def http_config(config: NodeConfig) -> HttpConfig:
    """Binding rules of node-rpc.md §2.1: loopback unless both rpcbind and rpcallowip."""
    try:
        allow = tuple(parse_allowip(spec) for spec in config.rpcallowip)
    except ValueError as exc:
        raise StartupError(f"Error: {exc}") from None
    if config.rpcbind and not config.rpcallowip:
        log.warning("WARNING: option -rpcbind was ignored because -rpcallowip was not "
                    "specified, refusing to allow everyone to connect")
    if config.rpcallowip and not config.rpcbind:
        log.warning("WARNING: option -rpcallowip was specified without -rpcbind; this doesn't "
                    "usually make sense")
    if config.rpcbind and config.rpcallowip:
        try:
            bind = tuple(_split_hostport(spec, config.rpcport) for spec in config.rpcbind)
        except ValueError:
            raise StartupError(f"Error: Invalid port specified in -rpcbind: "
                               f"'{', '.join(config.rpcbind)}'") from None
        for host, _ in bind:
            with contextlib.suppress(ValueError):
                if ipaddress.ip_address(host).is_unspecified:
                    log.warning("WARNING: the RPC server is not safe to expose to untrusted "
                                "networks such as the public internet")
    else:
        bind = (("127.0.0.1", config.rpcport), ("::1", config.rpcport))
    return HttpConfig(bind=bind, allow=allow, threads=config.rpcthreads,
                      workqueue=config.rpcworkqueue, timeout=config.rpcservertimeout)


def make_credentials(config: NodeConfig) -> tuple[Credentials, CookieFile | None]:
    cookie = None if config.rpcpassword is not None else CookieFile(config.cookie_path)
    try:
        credentials = Credentials(cookie=cookie.secret if cookie else None,
                                  user=config.rpcuser, password=config.rpcpassword,
                                  rpcauth=config.rpcauth)
    except AuthConfigError as exc:
        raise StartupError(str(exc)) from None
    return credentials, cookie


class DataDirLock(Closeable):
    """bitcoind's ``DATADIR/.lock``: one node per data directory, taken before anything is
    written (a second node must not replace the first one's cookie)."""

    def __init__(self, datadir: str) -> None:
        self.path = os.path.join(datadir, ".lock")
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            self._fd = None
            raise StartupError(f"Error: Cannot obtain a lock on data directory {datadir}. "
                               "ctplugin node is probably already running.") from None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None


PID_FILENAME = "ctplugin.pid"


async def serve(config: NodeConfig, ready: Ready | None = None) -> int:
    with DataDirLock(config.datadir):
        # bitcoind's -pid file: the running node's process id (the daemon's, after the fork),
        # for scripts and service managers; removed on exit.
        pid_path = os.path.join(config.datadir, PID_FILENAME)
        try:
            with open(pid_path, "w", encoding="ascii") as handle:
                handle.write(f"{os.getpid()}\n")
        except OSError as exc:
            raise StartupError(f"Error: cannot write {pid_path}: {exc}") from None
        try:
            return await _serve(config, ready)
        finally:
            with contextlib.suppress(OSError):
                os.remove(pid_path)


async def _serve(config: NodeConfig, ready: Ready | None) -> int:
    ctx = NodeContext(config)
    credentials, cookie = make_credentials(config)
    http = http_config(config)
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()

    def wake() -> None:  # from any thread
        loop.call_soon_threadsafe(stop_requested.set)

    ctx.on_shutdown_request = wake
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, ctx.request_shutdown)
    if cookie is not None:
        try:
            cookie.write()
        except OSError as exc:
            raise StartupError(f"Unable to start HTTP server: cannot write {cookie.path}: "
                               f"{exc}") from None
    server = RpcHttpServer(ctx.dispatch, credentials, http)
    try:
        try:
            await server.start()
        except OSError as exc:
            raise StartupError(f"Unable to bind RPC port {config.rpcport}: {exc}") from None
        log.info("ctplugin node: JSON-RPC on %s", ", ".join(f"{h}:{p}" for h, p in
                                                          server.addresses))
        try:
            await loop.run_in_executor(None, open_node, ctx)
        except Exception as exc:
            log.exception("start-up failed")
            raise StartupError(f"Error: {exc}") from None
        ctx.set_warmup(None)
        if ready is not None:
            ready.ok(server)
        elif not config.daemon:
            host, port = server.addresses[0]
            print(f"ctplugin node: http://{host}:{port}/ datadir {config.datadir}", flush=True)
        await stop_requested.wait()
        log.info("Shutdown: requested")
        server.begin_shutdown()
    finally:
        await server.close()
        await loop.run_in_executor(None, close_node, ctx)
        if cookie is not None:
            cookie.remove()
        log.info("Shutdown: done")
    return 0


class Ready:
    """Start-up outcome reported to a waiting parent (``--daemon``) over a pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def ok(self, server: RpcHttpServer) -> None:
        self._send(b"ok\n")

    def failed(self, message: str) -> None:
        self._send(("error " + message + "\n").encode())

    def _send(self, data: bytes) -> None:
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):
            os.write(self.fd, data)
            os.close(self.fd)
        self.fd = -1


def _daemonize() -> Ready | None:
    """Fork into the background; the parent exits once the child reports (None in the
    parent's place never returns)."""
    read_fd, write_fd = os.pipe()
    if os.fork() > 0:
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            message = pipe.readline().decode(errors="replace").strip()
        if message == "ok":
            os._exit(0)
        print(message.removeprefix("error ") or "Error: node exited during start-up",
              file=sys.stderr)
        os._exit(1)
    os.close(read_fd)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    return Ready(write_fd)


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_config(sys.argv[1:] if argv is None else argv, "ctplugin node", __doc__)
    try:
        os.makedirs(config.datadir, exist_ok=True)
    except OSError as exc:
        print(f"Error: cannot create data directory {config.datadir}: {exc}", file=sys.stderr)
        return 1
    ready = _daemonize() if config.daemon else None
    setup_logging(config)
    for name in config.ignored_config:
        log.warning("Ignoring unknown configuration value %s", name)
    try:
        return asyncio.run(serve(config, ready))
    except StartupError as exc:
        log.error("%s", exc)
        if ready is not None:
            ready.failed(str(exc))
        else:
            print(str(exc), file=sys.stderr)
        return 1
