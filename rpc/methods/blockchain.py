"""Chain calls (docs/node-rpc.md §1.3): heights, hashes, blocks, headers, tips, UTXOs, the waits on
new blocks, invalidate/reconsider."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ctplugin.elements import Block, Transaction, TxOut, parse_block
from ctplugin.elements.chainparams import AddressParams, ChainParams
from ctplugin.elements.merkleblock import build_proof, parse_proof
from ctplugin.elements.script import is_unspendable, script_to_asm
from ctplugin.errors import ParseError
from ctplugin.hashes import fast_merkle_root
from rpc.chainlog import log_invalidated, log_reconsidered
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.params import amount_json, int32, parse_hash, parse_hex
from rpc.registry import Kind, Locking, integer, json_type, optional, required, rpc
from rpc.scriptjson import scan_scripts, script_pubkey_json, transaction_json
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
     result='"hex"    (string) the block hash, hex-encoded',
     examples=("",))
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
     result='{"hash": "hex", "height": n}', locking=Locking.SELF,
     examples=('1000',))
def waitfornewblock(call: Call, timeout: int) -> dict[str, Any]:
    with call.context.chain_lock:
        start = call.node.tip
    return _wait(call, timeout, lambda tip: tip != start)


@rpc("blockchain", args=[required("blockhash", Kind.STR, "Block hash to wait for."),
                         optional("timeout", Kind.INT, 0, "Time in milliseconds to wait for a "
                                                          "response. 0 indicates no timeout.")],
     description="Waits for a specific new block and returns useful info about it.",
     locking=Locking.SELF,
     result='{\n'
            '  "hash" : "hex",    (string) The blockhash\n'
            '  "height" : n      (numeric) Block height\n'
            '}',
     examples=('"0000000000079f8ef3d2c688c244eb7a4570b24c9ed7b4a8c619eb02596f8862" 1000',))
def waitforblock(call: Call, blockhash: str, timeout: int) -> dict[str, Any]:
    target = parse_hash(blockhash, "blockhash")
    return _wait(call, timeout, lambda tip: tip.hash == target)


@rpc("blockchain", args=[required("height", Kind.INT, "Block height to wait for."),
                         optional("timeout", Kind.INT, 0, "Time in milliseconds to wait for a "
                                                          "response. 0 indicates no timeout.")],
     description="Waits for (at least) block height and returns the height and hash of the "
                 "current tip.", locking=Locking.SELF,
     result='{\n'
            '  "hash" : "hex",    (string) The blockhash\n'
            '  "height" : n      (numeric) Block height\n'
            '}',
     examples=('100 1000',))
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
                 "information about blockheader 'hash'.",
     result='for verbose = true: {\n'
            '  "hash" : "hex",              (string) the block hash (same as provided)\n'
            '  "confirmations" : n,         (numeric) The number of confirmations, or -1 if '
            'the block is not on the main chain\n'
            '  "height" : n,                (numeric) The block height or index\n'
            '  "version" : n,               (numeric) The block version\n'
            '  "versionHex" : "hex",        (string) The block version formatted in '
            'hexadecimal\n'
            '  "merkleroot" : "hex",        (string) The merkle root\n'
            '  "time" : xxx,                (numeric) The block time expressed in UNIX epoch '
            'time\n'
            '  "mediantime" : xxx,          (numeric) The median block time expressed in UNIX '
            'epoch time\n'
            '  "signblock_witness_asm" : "str",  (string) ASM of sign block witness data\n'
            '  "signblock_witness_hex" : "hex",  (string) Hex of sign block witness data\n'
            '  "signblock_challenge" : "hex",    (string) Hex of the block challenge\n'
            '  "nTx" : n,                   (numeric) The number of transactions in the block\n'
            '  "previousblockhash" : "hex", (string, optional) The hash of the previous block '
            '(if available)\n'
            '  "nextblockhash" : "hex"      (string, optional) The hash of the next block (if '
            'available)\n'
            '}\n'
            'for verbose=false:\n'
            '"hex"    (string) A string that is serialized, hex-encoded data for block \'hash\'',
     examples=('"00000000c937983704a73af28acdec37b049d214adbda81d7e2a3dd146f6ed09"',))
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


def discount_ct(call: Call) -> bool:
    """Whether transactions print their discounted sizes: Elements does when the chain
    accepts discounted CT fees (``-acceptdiscountct``)."""
    return call.node.mempool.settings.acceptdiscountct


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
    """Elements' TxToUniv prevout: ``value`` is the amount, or "<confidential>" for a
    commitment; no asset."""
    value: Any = amount_json(out.value) if isinstance(out.value, int) else "<confidential>"
    return {"generated": coinbase, "height": height, "value": value,
            "scriptPubKey": script_pubkey_json(out.script_pubkey, addresses)}


def verbose_transaction(tx: Transaction, prevouts: list[tuple[TxOut, int, bool]] | None,
                        with_prevout: bool, params: ChainParams,
                        discount_ct: bool) -> dict[str, Any]:
    """TxToUniv at verbosity 2/3: the decoded transaction, its hex, and with ``with_prevout``
    each input's ``prevout``."""
    out = transaction_json(tx, params, discount_ct)
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
                 "each transaction, including prevout information for inputs.",
     result='for verbosity = 0:\n'
            '"hex"    (string) A string that is serialized, hex-encoded data for block '
            "'hash'\n"
            'for verbosity = 1: the getblockheader object plus\n'
            '  "strippedsize" : n,    (numeric) The block size excluding witness data\n'
            '  "size" : n,            (numeric) The block size\n'
            '  "weight" : n,          (numeric) The block weight as defined in BIP 141\n'
            '  "tx" : [ "hex", ... ]  (json array) The transaction ids\n'
            'for verbosity = 2: as 1, with each "tx" entry a decoderawtransaction object with '
            'its "hex"\n'
            'for verbosity = 3: as 2, with each input\'s "prevout" {generated, height, value | '
            'valuecommitment, asset | assetcommitment, scriptPubKey}',
     examples=('"00000000c937983704a73af28acdec37b049d214adbda81d7e2a3dd146f6ed09"',
               '"00000000c937983704a73af28acdec37b049d214adbda81d7e2a3dd146f6ed09" 2'))
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
                                     level >= 3, call.node.params, discount_ct(call))
                 for i, tx in enumerate(block.transactions)]
    return out


@rpc("blockchain", description="Return information about all known tips in the block tree, "
                               "including the main chain as well as orphaned branches.",
     result='[\n'
            '  {\n'
            '    "height" : n,          (numeric) height of the chain tip\n'
            '    "hash" : "hex",        (string) block hash of the tip\n'
            '    "branchlen" : n,       (numeric) zero for main chain, otherwise length of '
            'branch connecting the tip to the main chain\n'
            '    "status" : "str"       (string) status of the chain, "active" for the main '
            'chain. Possible values: "invalid", "headers-only", "valid-headers", '
            '"valid-fork", "active"\n'
            '  },\n'
            '  ...\n'
            ']',
     examples=("",))
def getchaintips(call: Call) -> list[dict[str, Any]]:
    return [{"height": tip.height, "hash": tip.hash[::-1].hex(), "branchlen": tip.branchlen,
             "status": tip.status} for tip in call.node.chain_tips()]


MAX_TIP_AGE = 24 * 60 * 60  # Core's DEFAULT_MAX_TIP_AGE (kernel/chainstatemanager_opts.h)


def in_initial_download(call: Call, tip: BlockInfo) -> bool:
    """Core's IsInitialBlockDownload on a signed-block chain (no minimum chain work): true
    while the tip is older than the maximum tip age, latched false once it is not."""
    context = call.context
    if not context.left_ibd and tip.header.time >= context.now() - MAX_TIP_AGE:
        context.left_ibd = True
    return not context.left_ibd


@rpc("blockchain", description="Returns an object containing various state info regarding "
                               "blockchain processing.",
     result='{\n'
            '  "chain" : "str",                 (string) current network name\n'
            '  "blocks" : n,                    (numeric) the height of the most-work '
            'fully-validated chain\n'
            '  "headers" : n,                   (numeric) the current number of headers we have '
            'validated\n'
            '  "bestblockhash" : "hex",         (string) the hash of the currently best block\n'
            '  "time" : xxx,                    (numeric) The block time expressed in UNIX '
            'epoch time\n'
            '  "mediantime" : xxx,              (numeric) The median block time expressed in '
            'UNIX epoch time\n'
            '  "verificationprogress" : n,      (numeric) estimate of verification progress '
            '[0..1]\n'
            '  "initialblockdownload" : true|false,  (boolean) (debug information) estimate '
            'of whether this node is in Initial Block Download mode\n'
            '  "size_on_disk" : n,              (numeric) the estimated size of the block '
            'and undo files on disk\n'
            '  "pruned" : true|false,           (boolean) if the blocks are subject to pruning\n'
            '  "current_signblock_asm" : "str", (string) ASM of sign block challenge data '
            'from current block\n'
            '  "current_signblock_hex" : "hex", (string) Hex of sign block challenge data '
            'from current block\n'
            '  "max_block_witness" : n,         (numeric) maximum sized block witness '
            'serialized size for current block\n'
            '  "trim_headers" : true|false,     (boolean) whether block headers are trimmed\n'
            '  "warnings" : [ "str" ]           (json array) any network and blockchain '
            'warnings\n'
            '}',
     examples=("",))
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
        # the best header: headers submitted without their blocks count (submitheader)
        "headers": max(t.height for t in node.chain_tips() if t.status != "invalid"),
        "bestblockhash": tip.hash[::-1].hex(),
        "time": info.header.time,
        "mediantime": info.median_time_past,
        "verificationprogress": 1,
        "initialblockdownload": in_initial_download(call, info),
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
     description="Returns details about an unspent transaction output.",
     result='null    (json null) if the output is unknown or spent\n'
            'or\n'
            '{\n'
            '  "bestblock" : "hex",       (string) The hash of the block at the tip of the '
            'chain\n'
            '  "confirmations" : n,       (numeric) The number of confirmations\n'
            '  "value" : n,               (numeric, optional) The transaction value in BTC\n'
            '  "valuecommitment" : "hex", (string, optional) the transaction value commitment\n'
            '  "asset" : "hex",           (string, optional) the asset id\n'
            '  "assetcommitment" : "hex", (string, optional) the asset commitment\n'
            '  "commitmentnonce" : "hex", (string) the nonce\n'
            '  "scriptPubKey" : { "asm", "desc", "hex", "address"?, "type" },  (json object)\n'
            '  "coinbase" : true|false    (boolean) Coinbase or not\n'
            '}',
     examples=('"txid" 1',))
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
                                  "'hash_serialized_3', 'none'."),
                         optional("hash_or_height", Kind.HASH_OR_HEIGHT, None, "The block hash or "
                                  "height of the target height (only available with "
                                  "coinstatsindex, which this node does not keep).",
                                  "the current best block"),
                         optional("use_index", Kind.BOOL, True, "Use coinstatsindex, if "
                                  "available.")],
     description="Returns statistics about the unspent transaction output set. The "
                 "hash_serialized_3 here is ctplugin's utxo_set_hash: SHA256 over every entry "
                 "in key order, equal for equal sets.",
     result='{\n'
            '  "height" : n,                 (numeric) The block height (index) of the '
            'returned statistics\n'
            '  "bestblock" : "hex",          (string) The hash of the block at which these '
            'statistics are calculated\n'
            '  "txouts" : n,                 (numeric) The number of unspent transaction '
            'outputs\n'
            '  "bogosize" : n,               (numeric) Database-independent, meaningless '
            'metric indicating the UTXO set size\n'
            '  "hash_serialized_3" : "hex",  (string, optional) The serialized hash (only '
            "present if 'hash_serialized_3' hash_type is chosen)\n"
            '  "transactions" : n,           (numeric) The number of transactions with '
            'unspent outputs\n'
            '  "disk_size" : n,              (numeric) The estimated size of the chainstate on '
            'disk\n'
            '  "total_amount" : n,           (numeric) The total amount of explicit values\n'
            '  "blinded_outputs" : n         (numeric) The number of outputs with a blinded '
            'value\n'
            '}',
     examples=("", '"none"'))
def gettxoutsetinfo(call: Call, hash_type: str, hash_or_height: Any,
                    use_index: bool) -> dict[str, Any]:
    if hash_type not in ("hash_serialized_3", "none"):
        raise RpcError(RpcCode.INVALID_PARAMETER, f"'{hash_type}' is not a valid hash_type")
    if hash_or_height is not None:  # Core without -coinstatsindex
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Querying specific block heights requires coinstatsindex")
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
     description="Permanently marks a block as invalid, as if it violated a consensus rule.",
     result='null    (json null)',
     examples=('"blockhash"',))
def invalidateblock(call: Call, blockhash: str) -> None:
    _mark(call, blockhash, call.node.invalidate_block)
    log_invalidated(call.node, parse_hash(blockhash, "blockhash"))


@rpc("blockchain", args=[required("blockhash", Kind.STR, "the hash of the block to reconsider")],
     description="Removes invalidity status of a block, its ancestors and its descendants, "
                 "reconsider them for activation. This can be used to undo the effects of "
                 "invalidateblock.",
     result='null    (json null)',
     examples=('"blockhash"',))
def reconsiderblock(call: Call, blockhash: str) -> None:
    _mark(call, blockhash, call.node.reconsider_block)
    log_reconsidered(call.node, parse_hash(blockhash, "blockhash"))


@rpc("blockchain", args=[required("blockhash", Kind.STR, "the hash of the block to mark as "
                                                        "precious")],
     description="Treats a block as if it were received before others with the same work.\n\n"
                 "A later preciousblock call can override the effect of an earlier one.\n\n"
                 "The effects of preciousblock are not retained across restarts.",
     result="null    (json null)", examples=('"blockhash"',))
def preciousblock(call: Call, blockhash: str) -> None:
    _mark(call, blockhash, call.node.precious_block)


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
     locking=Locking.SELF,
     result='{\n'
            '  "fedpegscript" : "hex",               (string) The fedpegscript\n'
            '  "current_fedpeg_programs" : [ "hex" ], (json array) The current fedpeg programs\n'
            '  "current_fedpegscripts" : [ "hex" ],  (json array) The current fedpegscripts\n'
            '  "pegged_asset" : "hex",               (string) Pegged asset type in hex\n'
            '  "min_peg_diff" : "hex",               (string) The minimum difficulty parent '
            'chain header target\n'
            '  "parent_blockhash" : "hex",           (string) The parent genesis blockhash as '
            'source of pegged-in funds\n'
            '  "parent_chain_has_pow" : true|false,  (boolean) Whether parent chain has pow '
            'or signed blocks\n'
            '  "enforce_pak" : true|false,           (boolean) If peg-out authorization is '
            'being enforced\n'
            '  "pegin_confirmation_depth" : n        (numeric) The number of mainchain '
            'confirmations required for a peg-in transaction to become valid\n'
            '}',
     examples=("",))
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
                 "buried).",
     result='{\n'
            '  "hash" : "hex",          (string) requested block hash (or tip)\n'
            '  "height" : n,            (numeric) requested block height (or tip)\n'
            '  "deployments" : {        (json object)\n'
            '    "xxxx" : {             (json object) name of the deployment\n'
            '      "type" : "str",      (string) one of "buried", "bip9"\n'
            '      "height" : n,        (numeric, optional) height of the first block which '
            'the rules are or will be enforced (only for "buried" type, or "bip9" type with '
            '"active" status)\n'
            '      "active" : true|false  (boolean) true if the rules are enforced for the '
            'mempool and the next block\n'
            '    },\n'
            '    ...\n'
            '  }\n'
            '}',
     examples=("",))
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
     result='"hex"    (string) the root, in uint256 order', hidden=True, locking=Locking.SELF,
     examples=('\'["0000000000000000000000000000000000000000000000000000000000000000"]\'',))
def calcfastmerkleroot(call: Call, leaves: list[Any]) -> str:
    hashes = [parse_hash(leaf, "leaf") for leaf in leaves]
    return fast_merkle_root(hashes)[::-1].hex()


# --- statistics ---------------------------------------------------------------------------------

PER_UTXO_OVERHEAD = 36 + 4 + 1  # Core: sizeof(COutPoint) + sizeof(uint32_t) + sizeof(bool)
BLOCKSTATS_PERCENTILES = 5
WITNESS_SCALE_FACTOR = 4
ONE_MONTH = 30 * 24 * 60 * 60
TARGET_SPACING = 10 * 60  # regtest's nPowTargetSpacing, elementsregtest's too (chainparams.cpp)


def _hash_or_height(call: Call, value: Any) -> BlockInfo:
    """Core's ParseHashOrHeight: a height on the active chain, else a known block hash."""
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        height = integer(value)
        if height < 0:
            raise RpcError(RpcCode.INVALID_PARAMETER, f"Target block height {height} is negative")
        tip = call.node.tip.height
        if height > tip:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Target block height {height} after current tip {tip}")
        block_hash = call.node.block_hash(height)
        assert block_hash is not None
        return _block_info(call, block_hash)
    return _block_info(call, parse_hash(value, "hash_or_height"))


def _truncated_median(values: list[int]) -> int:
    if not values:
        return 0
    values = sorted(values)
    size = len(values)
    return values[size // 2] if size % 2 else (values[size // 2 - 1] + values[size // 2]) // 2


def _percentiles_by_weight(scores: list[tuple[int, int]], total_weight: int) -> list[int]:
    """Core's CalculatePercentilesByWeight: fee rates at the 10/25/50/75/90th weight unit."""
    result = [0] * BLOCKSTATS_PERCENTILES
    if not scores:
        return result
    scores = sorted(scores)
    marks = (total_weight / 10.0, total_weight / 4.0, total_weight / 2.0,
             total_weight * 3.0 / 4.0, total_weight * 9.0 / 10.0)
    index = 0
    cumulative = 0
    for rate, weight in scores:
        cumulative += weight
        while index < BLOCKSTATS_PERCENTILES and cumulative >= marks[index]:
            result[index] = rate
            index += 1
    for i in range(index, BLOCKSTATS_PERCENTILES):
        result[i] = scores[-1][0]
    return result


def block_stats(call: Call, info: BlockInfo) -> dict[str, Any]:
    """Every statistic of Elements' getblockstats (its elements-mode branch: fees are the
    explicit fee outputs in the policy asset, ``total_out`` sums explicit policy-asset
    outputs), in satoshis."""
    node = call.node
    block = _read_block(call, info)
    policy = node.params.policy_asset
    spent = spent_outputs(call, info) if info.height else []
    if spent is None:
        raise RpcError(RpcCode.MISC_ERROR, "Undo data expected but can't be read. This could be "
                                           "due to disk corruption or a conflict with a pruning "
                                           "event.")
    fees: list[int] = []
    rates: list[tuple[int, int]] = []
    sizes: list[int] = []
    inputs = outputs = utxos = 0
    total_out = total_size = total_weight = 0
    sw_txs = sw_size = sw_weight = 0
    utxo_size_inc = utxo_size_inc_actual = 0
    for i, tx in enumerate(block.transactions):
        outputs += len(tx.outputs)
        tx_out = fee = 0
        for out in tx.outputs:
            if out.is_fee and out.asset_is_explicit and out.asset == policy \
                    and isinstance(out.value, int):
                fee += out.value
            if isinstance(out.value, int) and out.asset_is_explicit and out.asset == policy:
                tx_out += out.value
            out_size = len(out.serialize()) + PER_UTXO_OVERHEAD
            utxo_size_inc += out_size
            if info.height == 0 or is_unspendable(out.script_pubkey):
                continue
            utxos += 1
            utxo_size_inc_actual += out_size
        if i == 0:
            continue
        inputs += len(tx.inputs)
        total_out += tx_out
        size, weight = tx.size, tx.weight
        sizes.append(size)
        total_size += size
        total_weight += weight
        if tx.has_witness:
            sw_txs += 1
            sw_size += size
            sw_weight += weight
        for prev, _height, _coinbase in spent[i - 1]:
            prev_size = len(prev.serialize()) + PER_UTXO_OVERHEAD
            utxo_size_inc -= prev_size
            utxo_size_inc_actual -= prev_size
        fees.append(fee)
        rate = fee * WITNESS_SCALE_FACTOR // weight if weight else 0
        rates.append((rate, weight))
    n_txs = len(block.transactions)
    total_fee = sum(fees)
    feerates = [r for r, _ in rates]
    return {
        "avgfee": total_fee // (n_txs - 1) if n_txs > 1 else 0,
        "avgfeerate": total_fee * WITNESS_SCALE_FACTOR // total_weight if total_weight else 0,
        "avgtxsize": total_size // (n_txs - 1) if n_txs > 1 else 0,
        "blockhash": info.hash[::-1].hex(),
        "feerate_percentiles": _percentiles_by_weight(rates, total_weight),
        "height": info.height,
        "ins": inputs,
        "maxfee": max(fees, default=0),
        "maxfeerate": max(feerates, default=0),
        "maxtxsize": max(sizes, default=0),
        "medianfee": _truncated_median(fees),
        "mediantime": info.median_time_past,
        "mediantxsize": _truncated_median(sizes),
        "minfee": min(fees, default=0),
        "minfeerate": min(feerates, default=0),
        "mintxsize": min(sizes, default=0),
        "outs": outputs,
        "subsidy": node.params.block_subsidy_at(info.height),
        "swtotal_size": sw_size,
        "swtotal_weight": sw_weight,
        "swtxs": sw_txs,
        "time": info.header.time,
        "total_out": total_out,
        "total_size": total_size,
        "total_weight": total_weight,
        "totalfee": total_fee,
        "txs": n_txs,
        "utxo_increase": outputs - inputs,
        "utxo_size_inc": utxo_size_inc,
        "utxo_increase_actual": utxos - inputs,
        "utxo_size_inc_actual": utxo_size_inc_actual,
    }


_BLOCKSTATS_RESULT = "{\n" + "\n".join(
    f'  "{name}" : {shape},    ({kind}, optional) {text}' for name, shape, kind, text in (
        ("avgfee", "n", "numeric", "Average fee in the block"),
        ("avgfeerate", "n", "numeric", "Average feerate (in satoshis per virtual byte)"),
        ("avgtxsize", "n", "numeric", "Average transaction size"),
        ("blockhash", '"hex"', "string", "The block hash (to check for potential reorgs)"),
        ("feerate_percentiles", "[ n, n, n, n, n ]", "json array",
         "Feerates at the 10th, 25th, 50th, 75th, and 90th percentile weight unit (in "
         "satoshis per virtual byte)"),
        ("height", "n", "numeric", "The height of the block"),
        ("ins", "n", "numeric", "The number of inputs (excluding coinbase)"),
        ("maxfee", "n", "numeric", "Maximum fee in the block"),
        ("maxfeerate", "n", "numeric", "Maximum feerate (in satoshis per virtual byte)"),
        ("maxtxsize", "n", "numeric", "Maximum transaction size"),
        ("medianfee", "n", "numeric", "Truncated median fee in the block"),
        ("mediantime", "n", "numeric", "The block median time past"),
        ("mediantxsize", "n", "numeric", "Truncated median transaction size"),
        ("minfee", "n", "numeric", "Minimum fee in the block"),
        ("minfeerate", "n", "numeric", "Minimum feerate (in satoshis per virtual byte)"),
        ("mintxsize", "n", "numeric", "Minimum transaction size"),
        ("outs", "n", "numeric", "The number of outputs"),
        ("subsidy", "n", "numeric", "The block subsidy"),
        ("swtotal_size", "n", "numeric", "Total size of all segwit transactions"),
        ("swtotal_weight", "n", "numeric", "Total weight of all segwit transactions"),
        ("swtxs", "n", "numeric", "The number of segwit transactions"),
        ("time", "n", "numeric", "The block time"),
        ("total_out", "n", "numeric", "Total amount in all outputs (excluding coinbase and "
                                      "thus reward [ie subsidy + totalfee])"),
        ("total_size", "n", "numeric", "Total size of all non-coinbase transactions"),
        ("total_weight", "n", "numeric", "Total weight of all non-coinbase transactions"),
        ("totalfee", "n", "numeric", "The fee total"),
        ("txs", "n", "numeric", "The number of transactions (including coinbase)"),
        ("utxo_increase", "n", "numeric", "The increase/decrease in the number of unspent "
                                          "outputs (not discounting op_return and similar)"),
        ("utxo_size_inc", "n", "numeric", "The increase/decrease in size for the utxo index "
                                          "(not discounting op_return and similar)"),
        ("utxo_increase_actual", "n", "numeric", "The increase/decrease in the number of "
                                                 "unspent outputs, not counting unspendables"),
        ("utxo_size_inc_actual", "n", "numeric", "The increase/decrease in size for the utxo "
                                                 "index, not counting unspendables"),
    )) + "\n}"


@rpc("blockchain",
     args=[required("hash_or_height", Kind.HASH_OR_HEIGHT, "The block hash or height of the "
                                                              "target block"),
           optional("stats", Kind.ARR, None, "Values to plot (see result below)",
                    default_doc="all values")],
     description="Compute per block statistics for a given window. All amounts are in "
                 "satoshis.\nIt won't work for some heights with pruning.",
     result=_BLOCKSTATS_RESULT,
     examples=("'\"00000000c937983704a73af28acdec37b049d214adbda81d7e2a3dd146f6ed09\"' "
               "'[\"minfeerate\",\"avgfeerate\"]'", "1000 '[\"minfeerate\",\"avgfeerate\"]'"))
def getblockstats(call: Call, hash_or_height: Any, stats: list[Any] | None) -> dict[str, Any]:
    info = _hash_or_height(call, hash_or_height)
    selected: list[str] = []
    for stat in stats or []:
        if not isinstance(stat, str):
            raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {json_type(stat).value} is "
                                               "not of expected type string")
        selected.append(stat)
    everything = block_stats(call, info)
    if not selected:
        return everything
    out = {}
    for stat in sorted(set(selected)):  # Core's std::set: sorted, each once
        if stat not in everything:
            raise RpcError(RpcCode.INVALID_PARAMETER, f"Invalid selected statistic '{stat}'")
        out[stat] = everything[stat]
    return out


@rpc("blockchain",
     args=[optional("nblocks", Kind.INT, None, "Size of the window in number of blocks",
                    default_doc="one month"),
           optional("blockhash", Kind.STR, None, "The hash of the block that ends the window.",
                    default_doc="chain tip")],
     description="Compute statistics about the total number and rate of transactions in the "
                 "chain.",
     result='{\n'
            '  "time" : xxx,                        (numeric) The timestamp for the final block '
            'in the window, expressed in UNIX epoch time\n'
            '  "txcount" : n,                       (numeric, optional) The total number of '
            'transactions in the chain up to that point, if known\n'
            '  "window_final_block_hash" : "hex",   (string) The hash of the final block in the '
            'window\n'
            '  "window_final_block_height" : n,     (numeric) The height of the final block in '
            'the window.\n'
            '  "window_block_count" : n,            (numeric) Size of the window in number of '
            'blocks\n'
            '  "window_interval" : n,               (numeric, optional) The elapsed time in the '
            'window in seconds. Only returned if "window_block_count" is > 0\n'
            '  "window_tx_count" : n,               (numeric, optional) The number of '
            'transactions in the window. Only returned if "window_block_count" is > 0\n'
            '  "txrate" : n                         (numeric, optional) The average rate of '
            'transactions per second in the window. Only returned if "window_interval" is > 0\n'
            '}',
     examples=("", "2016"))
def getchaintxstats(call: Call, nblocks: int | None, blockhash: str | None) -> dict[str, Any]:
    node = call.node
    if blockhash is None:
        info = _block_info(call, node.tip.hash)
    else:
        info = _block_info(call, parse_hash(blockhash, "blockhash"))
        if not info.in_active_chain:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Block is not in main chain")
    if nblocks is None:
        count = max(0, min(ONE_MONTH // TARGET_SPACING, info.height - 1))
    else:
        count = nblocks
        if count < 0 or (count > 0 and count >= info.height):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid block count: should be between 0 and the block's height - 1")
    # m_chain_tx_count: the transactions of every block up to and including each end
    counts = [_block_info(call, h).n_tx
              for h in (node.block_hash(k) for k in range(info.height + 1)) if h is not None]
    past_height = info.height - count
    past_hash = node.block_hash(past_height)
    assert past_hash is not None
    past = _block_info(call, past_hash)
    tx_count = sum(counts)
    out: dict[str, Any] = {"time": info.header.time, "txcount": tx_count,
                           "window_final_block_hash": info.hash[::-1].hex(),
                           "window_final_block_height": info.height,
                           "window_block_count": count}
    if count > 0:
        interval = info.median_time_past - past.median_time_past
        window_txs = tx_count - sum(counts[:past_height + 1])
        out["window_interval"] = interval
        out["window_tx_count"] = window_txs
        if interval > 0:
            out["txrate"] = window_txs / interval
    return out


# --- proofs of inclusion ------------------------------------------------------------------------


@rpc("blockchain",
     args=[required("txids", Kind.ARR, "The txids to filter"),
           optional("blockhash", Kind.STR, None, "If specified, looks for txid in the block "
                                                 "with this hash")],
     description='Returns a hex-encoded proof that "txid" was included in a block.\n\n'
                 "NOTE: By default this function only works sometimes. This is when there is "
                 "an\nunspent output in the utxo for this transaction. To make it always work,"
                 "\nyou need to maintain a transaction index, using the -txindex command line "
                 "option or\nspecify the block in which the transaction is included manually "
                 "(by blockhash).",
     result='"data"    (string) A string that is a serialized, hex-encoded data for the proof.',
     examples=("'[\"mytxid\",...]'", "'[\"mytxid\",...]' \"blockhash\""))
def gettxoutproof(call: Call, txids: list[Any], blockhash: str | None) -> str:
    node = call.node
    if not txids:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Parameter 'txids' cannot be empty")
    wanted: list[bytes] = []
    for text in txids:
        txid = parse_hash(text, "txid")
        if txid in wanted:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Invalid parameter, duplicated txid: {text}")
        wanted.append(txid)
    info: BlockInfo | None = None
    if blockhash is not None:
        info = _block_info(call, parse_hash(blockhash, "blockhash"))
    else:
        for txid in wanted:  # AccessByTxid: any unspent output of the transaction
            coin = next((c for c in (node.utxo((txid, n)) for n in range(MAX_COIN_SCAN))
                         if c is not None), None)
            if coin is not None:
                found = node.block_hash(coin.height)
                assert found is not None
                info = _block_info(call, found)
                break
        if info is None and call.context.txindex is not None:
            located = call.context.txindex.lookup(wanted[0])
            if located is not None:
                info = _block_info(call, located[0])
        if info is None:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Transaction not yet in block")
    block = _read_block(call, info)
    block_txids = [tx.txid for tx in block.transactions]
    if not set(wanted) <= set(block_txids):
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "Not all transactions found in specified or retrieved block")
    return build_proof(block.header, block_txids, set(wanted)).hex()


MAX_COIN_SCAN = 10_000
"""Output indices gettxoutproof tries when it looks a transaction up by its unspent outputs
(Core's AccessByTxid tries a block's worth, over a million: one lookup each here, so fewer; a
transaction with more outputs is found by -txindex or its block hash)."""


@rpc("blockchain",
     args=[required("proof", Kind.HEX, "The hex-encoded proof generated by gettxoutproof")],
     description="Verifies that a proof points to a transaction in a block, returning the "
                 "transaction it commits to\nand throwing an RPC error if the block is not in "
                 "our best chain",
     result='[\n  "hex",    (string) The txid(s) which the proof commits to, or empty array if '
            'the proof cannot be validated.\n  ...\n]',
     examples=('"proof"',))
def verifytxoutproof(call: Call, proof: str) -> list[str]:
    data = parse_hex(proof, "proof")
    try:
        header, n_transactions, matched, root = parse_proof(data)
    except ParseError as exc:
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, f"Proof decode failed: {exc}") from None
    if root is None or root != header.merkle_root:
        return []
    info = call.node.block_info(header.hash)
    if info is None or not info.in_active_chain or info.n_tx == 0:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Block not found in chain")
    if info.n_tx != n_transactions:
        return []
    return [txid[::-1].hex() for txid in matched]


# --- scantxoutset -------------------------------------------------------------------------------


@rpc("blockchain",
     args=[required("action", Kind.STR, 'The action to execute\n"start" for starting a scan\n'
                    '"abort" for aborting the current scan (returns true when abort was '
                    'successful)\n"status" for progress report (in %) of the current scan'),
           optional("scanobjects", Kind.ARR, None, "Array of scan objects. Required for "
                    '"start" action\nEvery scan object is either a string descriptor or an '
                    'object {"desc": descriptor, "range": n or [begin,end]}: raw(), addr(), '
                    "pk(), pkh(), wpkh(), sh(wpkh()), combo() of hex keys")],
     description="Scans the unspent transaction output set for entries that match certain "
                 "output descriptors. A scan runs under the chain lock, so \"status\" and "
                 "\"abort\" never see one in progress (null and false).",
     result='{\n'
            '  "success" : true|false,       (boolean) Whether the scan was completed\n'
            '  "txouts" : n,                 (numeric) The number of unspent transaction '
            'outputs scanned\n'
            '  "height" : n,                 (numeric) The block height at which the scan was '
            'done\n'
            '  "bestblock" : "hex",          (string) The hash of the block at the tip of the '
            'chain\n'
            '  "unspents" : [ { "txid", "vout", "scriptPubKey", "desc", "amount" | '
            '"amountcommitment", "asset" | "assetcommitment", "coinbase", "height", '
            '"blockhash", "confirmations" }, ... ],\n'
            '  "total_unblinded_bitcoin_amount" : n    (numeric) The total amount of all found '
            'unspent unblinded outputs in BTC\n'
            '}\n'
            'when action=="abort": true|false (boolean) True if scan will be aborted\n'
            'when action=="status": null (no scan in progress)',
     examples=("start '[\"raw(76a91411b366edfc0a8b66feebae5c2e25a7b6a5d1cf3188ac)#fm24fxxy\"]'",
               "status", "abort"))
def scantxoutset(call: Call, action: str, scanobjects: list[Any] | None) -> Any:
    if action == "status":
        return None
    if action == "abort":
        return False
    if action != "start":
        raise RpcError(RpcCode.INVALID_PARAMETER, f"Invalid action '{action}'")
    if scanobjects is None:
        raise RpcError(RpcCode.MISC_ERROR, "scanobjects argument is required for the start "
                                           "action")
    node = call.node
    needles: dict[bytes, str] = {}
    for item in scanobjects:
        for script, desc in scan_scripts(item, node.params.addresses):
            needles.setdefault(script, desc)
    policy = node.params.policy_asset
    tip = node.tip
    unspents = []
    total = 0
    count = 0
    for outpoint, coin in node.iter_utxos():
        count += 1
        out = decode_txout(coin.txout)
        if out.script_pubkey not in needles:
            continue
        if isinstance(out.value, int) and out.asset_is_explicit and out.asset == policy:
            total += out.value
        entry: dict[str, Any] = {"txid": outpoint.txid[::-1].hex(), "vout": outpoint.index,
                                 "scriptPubKey": out.script_pubkey.hex(),
                                 "desc": needles[out.script_pubkey]}
        if isinstance(out.value, int):
            entry["amount"] = amount_json(out.value)
        else:
            entry["amountcommitment"] = out.value.hex()
        if out.asset_is_explicit:
            entry["asset"] = out.asset[::-1].hex()
        else:
            entry["assetcommitment"] = out.asset.hex()
        block_hash = node.block_hash(coin.height)
        assert block_hash is not None
        entry.update({"coinbase": coin.coinbase, "height": coin.height,
                      "blockhash": block_hash[::-1].hex(),
                      "confirmations": tip.height - coin.height + 1})
        unspents.append(entry)
    return {"success": True, "txouts": count, "height": tip.height,
            "bestblock": tip.hash[::-1].hex(), "unspents": unspents,
            "total_unblinded_bitcoin_amount": amount_json(total)}
