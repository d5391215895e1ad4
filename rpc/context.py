"""The running node as RPC methods see it: validator node, wallets, ZMQ, locks, warm-up, shutdown.

Dispatch of one call (``NodeContext.execute``), in bitcoind's order: during warm-up every call is
-28 with the current status ("Loading block index…"); an unknown method is -32601; then the
method's argument count and types (``rpc.registry``); then the handler, under the chain lock (and
its wallet's lock for wallet calls) unless it manages its locks itself. An exception that is not
an ``RpcError`` is a bug or a library error: it is logged with its traceback and answered as a
JSON-RPC error -1 with its message (never as a bare HTTP 500).

Locks: ``chain_lock`` (re-entrant, Core's cs_main) guards the validator node, the mempool and the
event delivery; each wallet has its own lock, always taken after ``chain_lock`` when both are held.
``tip_changed`` is a condition on ``chain_lock`` notified on every connected or disconnected block
and on shutdown (waitfornewblock and friends wait on it).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctplugin.elements import Block
from ctplugin.errors import CtpluginError
from regtest.wallet.node_wallet import WalletSettings
from rpc.errors import RpcCode, RpcError
from rpc.jsonrpc import Params, handle_body
from rpc.logs import category_logger
from rpc.params import amount_from_value
from rpc.registry import REGISTRY, Locking
from validator import Node, StoreFatalError

if TYPE_CHECKING:
    from net import ConnectionManager
    from rpc.config import NodeConfig
    from rpc.events import NodeEvents, QueuedListener
    from rpc.txindex import TxIndex
    from rpc.wallets import NodeWallet, WalletManager
    from rpc.zmqpub import ZmqPublisher

log = logging.getLogger("ctplugin.rpc")
rpc_log = category_logger("rpc")


def _fee_rate(text: str) -> int:
    """A BTC/kvB option value in satoshis per 1000 virtual bytes."""
    return amount_from_value(text)


@dataclass(slots=True)
class Call:
    """One executing call: the node process's context, the wallet named by the URI (None for
    ``/``), the method."""

    context: NodeContext
    uri_wallet: str | None
    method: str

    @property
    def node(self) -> Node:
        """The validator node (-28 until it is open)."""
        return self.context.node

    @property
    def wallet(self) -> NodeWallet:
        """The wallet this call addresses (bitcoind's GetWalletForJSONRPCRequest)."""
        return self.context.wallets.for_request(self.uri_wallet)


@dataclass(slots=True)
class ActiveCommand:
    method: str
    started: float


class NodeContext:
    """Everything one node process serves (module docstring)."""

    def __init__(self, config: NodeConfig) -> None:
        self.config = config
        self.started = time.time()
        self.chain_lock = threading.RLock()
        self.tip_changed = threading.Condition(self.chain_lock)
        self.shutdown = threading.Event()
        self._warmup: str | None = "Loading block index…"
        self._node: Node | None = None
        self.events: NodeEvents | None = None
        self._wallets: WalletManager | None = None
        self.wallet_events: QueuedListener | None = None  # the wallets' event queue
        self.zmq: ZmqPublisher | None = None
        self.net: ConnectionManager | None = None  # the P2P side, once warm-up is over
        self.txindex: TxIndex | None = None
        self.on_shutdown_request: Callable[[], None] | None = None
        self.fatal_error: str | None = None
        """A store failed while running (``abort``): the process exits with status 1, as
        bitcoind after AbortNode."""
        self._active: dict[int, ActiveCommand] = {}
        self._active_lock = threading.Lock()
        self.mempool_loaded = False
        self.fallback_fee_rate = _fee_rate(config.fallbackfee)  # sat/kvB
        self.wallet_fee_rate = 0  # settxfee's rate (sat/kvB); 0: estimate (the fallback fee)
        self.max_tx_fee = amount_from_value(config.maxtxfee)  # satoshis (-maxtxfee)
        self.mocktime = 0  # setmocktime: 0 = the wall clock
        self.left_ibd = False  # Core's latch: once out of initial block download, never back
        self.last_block: Block | None = None  # the last block assembled: getmininginfo
        self.wallet_settings = WalletSettings()  # the chain's, once the node opens

    # --- state -------------------------------------------------------------------------------

    @property
    def node(self) -> Node:
        """The validator node (``validator.node.Node``); -28 until it is open."""
        if self._node is None:
            raise RpcError(RpcCode.IN_WARMUP, self._warmup or "Loading block index…")
        return self._node

    @node.setter
    def node(self, node: Node | None) -> None:
        self._node = node

    @property
    def mempool_sequence(self) -> int:
        """bitcoind's m_sequence_number: the number the next mempool event will carry."""
        return (self.events.mempool_sequence if self.events is not None else 0) + 1

    @property
    def node_or_none(self) -> Node | None:
        return self._node

    @property
    def wallets(self) -> WalletManager:
        """The wallet manager; wallet calls are "Method not found" with --disablewallet, as
        bitcoind never registers them then."""
        if self._wallets is None:
            if self._warmup is not None:
                raise RpcError(RpcCode.IN_WARMUP, self._warmup)
            raise RpcError(RpcCode.METHOD_NOT_FOUND, "Method not found")
        return self._wallets

    @wallets.setter
    def wallets(self, wallets: WalletManager) -> None:
        self._wallets = wallets

    @property
    def has_wallets(self) -> bool:
        return self._wallets is not None

    def clear_wallets(self) -> None:
        self._wallets = None

    def set_warmup(self, status: str | None) -> None:
        """The -28 message; None ends warm-up (every call is served from then on)."""
        self._warmup = status
        if status is None:
            log.info("RPC warm-up finished")
        else:
            log.info("%s", status)

    @property
    def logpath(self) -> str:
        return os.path.join(self.config.netdir, "debug.log")

    def now(self) -> int:
        """The node's clock in Unix seconds: setmocktime's, else the wall clock."""
        return self.mocktime or int(time.time())

    def clock(self) -> float:
        """``now`` without the rounding: what the P2P layer measures intervals against (ping
        times, the trickle timers), so an unmocked clock keeps its sub-second steps."""
        return float(self.mocktime) if self.mocktime else time.time()

    def abort(self, exc: StoreFatalError) -> None:
        """Core's AbortNode (src/node/abort.cpp): a durable write failed or a store turned out
        damaged (any thread) — the error in debug.log once, then a clean shutdown that writes
        nothing more (``Node.close``) and exit status 1."""
        if self.fatal_error is None:
            self.fatal_error = str(exc)
            log.error("%s", exc)
            node = self.node_or_none
            if node is not None:  # nothing more is written, the final flush included
                node.data.guard.fatal(exc)
        self.request_shutdown()

    def request_shutdown(self) -> None:
        """``stop`` (however it was sent: single, batch, notification) and signals."""
        if self.shutdown.is_set():
            return
        self.shutdown.set()
        with self.tip_changed:
            self.tip_changed.notify_all()
        callback = self.on_shutdown_request
        if callback is not None:
            callback()

    def check_interrupt(self) -> None:
        """Long calls stop at their interruption points once shutdown began (-9)."""
        if self.shutdown.is_set():
            raise RpcError(RpcCode.CLIENT_NOT_CONNECTED, "Shutting down")

    def active_commands(self) -> list[dict[str, Any]]:
        now = time.monotonic()
        with self._active_lock:
            return [{"method": c.method, "duration": int((now - c.started) * 1e6)}
                    for c in self._active.values()]

    @contextmanager
    def _tracking(self, method: str) -> Iterator[None]:
        key = id(threading.current_thread()) ^ time.monotonic_ns()
        with self._active_lock:
            self._active[key] = ActiveCommand(method, time.monotonic())
        try:
            yield
        finally:
            with self._active_lock:
                del self._active[key]

    # --- dispatch ----------------------------------------------------------------------------

    def dispatch(self, body: bytes, uri_wallet: str | None, user: str) -> tuple[int, bytes | None]:
        """One HTTP body (worker thread)."""

        def execute(method: str, params: Params) -> Any:
            rpc_log.debug("ThreadRPCServer method=%s user=%s", method, user)  # Core's line
            return self.execute(method, params, uri_wallet)

        return handle_body(body, execute)

    def execute(self, method_name: str, params: Params, uri_wallet: str | None = None) -> Any:
        if self._warmup is not None:
            raise RpcError(RpcCode.IN_WARMUP, self._warmup)
        method = REGISTRY.get(method_name)
        if method is None:
            raise RpcError(RpcCode.METHOD_NOT_FOUND, "Method not found")
        args = method.bind(params)
        call = Call(self, uri_wallet, method_name)
        if self.wallet_events is not None and (method.wallet or method.category == "wallet"):
            self.wallet_events.sync()  # the wallets have heard of everything before this call
        with self._tracking(method_name):
            try:
                if method.locking is Locking.SELF:
                    return method.handler(call, *args)
                with self.chain_lock:
                    if method.wallet:
                        wallet = call.wallet
                        with wallet.lock:
                            return method.handler(call, *args)
                    return method.handler(call, *args)
            except RpcError:
                raise
            except StoreFatalError as exc:
                self.abort(exc)
                raise RpcError(RpcCode.MISC_ERROR, str(exc)) from None
            except CtpluginError as exc:
                log.warning("%s: %s", method_name, exc)
                raise RpcError(RpcCode.MISC_ERROR, str(exc)) from None
            except Exception as exc:  # a bug: logged, answered as a JSON-RPC error
                log.exception("RPC %s failed", method_name)
                raise RpcError(RpcCode.MISC_ERROR, str(exc) or type(exc).__name__) from None
