"""``ctplugin node``: a regtest node served over JSON-RPC, started and stopped as elementsd is.

Start-up order (bitcoind's): the cookie is written and the HTTP server listens first, so clients
can authenticate and get -28 "Loading block index…" while the data directory is opened (crash
recovery included), ``--load-chain`` is imported, the wallets load and catch up; then warm-up ends.
``stop``, SIGTERM and SIGINT shut down the same way: the stop reply goes out, new requests get 503,
running calls finish (long waits end with -9), the work queue drains, the listeners close, the
node and wallets are closed, the cookie is removed, exit code 0 (130 after Ctrl-C/SIGINT, with
one line on stderr). The node's files are in
``DATADIR/<chain>/`` (docs/elements-regtest.md §4); ``ctplugin.pid`` there holds the running
node's process id (bitcoind's ``-pid`` file). ``debug.log`` there is written as bitcoind's
(``rpc.logs``: UTC times, ``-debug=CATEGORY``, ``-loglevel``; the lines: ``rpc.chainlog``).

``--daemon`` returns once the node answers calls (like ``-daemonwait``), leaving it in the
background; its output goes to ``DATADIR/<chain>/debug.log`` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Sequence

from ctplugin.elements.chainparams import ChainOptionError
from rpc.config import NodeConfig, parse_config
from rpc.daemon import INTERRUPTED, StartupError, prepare_datadir, serve, setup_process
from rpc.logs import setup_logging
from rpc.server import RpcHttpServer
from rpc.startup import chain_params

log = logging.getLogger("ctplugin.rpc")

DESCRIPTION = """\
A regtest node for confidential transactions, started, configured and driven as elementsd:
JSON-RPC (call it with "ctplugin cli"), mining, wallets with confidential addresses, P2P and
ZMQ. Its files go in DATADIR/<chain>/: the blocks, the chainstate, the wallets, the .cookie
for JSON-RPC, ctplugin.pid and debug.log. Options can also be written in
DATADIR/elements.conf, one name=value a line, as elementsd reads its file.

  ctplugin node --datadir /tmp/ctnode --daemon
  ctplugin cli --datadir /tmp/ctnode -getinfo
  ctplugin cli --datadir /tmp/ctnode stop

--daemon returns once the node answers calls, leaving it in the background. "stop", SIGTERM
and Ctrl-C shut it down cleanly (exit status 0; 130 after Ctrl-C). Options are spelled
--name=value or, as elementsd's, -name=value; -noname turns a flag off.
"""


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


def _daemonize() -> Ready:
    """Fork into the background: returns in the detached child only; the parent exits once
    the child reports its start-up outcome."""
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
    config = parse_config(sys.argv[1:] if argv is None else argv, "ctplugin node", DESCRIPTION)
    return run(config)


def run(config: NodeConfig, announce: bool = True, prog: str = "ctplugin node") -> int:
    """Start the node of ``config`` and serve until it stops: the exit status. ``announce``
    prints its one line on stdout once it answers (elementsd prints nothing there); ``prog``
    names the program in the line of a Ctrl-C."""
    setup_process()  # umask 077 before anything is written, the fd limit raised
    try:
        chain_params(config)  # a chain option it cannot honour: refused before anything starts
        os.makedirs(config.datadir, exist_ok=True)
        prepare_datadir(config)
    except ChainOptionError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"Error: cannot create data directory {config.datadir}: {exc}", file=sys.stderr)
        return 1
    except StartupError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    try:  # before the fork, so a daemon that cannot log says so on the terminal
        setup_logging(config.netdir, config.logging,
                      console=config.printtoconsole and not config.daemon)
    except OSError as exc:  # Core's words for a data directory it cannot write
        print(f"Error: Cannot write to data directory '{config.netdir}'; check permissions "
              f"({exc.strerror or exc}).", file=sys.stderr)
        return 1
    if config.daemon:  # bitcoind's "Bitcoin Core starting", before it goes to the background
        print(f"{prog} starting", flush=True)
    ready = _daemonize() if config.daemon else None
    for name in config.ignored_config:
        log.warning("Ignoring unknown configuration value %s", name)
    for warning in config.warnings:  # Core's InitWarning: the log, and stderr
        log.warning("%s", warning)
        if ready is None:
            print(warning, file=sys.stderr)

    def on_ready(server: RpcHttpServer) -> None:  # a foreground node's one line on stdout
        if announce:
            host, port = server.addresses[0]
            print(f"ctplugin node: http://{host}:{port}/ datadir {config.datadir}", flush=True)

    try:
        status = asyncio.run(serve(config, ready.ok if ready is not None else on_ready))
        if status == INTERRUPTED and ready is None:
            print(f"{prog}: interrupted; the node shut down cleanly", file=sys.stderr)
        return status
    except StartupError as exc:
        log.error("%s", exc)
        if ready is not None:
            ready.failed(str(exc))
        else:
            print(str(exc), file=sys.stderr)
        return 1
