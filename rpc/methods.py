"""The RPC methods: thin adapters from JSON parameters to ``validator.node.Node``.

Names, parameters, results and error codes follow bitcoind/elementsd (elements-format.md §3).
Each method takes the node and validated positional parameters and returns JSON-ready data;
amounts are ``Decimal`` (printed exactly by ``ctplugin.elements.rpcjson.dumps``).
"""

from __future__ import annotations

import binascii
import inspect
from collections.abc import Callable
from dataclasses import asdict
from decimal import Decimal
from typing import Any

from ctplugin.elements import parse_block, parse_transaction
from ctplugin.elements.model import Block, Transaction
from ctplugin.elements.rpcjson import decode_transaction, value_from_amount
from ctplugin.errors import CtpluginError, ParseError, ValidationError
from rpc.errors import RpcCode, RpcError
from validator import Node, StoreError

MAX_HEX_CHARS = 2 * 32_000_000  # the largest serialized block we take, as hex

Method = Callable[..., Any]
METHODS: dict[str, Method] = {}

# Reject reasons that elementsd reports as RPC_VERIFY_ERROR / already-in-chain, not as a reject.
_MISSING_INPUTS = {"bad-txns-inputs-missingorspent"}
_ALREADY_KNOWN = {"txn-already-known"}


def rpc_method(fn: Method) -> Method:
    METHODS[fn.__name__] = fn
    return fn


def hex_param(value: object, name: str) -> bytes:
    if not isinstance(value, str):
        raise RpcError(RpcCode.TYPE_ERROR, f"{name} must be a hex string")
    if len(value) > MAX_HEX_CHARS:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"{name} is too large")
    try:
        return binascii.unhexlify(value)
    except (binascii.Error, ValueError):
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, f"{name} is not valid hex") from None


def decode_tx_param(value: object) -> Transaction:
    try:
        return parse_transaction(hex_param(value, "hexstring"))
    except ParseError as exc:
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, f"TX decode failed: {exc}") from None
    except RpcError as exc:
        if exc.code == RpcCode.DESERIALIZATION_ERROR:
            raise RpcError(RpcCode.DESERIALIZATION_ERROR, "TX decode failed") from None
        raise


def bind_params(fn: Method, params: object) -> tuple[Any, ...]:
    """Positional (list) or named (dict) parameters, checked against the method's signature."""
    signature = inspect.signature(fn)
    names = list(signature.parameters)[1:]  # the node comes first
    if params is None:
        params = []
    if isinstance(params, dict):
        unknown = set(params) - set(names)
        if unknown:
            first = sorted(unknown)[0]
            raise RpcError(RpcCode.INVALID_PARAMETER, f"Unknown named parameter {first}")
        params = [params.get(name, inspect.Parameter.empty) for name in names]
        while params and params[-1] is inspect.Parameter.empty:
            params.pop()
    if not isinstance(params, list):
        raise RpcError(RpcCode.INVALID_REQUEST, "Params must be an array or object")
    if len(params) > len(names):
        raise RpcError(RpcCode.INVALID_PARAMS, f"{fn.__name__} takes at most {len(names)} "
                                               "parameters")
    bound = []
    for i, name in enumerate(names):
        default = signature.parameters[name].default
        value = params[i] if i < len(params) else inspect.Parameter.empty
        if value is inspect.Parameter.empty:
            if default is inspect.Parameter.empty:
                raise RpcError(RpcCode.INVALID_PARAMS, f"missing required parameter {name}")
            value = default
        bound.append(value)
    return tuple(bound)


# --- chain -----------------------------------------------------------------------------------

@rpc_method
def getblockcount(node: Node) -> int:
    tip = node.tip
    return tip.height if tip is not None else -1


@rpc_method
def getbestblockhash(node: Node) -> str:
    tip = node.tip
    if tip is None:
        raise RpcError(RpcCode.MISC_ERROR, "no blocks")
    return tip.hash[::-1].hex()


@rpc_method
def getblockchaininfo(node: Node) -> dict[str, Any]:
    tip = node.tip
    return {
        "chain": "ctplugin-regtest",
        "blocks": tip.height if tip is not None else -1,
        "bestblockhash": tip.hash[::-1].hex() if tip is not None else None,
        "signblock_challenge": node.params.block_challenge.hex(),
        "pegins": False,
    }


@rpc_method
def submitblock(node: Node, hexdata: object) -> str | None:
    """BIP22: null when accepted, else the reject reason (``duplicate``, ``inconclusive``...)."""
    try:
        block: Block = parse_block(hex_param(hexdata, "hexdata"))
    except (ParseError, RpcError):
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, "Block decode failed") from None
    try:
        return node.submit_block(block).bip22
    except StoreError as exc:
        raise RpcError(RpcCode.VERIFY_ERROR, str(exc)) from None


# --- transactions --------------------------------------------------------------------------

@rpc_method
def decoderawtransaction(node: Node, hexstring: object, iswitness: object = None) -> dict:
    return decode_transaction(decode_tx_param(hexstring))


def _fee_json(fees: dict[bytes, int], policy_asset: bytes) -> dict[str, Decimal]:
    return {"base": value_from_amount(fees.get(policy_asset, 0))}


@rpc_method
def testmempoolaccept(node: Node, rawtxs: object, maxfeerate: object = None) -> list[dict]:
    if not isinstance(rawtxs, list):
        raise RpcError(RpcCode.TYPE_ERROR, "rawtxs must be an array")
    if not rawtxs:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Array must contain at least 1 transaction.")
    if len(rawtxs) > 25:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Array must contain at most 25 transactions.")
    txs = [decode_tx_param(raw) for raw in rawtxs]
    results = []
    for tx in txs:
        result: dict[str, Any] = {"txid": tx.txid_hex, "wtxid": tx.wtxid_hex}
        try:
            entry = node.mempool.test_accept(tx)
        except ValidationError as exc:
            result.update({"allowed": False, "reject-reason": exc.reason})
            if exc.detail or exc.output_index is not None or exc.input_index is not None:
                result["reject-details"] = str(exc)
        else:
            result.update({"allowed": True, "vsize": tx.vsize,
                           "fees": _fee_json(entry.fees, node.params.policy_asset)})
        results.append(result)
    return results


@rpc_method
def sendrawtransaction(node: Node, hexstring: object, maxfeerate: object = None) -> str:
    tx = decode_tx_param(hexstring)
    try:
        node.accept_transaction(tx)
    except ValidationError as exc:
        if exc.reason in _MISSING_INPUTS:
            raise RpcError(RpcCode.VERIFY_ERROR, "bad-txns-inputs-missingorspent") from None
        if exc.reason in _ALREADY_KNOWN:
            raise RpcError(RpcCode.VERIFY_ALREADY_IN_CHAIN,
                           "Transaction outputs already in utxo set") from None
        raise RpcError(RpcCode.VERIFY_REJECTED, str(exc)) from None
    return tx.txid_hex


@rpc_method
def getrawmempool(node: Node, verbose: object = False) -> list[str] | dict[str, Any]:
    if not isinstance(verbose, bool):
        raise RpcError(RpcCode.TYPE_ERROR, "verbose must be a boolean")
    entries = node.mempool.entries.values()
    if not verbose:
        return [entry.tx.txid_hex for entry in entries]
    return {entry.tx.txid_hex: {"vsize": entry.tx.vsize, "wtxid": entry.tx.wtxid_hex,
                                "fees": _fee_json(entry.fees, node.params.policy_asset)}
            for entry in entries}


@rpc_method
def getmempoolinfo(node: Node) -> dict[str, Any]:
    return {"loaded": True, "size": len(node.mempool),
            "bytes": sum(e.tx.vsize for e in node.mempool.entries.values())}


@rpc_method
def getproofcacheinfo(node: Node) -> dict[str, int]:
    """ctplugin's own: proof cache counters (entries, hits, misses, evictions, wipes)."""
    return asdict(node.stats().cache)


@rpc_method
def help(node: Node, command: object = None) -> str:
    if command is None:
        return "\n".join(sorted(METHODS))
    if not isinstance(command, str) or command not in METHODS:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"help: unknown command: {command}")
    return inspect.getdoc(METHODS[command]) or command


def call(node: Node, method: object, params: object) -> Any:
    """Dispatch one call; library errors that escape a method become MISC_ERROR, not a 500."""
    if not isinstance(method, str):
        raise RpcError(RpcCode.INVALID_REQUEST, "Method must be a string")
    fn = METHODS.get(method)
    if fn is None:
        raise RpcError(RpcCode.METHOD_NOT_FOUND, "Method not found")
    args = bind_params(fn, params)
    try:
        return fn(node, *args)
    except CtpluginError as exc:
        raise RpcError(RpcCode.MISC_ERROR, str(exc)) from None
