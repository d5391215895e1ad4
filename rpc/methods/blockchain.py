"""Chain calls (docs/node-rpc.md §1.3): heights, hashes, blocks, headers, tips, UTXOs, the waits on
new blocks, invalidate/reconsider."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from typing import Any

from ctplugin.elements import Block, Transaction, TxOut, parse_block
from ctplugin.elements.chainparams import AddressParams, ChainParams
from ctplugin.elements.script import script_to_asm
from ctplugin.errors import ParseError
from ctplugin.hashes import fast_merkle_root
from rpc.chainlog import log_invalidated, log_reconsidered
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.params import amount_json, int32, parse_hash
from rpc.registry import Kind, Locking, optional, required, rpc
from rpc.scriptjson import script_pubkey_json, transaction_json
from validator import (
    BlockFileError,
    BlockInfo,
    BlockRef,
    Outpoint,
    StoreError,
    UnknownBlockError,
    decode_txout,
)


@rpc("blockchain", description="Returns the height of the most-work fully-validated chain.",
     result="n    (numeric) The current block count", examples=("",))
def getblockcount(call: Call) -> int:
    return call.node.tip.height


@rpc("blockchain", description="Returns the hash of the best (tip) block in the "
                               "most-work fully-validated chain.",
     result='"hex"    (string) the block hash, hex-encoded')
def getbestblockhash(call: Call) -> str:
    return call.node.tip.hash[::-1].hex()


def _tip_json(tip: BlockRef) -> dict[str, Any]:
    return {"hash": tip.hash[::-1].hex(), "height": tip.height}


def _wait(call: Call, timeout_ms: int, done: Any) -> dict[str, Any]:
    """Block until ``done(tip)`` or the timeout (0 = forever); -9 once shutdown began."""
    if int32(timeout_ms) < 0:  # Core: getInt<int>, so 2^62 ms is out of range, not a wait
        raise RpcError(RpcCode.MISC_ERROR, "Negative timeout")
    context = call.context
    deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
    with context.tip_changed:
        while not context.shutdown.is_set() and not done(call.node.tip):
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                break
            context.tip_changed.wait(remaining)
        context.check_interrupt()
        return _tip_json(call.node.tip)


@rpc("blockchain", args=[optional("timeout", Kind.INT, 0, "Time in milliseconds to wait for a "
                                                          "response. 0 indicates no timeout.")],
     description="Waits for any new block and returns useful info about it.",
     result='{"hash": "hex", "height": n}', locking=Locking.SELF)
def waitfornewblock(call: Call, timeout: int) -> dict[str, Any]:
    with call.context.chain_lock:
        start = call.node.tip
    return _wait(call, timeout, lambda tip: tip != start)


@rpc("blockchain", args=[required("blockhash", Kind.STR, "Block hash to wait for."),
                         optional("timeout", Kind.INT, 0, "Time in milliseconds to wait for a "
                                                          "response. 0 indicates no timeout.")],
     description="Waits for a specific new block and returns useful info about it.",
     locking=Locking.SELF)
def waitforblock(call: Call, blockhash: str, timeout: int) -> dict[str, Any]:
    target = parse_hash(blockhash, "blockhash")
    return _wait(call, timeout, lambda tip: tip.hash == target)


@rpc("blockchain", args=[required("height", Kind.INT, "Block height to wait for."),
                         optional("timeout", Kind.INT, 0, "Time in milliseconds to wait for a "
                                                          "response. 0 indicates no timeout.")],
     description="Waits for (at least) block height and returns the height and hash of the "
                 "current tip.", locking=Locking.SELF)
def waitforblockheight(call: Call, height: int, timeout: int) -> dict[str, Any]:
    int32(height)
    return _wait(call, timeout, lambda tip: tip.height >= height)


# --- blocks and headers -------------------------------------------------------------------------


def _block_info(call: Call, block_hash: bytes) -> BlockInfo:
    info = call.node.block_info(block_hash)
    if info is None:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Block not found")
    return info


def header_json(call: Call, info: BlockInfo) -> dict[str, Any]:
    """blockheaderToJSON for a signed-block (non-dynafed) header, as elementsd prints it."""
    header = info.header
    out: dict[str, Any] = {
        "hash": info.hash[::-1].hex(),
        "confirmations": info.confirmations,
        "height": info.height,
        "version": header.version,
        "versionHex": f"{header.version & 0xFFFFFFFF:08x}",
        "merkleroot": header.merkle_root[::-1].hex(),
        "time": header.time,
        "mediantime": info.median_time_past,
    }
    if header.is_dynafed:
        out["signblock_witness_hex"] = "".join(item.hex() for item in header.signblock_witness)
    else:
        solution = header.solution or b""
        out["signblock_witness_asm"] = script_to_asm(solution)
        out["signblock_witness_hex"] = solution.hex()
        out["signblock_challenge"] = (header.challenge or b"").hex()
    out["nTx"] = info.n_tx
    if info.height > 0:
        out["previousblockhash"] = info.prev_hash[::-1].hex()
    if info.next_hash is not None:
        out["nextblockhash"] = info.next_hash[::-1].hex()
    return out


@rpc("blockchain", args=[required("height", Kind.INT, "The height index")],
     description="Returns hash of block in best-block-chain at height provided.",
     result='"hex"    (string) The block hash', examples=("1000",))
def getblockhash(call: Call, height: int) -> str:
    block_hash = call.node.block_hash(height)
    if block_hash is None:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Block height out of range")
    return block_hash[::-1].hex()


@rpc("blockchain", args=[required("blockhash", Kind.STR, "The block hash"),
                         optional("verbose", Kind.BOOL, True, "true for a json object, false for "
                                                              "the hex-encoded data")],
     description="If verbose is false, returns a string that is serialized, hex-encoded data "
                 "for blockheader 'hash'. If verbose is true, returns an Object with "
                 "information about blockheader 'hash'.")
def getblockheader(call: Call, blockhash: str, verbose: bool) -> Any:
    info = _block_info(call, parse_hash(blockhash, "hash"))
    if not verbose:
        return info.header.serialize().hex()
    return header_json(call, info)


def _read_block(call: Call, info: BlockInfo) -> Block:
    if not info.has_data:
        raise RpcError(RpcCode.MISC_ERROR, "Block not available (not fully downloaded)")
    try:
        return parse_block(call.node.read_block(info.hash))
    except (BlockFileError, ParseError):
        raise RpcError(RpcCode.MISC_ERROR, "Block not found on disk") from None


def spent_outputs(call: Call, info: BlockInfo) -> list[list[tuple[TxOut, int, bool]]] | None:
    """Per non-coinbase transaction, the (output, height, coinbase) each input spent; None when
    the block was never connected (no undo data)."""
    spent = call.node.block_spent_outputs(info.hash)
    if spent is None:
        return None
    return [[(decode_txout(coin.txout), coin.height, coin.coinbase) for coin in tx_coins]
            for tx_coins in spent]


def value_and_asset_json(out: TxOut) -> dict[str, Any]:
    """``value`` or ``valuecommitment``, then ``asset`` or ``assetcommitment`` (Elements)."""
    entry: dict[str, Any] = {}
    if isinstance(out.value, int):
        entry["value"] = amount_json(out.value)
    else:
        entry["valuecommitment"] = out.value.hex()
    if out.asset_is_explicit:
        entry["asset"] = out.asset[::-1].hex()
    else:
        entry["assetcommitment"] = out.asset.hex()
    return entry


def prevout_json(out: TxOut, height: int, coinbase: bool,
                 addresses: AddressParams) -> dict[str, Any]:
    return {"generated": coinbase, "height": height, **value_and_asset_json(out),
            "scriptPubKey": script_pubkey_json(out.script_pubkey, addresses)}


def verbose_transaction(tx: Transaction, prevouts: list[tuple[TxOut, int, bool]] | None,
                        with_prevout: bool, params: ChainParams) -> dict[str, Any]:
    """TxToUniv at verbosity 2/3: the decoded transaction, its hex, and for verbosity 3 each
    input's ``prevout``."""
    out = transaction_json(tx, params)
    if with_prevout and prevouts is not None:
        for vin, (spent, height, coinbase) in zip(out["vin"], prevouts):
            vin["prevout"] = prevout_json(spent, height, coinbase, params.addresses)
    out["hex"] = tx.hex()
    return out


@rpc("blockchain", args=[required("blockhash", Kind.STR, "The block hash"),
                         optional("verbosity|verbose", Kind.INT_OR_BOOL, 1,
                                  "0 for hex-encoded data, 1 for a JSON object, 2 for JSON "
                                  "object with transaction data, and 3 for JSON object with "
                                  "transaction data including prevout information for inputs")],
     description="If verbosity is 0, returns a string that is serialized, hex-encoded data for "
                 "block 'hash'. If verbosity is 1, returns an Object with information about "
                 "block 'hash'. If verbosity is 2, returns an Object with information about "
                 "block 'hash' and information about each transaction. If verbosity is 3, "
                 "returns an Object with information about block 'hash' and information about "
                 "each transaction, including prevout information for inputs.")
def getblock(call: Call, blockhash: str, verbosity: int | bool) -> Any:
    info = _block_info(call, parse_hash(blockhash, "blockhash"))
    level = int(verbosity)  # a bool is accepted: true means 1
    if level <= 0:
        if not info.has_data:
            raise RpcError(RpcCode.MISC_ERROR, "Block not available (not fully downloaded)")
        try:
            return call.node.read_block(info.hash).hex()
        except BlockFileError:
            raise RpcError(RpcCode.MISC_ERROR, "Block not found on disk") from None
    block = _read_block(call, info)
    out = header_json(call, info)
    out["strippedsize"] = info.stripped_size
    out["size"] = info.size
    out["weight"] = info.weight
    if level == 1:
        out["tx"] = [tx.txid_hex for tx in block.transactions]
        return out
    undo = spent_outputs(call, info) if level >= 3 else None
    out["tx"] = [verbose_transaction(tx, undo[i - 1] if undo is not None and i else None,
                                     level >= 3, call.node.params)
                 for i, tx in enumerate(block.transactions)]
    return out


@rpc("blockchain", description="Return information about all known tips in the block tree, "
                               "including the main chain as well as orphaned branches.")
def getchaintips(call: Call) -> list[dict[str, Any]]:
    return [{"height": tip.height, "hash": tip.hash[::-1].hex(), "branchlen": tip.branchlen,
             "status": tip.status} for tip in call.node.chain_tips()]


@rpc("blockchain", description="Returns an object containing various state info regarding "
                               "blockchain processing.")
def getblockchaininfo(call: Call) -> dict[str, Any]:
    node = call.node
    tip = node.tip
    info = _block_info(call, tip.hash)
    datadir = call.context.config.netdir
    size = 0
    for sub in ("blocks", "chainstate"):
        for root, _dirs, names in os.walk(os.path.join(datadir, sub)):
            size += sum(os.path.getsize(os.path.join(root, n)) for n in names
                        if os.path.exists(os.path.join(root, n)))
    challenge = node.params.block_challenge
    return {
        "chain": node.params.name,
        "blocks": tip.height,
        "headers": tip.height,
        "bestblockhash": tip.hash[::-1].hex(),
        "time": info.header.time,
        "mediantime": info.median_time_past,
        "verificationprogress": 1,
        "initialblockdownload": False,
        "size_on_disk": size,
        "pruned": False,
        "current_signblock_asm": script_to_asm(challenge),
        "current_signblock_hex": challenge.hex(),
        "max_block_witness": 0,
        "trim_headers": False,
        "warnings": [],
    }


# --- outputs ----------------------------------------------------------------------------------


@rpc("blockchain", args=[required("txid", Kind.STR, "The transaction id"),
                         required("n", Kind.INT, "vout number"),
                         optional("include_mempool", Kind.BOOL, True,
                                  "Whether to include the mempool. Note that an unspent output "
                                  "that is spent in the mempool won't appear.")],
     description="Returns details about an unspent transaction output.")
def gettxout(call: Call, txid: str, n: int, include_mempool: bool) -> dict[str, Any] | None:
    node = call.node
    txid_bytes = parse_hash(txid, "txid")
    if not 0 <= n <= 0xFFFFFFFF:
        return None
    tip = node.tip
    out: TxOut
    if include_mempool:
        if node.mempool.spent_by.get(Outpoint(txid_bytes, n)) is not None:
            return None
        entry = node.mempool.entries.get(txid_bytes)
        if entry is not None:
            if n >= len(entry.tx.outputs):
                return None
            out, confirmations, coinbase = entry.tx.outputs[n], 0, False
            return _txout_json(tip, out, confirmations, coinbase, node.params.addresses)
    coin = node.utxo((txid_bytes, n))
    if coin is None:
        return None
    out = decode_txout(coin.txout)
    return _txout_json(tip, out, tip.height - coin.height + 1, coin.coinbase,
                       node.params.addresses)


def _txout_json(tip: BlockRef, out: TxOut, confirmations: int, coinbase: bool,
                addresses: AddressParams) -> dict[str, Any]:
    result: dict[str, Any] = {"bestblock": tip.hash[::-1].hex(), "confirmations": confirmations,
                              **value_and_asset_json(out)}
    result["commitmentnonce"] = out.nonce.hex()
    result["scriptPubKey"] = script_pubkey_json(out.script_pubkey, addresses)
    result["coinbase"] = coinbase
    return result


@rpc("blockchain", args=[optional("hash_type", Kind.STR, "hash_serialized_3",
                                  "Which UTXO set hash should be calculated. Options: "
                                  "'hash_serialized_3', 'none'.")],
     description="Returns statistics about the unspent transaction output set. The "
                 "hash_serialized_3 here is ctplugin's utxo_set_hash: SHA256 over every entry "
                 "in key order, equal for equal sets.")
def gettxoutsetinfo(call: Call, hash_type: str) -> dict[str, Any]:
    if hash_type not in ("hash_serialized_3", "none"):
        raise RpcError(RpcCode.INVALID_PARAMETER, f"{hash_type} is not a valid hash_type")
    stats = call.node.utxo_stats()
    out: dict[str, Any] = {
        "height": stats.height,
        "bestblock": stats.best_hash[::-1].hex(),
        "txouts": stats.txouts,
        "bogosize": stats.serialized_size,
    }
    if hash_type == "hash_serialized_3":
        out["hash_serialized_3"] = stats.utxo_set_hash[::-1].hex()
    out["transactions"] = stats.transactions
    out["disk_size"] = stats.disk_size
    # Elements' coinstats: one sum of every explicit value, whatever its asset
    out["total_amount"] = amount_json(sum(stats.explicit_amounts.values()))
    out["blinded_outputs"] = stats.blinded_outputs
    return out


# --- invalidate / reconsider --------------------------------------------------------------------


def _mark(call: Call, blockhash: str, action: Callable[[bytes], object]) -> None:
    """invalidate/reconsider: -5 for an unknown block, -20 with the store's text otherwise."""
    block_hash = parse_hash(blockhash, "blockhash")
    try:
        action(block_hash)
    except UnknownBlockError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Block not found") from None
    except StoreError as exc:
        raise RpcError(RpcCode.DATABASE_ERROR, str(exc)) from None


@rpc("blockchain", args=[required("blockhash", Kind.STR, "the hash of the block to mark as "
                                                        "invalid")],
     description="Permanently marks a block as invalid, as if it violated a consensus rule.")
def invalidateblock(call: Call, blockhash: str) -> None:
    _mark(call, blockhash, call.node.invalidate_block)
    log_invalidated(call.node, parse_hash(blockhash, "blockhash"))


@rpc("blockchain", args=[required("blockhash", Kind.STR, "the hash of the block to reconsider")],
     description="Removes invalidity status of a block, its ancestors and its descendants, "
                 "reconsider them for activation. This can be used to undo the effects of "
                 "invalidateblock.")
def reconsiderblock(call: Call, blockhash: str) -> None:
    _mark(call, blockhash, call.node.reconsider_block)
    log_reconsidered(call.node, parse_hash(blockhash, "blockhash"))


# --- Elements' sidechain and deployment reports ------------------------------------------------

FEDPEG_SCRIPT = b"\x51"  # elementsregtest's default -fedpegscript (OP_TRUE): no peg-ins here
PARENT_GENESIS_HASH = "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"
MIN_PEG_DIFF = "7f" + "ff" * 31  # regtest parent's proof-of-work limit
PEGIN_CONFIRMATION_DEPTH = 8  # Elements' DEFAULT_PEGIN_CONFIRMATION_DEPTH
BURIED_DEPLOYMENTS = ("bip34", "bip66", "bip65", "csv", "segwit", "taproot")


def _p2sh_p2wsh(script: bytes) -> bytes:
    """OP_HASH160 <hash160(0 <sha256(script)>)> OP_EQUAL: the fedpeg program of a legacy
    fedpegscript."""
    redeem = b"\x00\x20" + hashlib.sha256(script).digest()
    digest = hashlib.new("ripemd160", hashlib.sha256(redeem).digest()).digest()
    return b"\xa9\x14" + digest + b"\x87"


@rpc("blockchain", description="Returns an object containing various state info regarding "
                               "sidechain functionality (this chain has the elementsregtest "
                               "defaults and no peg-ins: OP_TRUE fedpegscript).",
     locking=Locking.SELF)
def getsidechaininfo(call: Call) -> dict[str, Any]:
    program = _p2sh_p2wsh(FEDPEG_SCRIPT).hex()
    return {
        "fedpegscript": FEDPEG_SCRIPT.hex(),
        "current_fedpeg_programs": [program],
        "current_fedpegscripts": [FEDPEG_SCRIPT.hex()],
        "pegged_asset": call.node.params.policy_asset[::-1].hex(),
        "min_peg_diff": MIN_PEG_DIFF,
        "parent_blockhash": PARENT_GENESIS_HASH,
        "parent_chain_has_pow": True,
        "enforce_pak": False,
        "pegin_confirmation_depth": PEGIN_CONFIRMATION_DEPTH,
    }


@rpc("blockchain", args=[optional("blockhash", Kind.STR, description="The block hash at which "
                                  "to query deployment state", default_doc="hash of current "
                                  "chain tip")],
     description="Returns an object containing various state info regarding deployments of "
                 "consensus changes (every rule of this chain is enforced from genesis: all "
                 "buried).")
def getdeploymentinfo(call: Call, blockhash: str | None) -> dict[str, Any]:
    if blockhash is None:
        height, block_hash = call.node.tip.height, call.node.tip.hash
    else:
        block_hash = parse_hash(blockhash, "blockhash")
        height = _block_info(call, block_hash).height
    return {"hash": block_hash[::-1].hex(), "height": height,
            "deployments": {name: {"type": "buried", "active": True, "height": 0}
                            for name in BURIED_DEPLOYMENTS}}


@rpc("hidden", args=[required("leaves", Kind.ARR, "The leaves: 32-byte hashes in hex, as "
                              "uint256 prints them")],
     description="Returns the fast Merkle root of the leaves (Elements' hidden RPC, as its "
                 "transaction and witness roots are computed: docs/elements-format.md §1.3).",
     result='"hex"    (string) the root, in uint256 order', hidden=True, locking=Locking.SELF)
def calcfastmerkleroot(call: Call, leaves: list[Any]) -> str:
    hashes = [parse_hash(leaf, "leaf") for leaf in leaves]
    return fast_merkle_root(hashes)[::-1].hex()
