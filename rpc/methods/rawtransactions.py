"""Raw transaction calls that need no wallet: decoderawtransaction, getrawtransaction,
createrawtransaction (docs/node-rpc.md §1.4)."""

from __future__ import annotations

from typing import Any

from ctplugin.elements import Transaction, TxIn, TxOut, parse_block
from ctplugin.elements.address import decode_destination
from ctplugin.elements.script import push_data
from ctplugin.errors import EncodingError, ParseError
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.params import (
    amount_from_value,
    decodable,
    decode_transaction_hex,
    parse_hash,
    parse_hex,
)
from rpc.registry import Kind, Locking, optional, required, rpc
from rpc.scriptjson import transaction_json
from validator import BlockFileError, BlockInfo


@rpc("rawtransactions",
     args=[required("hexstring", Kind.HEX, "The transaction hex string"),
           optional("iswitness", Kind.BOOL, None, "Whether the transaction hex is a serialized "
                    "witness transaction.", "depends on heuristic tests")],
     description="Return a JSON object representing the serialized, hex-encoded transaction.",
     locking=Locking.SELF)
def decoderawtransaction(call: Call, hexstring: str, iswitness: bool | None) -> dict[str, Any]:
    return transaction_json(decodable(decode_transaction_hex(hexstring)), call.node.params)


@rpc("rawtransactions",
     args=[required("txid", Kind.STR, "The transaction id"),
           optional("verbosity|verbose", Kind.INT_OR_BOOL, 0, "0 for hex-encoded data, 1 for a "
                    "JSON object, and 2 for JSON object with fee and prevout"),
           optional("blockhash", Kind.STR, None, "The block in which to look for the "
                    "transaction")],
     description="By default, this call only returns a transaction if it is in the mempool. If "
                 "-txindex is enabled and no blockhash argument is passed, it will return the "
                 "transaction if it is in a block in the blockchain.")
def getrawtransaction(call: Call, txid: str, verbosity: int | bool,
                      blockhash: str | None) -> Any:
    node = call.node
    txid_bytes = parse_hash(txid, "parameter 1")
    level = int(verbosity)
    block_hash = parse_hash(blockhash, "parameter 3") if blockhash is not None else None
    tx: Transaction | None = None
    info: BlockInfo | None = None
    if block_hash is None:
        entry = node.mempool.entries.get(txid_bytes)
        if entry is not None:
            tx = entry.tx
        elif call.context.txindex is not None:
            found = call.context.txindex.lookup(txid_bytes)
            if found is not None:
                block_hash = found[0]
    if tx is None and block_hash is not None:
        info = node.block_info(block_hash)
        if info is None:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Block hash not found")
        try:
            block = parse_block(node.read_block(block_hash))
        except (BlockFileError, ParseError):
            raise RpcError(RpcCode.MISC_ERROR, "Block not available") from None
        tx = next((t for t in block.transactions if t.txid == txid_bytes), None)
        if tx is None and blockhash is not None:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                           "No such transaction found in the provided block. Use "
                           "gettransaction for wallet transactions.")
    if tx is None:
        if call.context.txindex is not None:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                           "No such mempool or blockchain transaction. Use gettransaction for "
                           "wallet transactions.")
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "No such mempool transaction. Use -txindex or provide a block hash to "
                       "enable blockchain transaction queries. Use gettransaction for wallet "
                       "transactions.")
    if level <= 0:
        return tx.hex()
    out = transaction_json(tx, call.node.params)
    out["hex"] = tx.hex()
    if info is not None:
        if blockhash is not None:
            out["in_active_chain"] = info.in_active_chain
        out["blockhash"] = info.hash[::-1].hex()
        out["confirmations"] = max(info.confirmations, 0)
        out["time"] = info.header.time
        out["blocktime"] = info.header.time
    return out


OP_RETURN = b"\x6a"
MAX_SEQUENCE = 0xFFFFFFFF
RBF_SEQUENCE = 0xFFFFFFFD  # BIP125's MAX_BIP125_RBF_SEQUENCE


def _raw_inputs(inputs: list[Any], locktime: int, replaceable: bool) -> list[TxIn]:
    txins = []
    for item in inputs:
        if not isinstance(item, dict):
            raise RpcError(RpcCode.TYPE_ERROR, "JSON value is not an object as expected")
        txid = parse_hash(item.get("txid"), "txid")
        vout = item.get("vout")
        if vout is None:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, missing vout key")
        if isinstance(vout, bool) or not isinstance(vout, int):
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, vout must be a number")
        if vout < 0:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, vout cannot be negative")
        if vout > 0xFFFFFFFE:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, vout out of range")
        default = RBF_SEQUENCE if replaceable else (MAX_SEQUENCE - 1 if locktime else
                                                    MAX_SEQUENCE)
        sequence = item.get("sequence", default)
        if isinstance(sequence, bool) or not isinstance(sequence, int) or \
                not 0 <= sequence <= MAX_SEQUENCE:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter, sequence number is out of range")
        txins.append(TxIn(prevout_hash=txid, prevout_index=vout, sequence=sequence))
    return txins


def _raw_outputs(call: Call, outputs: list[Any] | dict[str, Any],
                 output_assets: dict[str, Any] | None = None) -> list[TxOut]:
    """Elements' outputs: one-key objects ({address: amount, "asset": hex?}, {"data": hex},
    {"vdata": [hex, ...]}, {"burn": amount}, {"fee": amount}); a plain object is a list of
    them. An output without its own "asset" takes output_assets[key] (elementsd's 5th
    parameter), else the policy asset. The fee output goes last; a confidential address's
    blinding key goes in the nonce."""
    if isinstance(outputs, dict):
        asset_text = outputs.get("asset")
        items = [{k: v, **({"asset": asset_text} if asset_text is not None else {})}
                 for k, v in outputs.items() if k != "asset"]
    else:
        items = outputs
    policy = call.node.params.policy_asset
    txouts: list[TxOut] = []
    fee: TxOut | None = None
    seen: set[tuple[str, bytes]] = set()
    for item in items:
        if not isinstance(item, dict):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter, key-value pair must contain exactly one key.")
        keys = [k for k in item if k != "asset"]
        if len(keys) != 1:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter, key-value pair must contain exactly one key.")
        key = keys[0]
        asset = policy
        if "asset" in item:
            asset = parse_hash(item["asset"], "asset")
        elif output_assets and key in output_assets:
            named = output_assets[key]
            label = call.context.wallet_settings.pegged_asset_label
            asset = policy if named == label else parse_hash(named, "asset")
        value = item[key]
        if key in ("data", "vdata"):
            if (key, b"") in seen:
                raise RpcError(RpcCode.INVALID_PARAMETER,
                               f"Invalid parameter, duplicate key: {key}")
            seen.add((key, b""))
            chunks = value if key == "vdata" else [value]
            if not isinstance(chunks, list):
                raise RpcError(RpcCode.TYPE_ERROR, "vdata must be an array")
            script = OP_RETURN + b"".join(push_data(parse_hex(c, "Data")) for c in chunks)
            txouts.append(TxOut(asset=asset, value=0, script_pubkey=script))
        elif key == "burn":
            txouts.append(TxOut(asset=asset, value=amount_from_value(value),
                                script_pubkey=OP_RETURN))
        elif key == "fee":
            fee = TxOut(asset=asset, value=amount_from_value(value))
        else:
            try:
                dest = decode_destination(key, call.node.params.addresses)
            except EncodingError:
                raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                               f"Invalid Bitcoin address: {key}") from None
            if (key, asset) in seen:
                raise RpcError(RpcCode.INVALID_PARAMETER,
                               f"Invalid parameter, duplicated address and asset: {key}")
            seen.add((key, asset))
            txouts.append(TxOut(asset=asset, value=amount_from_value(value),
                                script_pubkey=dest.script_pubkey,
                                nonce=dest.blinding_pubkey or b""))
    if fee is not None:
        txouts.append(fee)
    return txouts


@rpc("rawtransactions",
     args=[required("inputs", Kind.ARR, "The inputs: [{\"txid\": hex, \"vout\": n, "
                                        "\"sequence\": n}, ...]"),
           required("outputs", Kind.ARR_OR_OBJ, "The outputs: [{address: amount, \"asset\": "
                    "hex}, {\"data\": hex}, {\"fee\": amount}, ...]"),
           optional("locktime", Kind.INT, 0, "Raw locktime. Non-0 value also locktime-"
                                             "activates inputs"),
           optional("replaceable", Kind.BOOL, True, "Marks this transaction as BIP125-"
                                                    "replaceable."),
           optional("output_assets", Kind.OBJ, None, "Address (or \"fee\") → asset hex id "
                    "(or \"bitcoin\") for outputs without their own \"asset\"",
                    "the policy asset")],
     description="Create a transaction spending the given inputs and creating new outputs. "
                 "Outputs to confidential addresses carry the address's blinding key in their "
                 "nonce, for blindrawtransaction. Returns hex-encoded raw transaction.")
def createrawtransaction(call: Call, inputs: list[Any], outputs: Any, locktime: int,
                         replaceable: bool, output_assets: dict[str, Any] | None) -> str:
    if not 0 <= locktime <= 0xFFFFFFFF:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, locktime out of range")
    # Core's order: locktime, inputs, outputs; empty outputs make a transaction without any
    # (funding adds them), as elementsd does.
    txins = _raw_inputs(inputs, locktime, replaceable)
    txouts = _raw_outputs(call, outputs, output_assets)
    return Transaction(version=2, inputs=tuple(txins), outputs=tuple(txouts),
                       locktime=locktime).hex()
