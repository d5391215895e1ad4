"""This node as a child process (``ctplugin node``), for ``ctplugin demo dlc``, the integration
tests and the rpc benchmark: 127.0.0.1 on a free port, a data directory of the caller's, stopped
by ``stop`` (or killed). It is started as ``python -m apps.main node`` and driven over HTTP
only, as a peer's software drives elementsd, through the leaf client ``rpcclient``: nothing of
the running node is imported here."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import rpcclient
from regtest.params import DEFAULT_CHAIN
from rpcclient import RPCClient, RPCClientError

# The directory holding the ``rpc`` package (a checkout, or site-packages): the child imports the
# same code as its parent.
PACKAGES_ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


NODE_COMMAND = ("apps.main", "node")
"""``ctplugin node``."""
ELEMENTSD_COMMAND = ("apps.elementsd",)
"""``ctplugin-elementsd``: elementsd's command line and defaults (give it ``-chain=``)."""


class NodeProcess:
    """``ctplugin node`` (``python -m apps.main node``; ``command``: another of the node's
    command lines, e.g. ``ELEMENTSD_COMMAND``) on 127.0.0.1:<free port> in ``datadir``."""

    def __init__(self, datadir: Path, *args: str, port: int | None = None,
                 command: tuple[str, ...] = NODE_COMMAND) -> None:
        self.datadir = datadir
        self.port = port or free_port()
        self.args = list(args)
        self.command = command
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def chain(self) -> str:
        """The chain its arguments select (``--chain NAME``, ``-chain=NAME``), else the
        node's default."""
        chain = DEFAULT_CHAIN
        for i, arg in enumerate(self.args):
            name, equals, value = arg.lstrip("-").partition("=")
            if name == "chain":
                chain = value if equals else self.args[i + 1]
        return chain

    @property
    def netdir(self) -> Path:
        """Where the node keeps its files: ``DATADIR/<chain>/`` (docs/elements-regtest.md §4)."""
        return self.datadir / self.chain

    @property
    def cookie_path(self) -> Path:
        return rpcclient.cookie_path(self.datadir, chain_subdir=self.chain)

    def start(self, *extra: str, wait: bool = True, timeout: float = 60) -> NodeProcess:
        env = dict(os.environ, PYTHONPATH=str(PACKAGES_ROOT))
        self.datadir.mkdir(parents=True, exist_ok=True)
        self._out = (self.datadir.parent / f"{self.datadir.name}.stdout").open("ab")
        self._err = (self.datadir.parent / f"{self.datadir.name}.stderr").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", *self.command, "--datadir", str(self.datadir),
             "--rpcport", str(self.port), *self.args, *extra],
            cwd=PACKAGES_ROOT, env=env, stdout=self._out, stderr=self._err)
        if wait:
            try:
                self.wait_ready(timeout)
            except BaseException:
                self.kill()  # never leave a node behind
                raise
        return self

    def auth(self) -> rpcclient.Auth:
        """--rpcuser/--rpcpassword when the node was given them, else its cookie file."""
        if "--rpcpassword" in self.args:
            user = self.args[self.args.index("--rpcuser") + 1] if "--rpcuser" in self.args \
                else ""
            return rpcclient.Auth(user, self.args[self.args.index("--rpcpassword") + 1])
        return rpcclient.Auth(cookie_file=self.cookie_path)

    def credentials(self) -> tuple[str, str]:
        """(user, password) now: the node's arguments', or its cookie's."""
        return self.auth().credentials()

    def url(self, path: str = "", credentials: tuple[str, str] | None = None) -> str:
        user, password = credentials or self.credentials()
        return f"http://{user}:{password}@127.0.0.1:{self.port}{path}"

    def proxy(self, path: str = "", timeout: float = 120) -> Any:
        """python-bitcoinrpc's AuthServiceProxy with the cookie in the URL (it does no cookie
        discovery of its own)."""
        from bitcoinrpc.authproxy import AuthServiceProxy  # a test dependency

        return AuthServiceProxy(self.url(path), timeout=timeout)

    def client(self, path: str = "", timeout: float = 600) -> RPCClient:
        """An ``RPCClient`` of this node (a cookie is read when a call is sent); one per
        thread."""
        return RPCClient("127.0.0.1", self.port, auth=self.auth(), path=path or "/",
                         timeout=timeout)

    def call(self, method: str, *params: Any, path: str = "", timeout: float = 600) -> Any:
        """One JSON-RPC call on a fresh connection: ``rpcclient.RPCError`` when the node
        answers an error, another ``RPCClientError`` when it does not answer."""
        with self.client(path, timeout) as client:
            return client.call(method, *params)

    def wait_ready(self, timeout: float = 60) -> None:
        """Poll as the Core test framework does: cookie, then getblockcount without -28."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"node exited with {self.process.returncode}: "
                                   f"{self.stderr_text()}")
            with contextlib.suppress(OSError, RPCClientError):
                if self.cookie_path.exists() or "--rpcpassword" in self.args:
                    self.call("getblockcount")
                    return
            time.sleep(0.1)
        raise TimeoutError("node did not become ready")

    def stop(self, timeout: float = 30) -> int:
        """``stop`` over RPC, then wait; killed if it does not exit. Returns the exit code."""
        process = self.process
        if process is None:
            return 0
        with contextlib.suppress(Exception):
            self.call("stop")
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self.process = None
        self._out.close()
        self._err.close()
        return process.returncode

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None
            self._out.close()
            self._err.close()

    def stderr_text(self) -> str:
        path = self.datadir.parent / f"{self.datadir.name}.stderr"
        return path.read_text() if path.exists() else ""
