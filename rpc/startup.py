"""Opening and closing what a node serves, in order: chain (crash recovery included), its own
listener and its debug.log lines, the transaction index, a chain-file import, ZMQ, the wallets.

Runs on a worker thread during warm-up (``NodeContext.set_warmup`` gives the -28 text of each
step) with the chain lock held; closing runs after the HTTP server has drained, in the reverse
order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil

from ctplugin.elements import parse_block
from ctplugin.elements.chainparams import ChainOptionError, ChainParams
from ctplugin.errors import ParseError
from ctplugin.secp256k1 import kernel
from regtest.elements import ElementsChainOptions, elements_chain_options
from regtest.params import ELEMENTSREGTEST, select_chain
from regtest.wallet.node_wallet import WalletSettings
from rpc.chainlog import ChainLog
from rpc.config import NodeConfig
from rpc.context import NodeContext
from rpc.events import NodeEvents, QueuedListener
from rpc.txindex import TxIndex
from rpc.wallets import WalletManager
from rpc.zmqpub import ZmqPublisher
from validator import DataDirLockedError, Node, read_chain

log = logging.getLogger("ctplugin.rpc")


def elements_options(config: NodeConfig) -> ElementsChainOptions | None:
    """elementsd's options of the elementsregtest chain ``config`` selects (chain, wallet and
    policy ones: ``regtest.elements``); None on our fixed chains. ``ChainOptionError`` for an
    option the chain cannot honour."""
    if config.chain != ELEMENTSREGTEST:
        return None
    values: dict[str, list[str]] = {}  # every value in order: the last counts
    for name, value in config.chain_options:
        values.setdefault(name, []).append(value)
    return elements_chain_options(values)


def wallet_settings(options: ElementsChainOptions | None, keypool: int = 1000
                    ) -> WalletSettings:
    """The node's wallet options: elementsd's on elementsregtest, our chains' otherwise; on
    every chain ``-keypool`` keys are derived ahead (Core's lookahead, 1000 by default), so a
    wallet restored from its seed finds payments to any address handed out before."""
    if options is None:
        return WalletSettings(keypool=max(1, keypool))
    return WalletSettings.for_elements(options, keypool=keypool)


def chain_params(config: NodeConfig) -> ChainParams:
    """The chain ``config`` selects: elementsregtest built from its chain options
    (``regtest.elements``), one of our fixed chains otherwise. ``ChainOptionError`` for an
    option the chain cannot honour."""
    options = elements_options(config)
    if options is not None:
        return select_chain(config.chain, options)
    for name, value in config.chain_options:
        # our chains have no parent chain, so there are no peg-ins to validate
        if name != "validatepegin":
            raise ChainOptionError(name, f"{value!r} cannot be honoured on chain "
                                         f"{config.chain}: its parameters are fixed (chain "
                                         "options are for elementsregtest)")
    return select_chain(config.chain)


def open_node(ctx: NodeContext) -> None:
    config = ctx.config
    ctx.set_warmup("Loading block index…")
    kernel.set_threads(config.kernel_threads)
    options = elements_options(config)
    ctx.wallet_settings = wallet_settings(options, config.keypool)
    relay = config.relay
    if options is not None:  # OP_TRUE is standard exactly when the wallet may own it (§5.4)
        relay = dataclasses.replace(relay, anyonecanspendaremine=options.anyonecanspendaremine)
    try:
        if config.reindex:
            ctx.set_warmup("Reindexing blocks…")
        node = Node.open(config.netdir, chain_params(config), sync=config.sync, relay=relay,
                         reindex=config.reindex, reindex_chainstate=config.reindex_chainstate,
                         check_blocks=config.checkblocks, check_level=config.checklevel)
    except DataDirLockedError:
        raise RuntimeError(f"Cannot obtain a lock on data directory {config.netdir}. "
                           "ctplugin node is probably already running.") from None
    node.data.guard.on_failure = ctx.abort
    with ctx.chain_lock:
        try:
            _attach(ctx, node)
        except BaseException:
            _detach(ctx, node)
            raise
    ctx.mempool_loaded = True


def _attach(ctx: NodeContext, node: Node) -> None:
    config = ctx.config
    events = NodeEvents(ctx.tip_changed)
    ctx.events = events
    node.subscribe(events)
    node.subscribe(ChainLog(node))  # debug.log's UpdateTip and mempool lines
    node.set_clock(ctx.now)  # header times against setmocktime's clock, as Core's NodeClock
    if config.txindex:
        ctx.set_warmup("Loading txindex…")
        path = os.path.join(config.netdir, "indexes", "txindex")
        if config.reindex:  # Core's -reindex rebuilds the optional indexes too
            shutil.rmtree(path, ignore_errors=True)
        ctx.txindex = TxIndex(path)
        ctx.txindex.catch_up(node)
        node.subscribe(ctx.txindex)
    if config.load_chain:
        ctx.set_warmup("Importing blocks…")
        import_chain_file(node, config.load_chain)
    if config.zmq:
        ctx.zmq = ZmqPublisher(config.zmq, config.zmq_hwm, lambda: events.mempool_sequence)
        node.subscribe(ctx.zmq)
    if not config.disablewallet:
        ctx.set_warmup("Loading wallet…")
        wallets = WalletManager(node, config.netdir, ctx.wallet_settings)
        ctx.wallets = wallets
        wallets.start(config.wallets, nowallet=config.nowallet)
        ctx.wallet_events = QueuedListener(wallets, ctx.chain_lock)
        node.subscribe(ctx.wallet_events)
    ctx.set_warmup("Verifying blocks…")
    ctx.node = node


def import_chain_file(node: Node, path: str) -> int:
    """Submit the blocks of a chain file in order (known ones are skipped), as Core's
    -loadblock: what can be read is imported and the node keeps running; an unreadable file or
    frame, or a block the validator rejects, ends the import with a warning naming it. Returns
    how many blocks were connected (or stored on a side branch)."""
    added = 0
    try:
        for raw in read_chain(path, node.params.network_magic):
            try:
                block = parse_block(raw)
            except ParseError as exc:
                log.warning("chain file %s: block %d is unreadable (%s): import stopped", path,
                            added + 1, exc)
                break
            result = node.submit_block(raw, block)
            if result.status in ("connected", "stored"):
                added += 1
            elif result.status == "invalid":
                log.warning("chain file %s: block %s rejected: %s: import stopped", path,
                            block.header.hash_hex, result.bip22)
                break
    except OSError as exc:
        log.warning("chain file %s: could not open or read it (%s)", path, exc.strerror or exc)
    except ParseError as exc:
        log.warning("chain file %s: unreadable past block %d (%s): import stopped", path, added,
                    exc)
    tip = node.tip
    log.info("imported %d blocks from %s; tip %s at height %d", added, path, tip.hash[::-1].hex(),
             tip.height)
    return added


def _detach(ctx: NodeContext, node: Node) -> None:
    """Close everything ``_attach`` opened, in reverse order, then the node."""
    with contextlib.ExitStack() as stack:
        stack.callback(node.close)
        if ctx.txindex is not None:
            stack.callback(ctx.txindex.close)
        if ctx.zmq is not None:
            stack.callback(ctx.zmq.close)
        if ctx.has_wallets:
            stack.callback(ctx.wallets.close)
        if ctx.wallet_events is not None:  # first: what is queued reaches the open wallets
            stack.callback(ctx.wallet_events.close)
    ctx.node = None
    ctx.wallet_events = None
    ctx.txindex = None
    ctx.zmq = None
    ctx.clear_wallets()


def close_node(ctx: NodeContext) -> None:
    if ctx.wallet_events is not None:
        # delivered before the chain lock is taken: each queued event runs under it
        ctx.wallet_events.close()
    with ctx.chain_lock:
        node = ctx.node_or_none
        if node is not None:
            _detach(ctx, node)
