"""The node's lifetime: ``serve(config, on_ready)`` runs one regtest node until it is stopped
(the command line around it, daemonizing and logging set-up are ``apps.node``).

Everything is in the chain's own directory ``DATADIR/<chain>/`` (``NodeConfig.netdir``;
``prepare_datadir`` makes it as elementsd does, docs/elements-regtest.md §4).
Start-up order (bitcoind's): the data directory's lock and ``ctplugin.pid``, then the
cookie is written and the HTTP server listens, so clients can authenticate and get -28 "Loading
block index…" while the data directory is opened (crash recovery included), ``--load-chain`` is
imported, the wallets load and catch up; then warm-up ends and ``on_ready`` is called.
``stop``, SIGTERM and SIGINT shut down the same way: the stop reply goes out, new requests get
503, running calls finish (long waits end with -9), the work queue drains, the listeners close,
the node and wallets are closed, the cookie and the pid file are removed, and ``serve`` returns 0
(``INTERRUPTED``, 130, after SIGINT: Ctrl-C's status, as every command's).
A node that cannot start raises ``StartupError`` (its message is for the user).

``setup_process`` is the process set-up of bitcoind's ``SetupEnvironment`` and
``AppInitParameterInteraction``, done first by every command line that starts a node: umask 077,
so everything the node writes (data directory, wallets and their seeds, cookie, debug.log) is
its owner's only, and the soft file-descriptor limit raised toward the hard one
(``RaiseFileDescriptorLimit``); the HTTP server's connection bound is what that limit leaves
after the node's own files and P2P peers (docs/node-rpc.md §2.8). It also shortens the GIL's
switch interval to 1 ms (``SWITCH_INTERVAL``), so that a reply is not held up by a busy thread,
and sets the garbage collector's thresholds for validation (``validator.tune_collector``).

``--chain NAME`` (elementsd's ``-chain=NAME``) selects one of our chains
(``regtest.params.select_chain``, ``ctregtest`` by default); a data directory made for another
chain is refused at start-up (exit 1, both names in the message).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import ipaddress
import logging
import os
import resource
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import rpc.methods  # noqa: F401  (registers every RPC method)
from ctplugin.closing import Closeable
from net import ConnectionManager, NetSettings, split_address
from net.banman import BANLIST_FILE
from net.permissions import Whitelist, WhitelistError
from rpc.auth import AuthConfigError, CookieFile, Credentials
from rpc.config import NodeConfig, subversion
from rpc.context import NodeContext
from rpc.logs import readable
from rpc.server import HttpConfig, RpcHttpServer, parse_allowip
from rpc.startup import close_node, open_node
from validator import StoreError, tune_collector

log = logging.getLogger("ctplugin.rpc")


class StartupError(Exception):
    """The node cannot start (message for the user; exit code 1)."""


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


PRIVATE_UMASK = 0o077  # bitcoind's SetupEnvironment (src/common/system.cpp)
WANTED_FDS = 65536  # the soft limit asked for: room for every RPC and P2P connection
# How long a thread holding the GIL keeps it while another waits (Python's default: 5 ms).
# The HTTP loop needs the GIL to send a reply while, e.g., the wallets scan the block a call
# just connected: at 5 ms, half the generatetoaddress replies of a 1000-transaction block
# waited 5.4 ms for it, at 1 ms none did (docs/design.md §7).
SWITCH_INTERVAL = 0.001
RESERVED_FDS = 256  # LevelDB tables, block files, logs, ZMQ, the wallet databases


def raise_fd_limit(wanted: int = WANTED_FDS) -> int:
    """Raise the soft ``RLIMIT_NOFILE`` toward ``wanted``, within the hard limit (Core's
    ``RaiseFileDescriptorLimit``); the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return WANTED_FDS if soft == resource.RLIM_INFINITY else int(soft)


def setup_process() -> int:
    """umask 077, the raised fd limit, the GIL's switch interval and the garbage collector's
    thresholds for validation (module docstring); the soft fd limit."""
    os.umask(PRIVATE_UMASK)
    sys.setswitchinterval(SWITCH_INTERVAL)
    tune_collector()
    return raise_fd_limit()


def max_http_connections(config: NodeConfig) -> int:
    """Open HTTP connections the fd limit leaves room for, after the node's files and its
    P2P peers (at least 16, so a tight limit still admits clients: the oldest idle ones are
    closed to make room, ``rpc.server``)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    available = WANTED_FDS if soft == resource.RLIM_INFINITY else int(soft)
    return max(16, available - RESERVED_FDS - config.maxconnections)


def http_config(config: NodeConfig) -> HttpConfig:
    """Binding rules of docs/node-rpc.md §2.1: loopback unless both rpcbind and rpcallowip."""
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
                      workqueue=config.rpcworkqueue, timeout=config.rpcservertimeout,
                      max_connections=max_http_connections(config))


def make_credentials(config: NodeConfig) -> tuple[Credentials, CookieFile | None]:
    """The node's credentials and its cookie (None with a static password). An empty
    ``-rpcpassword=`` is unset, as bitcoind's ``GetArg("-rpcpassword", "") == ""``: the cookie
    is written and used, and ``-rpcuser`` goes with it unused (docs/node-rpc.md §2.2)."""
    password = config.rpcpassword or None
    cookie = None if password is not None else CookieFile(config.cookie_path)
    try:
        credentials = Credentials(cookie=cookie.secret if cookie else None,
                                  user=config.rpcuser if password else None, password=password,
                                  rpcauth=config.rpcauth)
    except AuthConfigError as exc:
        raise StartupError(str(exc)) from None
    return credentials, cookie


class DataDirLock(Closeable):
    """bitcoind's ``DATADIR/.lock``: one node per data directory, taken before anything is
    written (a second node must not replace the first one's cookie)."""

    def __init__(self, datadir: str) -> None:
        self.path = os.path.join(datadir, ".lock")
        try:
            self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:  # Core's words (its DirIsWritable check at the lock)
            raise StartupError(f"Error: Cannot write to data directory '{datadir}'; check "
                               f"permissions ({exc.strerror or exc}).") from None
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


INTERRUPTED = 128 + signal.SIGINT  # a shell's status of a command ended by Ctrl-C
PID_FILENAME = "ctplugin.pid"
SETTINGS_JSON = "settings.json"
WALLETS_DIR = "wallets"
OLD_LAYOUT_MARKERS = ("chain", "chainstate")  # what a flat (pre-<chain>/) data directory holds
OnReady = Callable[[RpcHttpServer], None]


def prepare_datadir(config: NodeConfig) -> None:
    """Make ``DATADIR/<chain>/`` as elementsd does on a first start: the directory, an empty
    ``wallets/`` (even with -disablewallet: the framework's cache builder expects it) and
    ``settings.json``. A data directory of the old flat layout (the node's files directly in
    DATADIR) is refused with the one command that moves it."""
    netdir = config.netdir
    if not os.path.isdir(netdir):
        old = [name for name in OLD_LAYOUT_MARKERS
               if os.path.exists(os.path.join(config.datadir, name))]
        if old:
            raise StartupError(_old_layout_message(config))
    try:
        os.makedirs(os.path.join(netdir, WALLETS_DIR), exist_ok=True)
        settings = os.path.join(netdir, SETTINGS_JSON)
        if not os.path.exists(settings):
            with open(settings, "w", encoding="utf-8") as handle:
                handle.write("{\n}\n")
    except OSError as exc:
        raise StartupError(f"Error: cannot create data directory {netdir}: {exc}") from None


def _old_layout_message(config: NodeConfig) -> str:
    chain = config.chain
    with (contextlib.suppress(OSError, UnicodeDecodeError),
          open(os.path.join(config.datadir, "chain"), encoding="utf-8") as handle):
        chain = handle.read().strip() or chain
    return (f"Error: {config.datadir} has the old flat layout; its chain now lives in "
            f"DATADIR/<chain>/: move it with `mkdir {config.datadir}/{chain} && mv "
            f"{config.datadir}/* {config.datadir}/{chain}/` (docs/elements-regtest.md §4)")


async def serve(config: NodeConfig, on_ready: OnReady | None = None) -> int:
    """Run the node of ``config`` until it is asked to stop; 0. ``on_ready(server)`` is
    called once warm-up has ended (the node answers every call)."""
    prepare_datadir(config)
    with DataDirLock(config.netdir):
        # bitcoind's -pid file: the running node's process id (the daemon's, after the fork),
        # for scripts and service managers; removed on exit.
        pid_path = os.path.join(config.netdir, PID_FILENAME)
        try:
            with open(pid_path, "w", encoding="ascii") as handle:
                handle.write(f"{os.getpid()}\n")
        except OSError as exc:
            raise StartupError(f"Error: cannot write {pid_path}: {exc}") from None
        try:
            return await _serve(config, on_ready)
        finally:
            with contextlib.suppress(OSError):
                os.remove(pid_path)


def net_settings(config: NodeConfig, magic: bytes) -> NetSettings:
    """The P2P options of ``config`` (docs/p2p.md §7.1); ``StartupError`` for a bad -bind."""
    try:
        bind = tuple(split_address(spec, config.port) for spec in config.bind)
    except ValueError:
        raise StartupError(f"Error: Invalid port specified in -bind: "
                           f"'{', '.join(config.bind)}'") from None
    try:
        whitelist = tuple(Whitelist.parse(spec) for spec in config.whitelist)
    except WhitelistError as exc:
        raise StartupError(f"Error: {exc}") from None
    return NetSettings(magic=magic, user_agent=subversion(config), listen=config.listen,
                       bind=bind, connect=config.connect, addnode=config.addnode,
                       max_connections=config.maxconnections,
                       min_fee_rate=config.relay.minrelaytxfee, whitelist=whitelist,
                       peer_timeout=config.peertimeout,
                       banlist=Path(config.netdir) / BANLIST_FILE, ban_time=config.bantime)


async def start_network(ctx: NodeContext) -> None:
    """Listen and connect as the P2P options say (after warm-up's chain is open)."""
    config = ctx.config
    node = ctx.node
    manager = ConnectionManager(node, ctx.chain_lock, net_settings(config,
                                node.params.network_magic), config.port, clock=ctx.clock)
    try:
        await manager.start()
    except OSError as exc:
        await manager.close()
        raise StartupError(f"Error: Unable to bind to P2P port {config.port} "
                           f"({exc.strerror or exc})") from None
    ctx.net = manager


async def _serve(config: NodeConfig, on_ready: OnReady | None) -> int:
    ctx = NodeContext(config)
    credentials, cookie = make_credentials(config)
    http = http_config(config)
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()

    def wake() -> None:  # from any thread
        loop.call_soon_threadsafe(stop_requested.set)

    ctx.on_shutdown_request = wake
    interrupted = False

    def on_interrupt() -> None:  # Ctrl-C: the same clean shutdown, told apart in the status
        nonlocal interrupted
        interrupted = True
        ctx.request_shutdown()

    loop.add_signal_handler(signal.SIGTERM, ctx.request_shutdown)
    loop.add_signal_handler(signal.SIGINT, on_interrupt)
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
        except StoreError as exc:  # the data directory's own words (a refusal): no traceback
            raise StartupError(f"Error: {readable(str(exc))}") from None
        except Exception as exc:
            log.exception("start-up failed")
            raise StartupError(f"Error: {readable(str(exc))}") from None
        await start_network(ctx)
        ctx.set_warmup(None)
        if on_ready is not None:
            on_ready(server)
        await stop_requested.wait()
        log.info("Shutdown: requested")
        server.begin_shutdown()
    finally:
        await server.close()
        if ctx.net is not None:
            await ctx.net.close()
            ctx.net = None
        await loop.run_in_executor(None, close_node, ctx)
        if cookie is not None:
            cookie.remove()
        log.info("Shutdown: done")
    if ctx.fatal_error is not None:  # a store failed while running (NodeContext.abort)
        return 1
    return INTERRUPTED if interrupted else 0
