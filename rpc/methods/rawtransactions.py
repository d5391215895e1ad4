"""Raw transaction calls that need no wallet: decoderawtransaction, getrawtransaction,
createrawtransaction (docs/node-rpc.md §1.4)."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from ctplugin.elements import AssetIssuance, Transaction, TxIn, TxOut, parse_block
from ctplugin.elements.address import (
    Destination,
    decode_destination,
    decode_secret,
    encode_destination,
    p2sh_script,
)
from ctplugin.elements.consensus import COIN, MAX_MONEY
from ctplugin.elements.issuance import issuance_asset_id, issuance_entropy, reissuance_token_id
from ctplugin.elements.script import is_unspendable, push_data, script_ops, script_to_asm
from ctplugin.errors import EncodingError, ParseError
from ctplugin.hashes import hash160, sha256
from ctplugin.script.flags import STANDARD
from ctplugin.script.interpreter import is_op_success
from ctplugin.script.sighash import PrecomputedTransaction
from ctplugin.script.sign import KeyStore, input_error, sign_input, with_input
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.methods.blockchain import discount_ct, spent_outputs, verbose_transaction
from rpc.params import (
    amount_from_value,
    decodable,
    decode_transaction_hex,
    parse_hash,
    parse_hex,
)
from rpc.registry import Kind, Locking, integer, json_type, optional, required, rpc
from rpc.scriptjson import script_pubkey_json, transaction_json, with_checksum
from validator import BlockFileError, BlockInfo, decode_txout

OP_CHECKSIGADD = 0xBA


@rpc("rawtransactions",
     args=[required("hexstring", Kind.HEX, "The transaction hex string"),
           optional("iswitness", Kind.BOOL, None, "Whether the transaction hex is a serialized "
                    "witness transaction.", "depends on heuristic tests")],
     description="Return a JSON object representing the serialized, hex-encoded transaction.",
     locking=Locking.SELF,
     result='{\n'
            '  "txid" : "hex",        (string) The transaction id\n'
            '  "hash" : "hex",        (string) The transaction hash (differs from txid for '
            'witness transactions)\n'
            '  "wtxid" : "hex",       (string) The transaction\'s wtxid\n'
            '  "withash" : "hex",     (string) The transaction\'s witness hash\n'
            '  "version" : n,         (numeric) The version\n'
            '  "size" : n,            (numeric) The transaction size\n'
            '  "vsize" : n,           (numeric) The virtual transaction size (differs from '
            'size for witness transactions)\n'
            '  "weight" : n,          (numeric) The transaction\'s weight (between vsize*4 - '
            '3 and vsize*4)\n'
            '  "discountvsize" : n,   (numeric) The discounted virtual size (Elements\' '
            'discounted confidential transactions)\n'
            '  "discountweight" : n,  (numeric) The discounted weight\n'
            '  "locktime" : xxx,      (numeric) The lock time\n'
            '  "vin" : [ { "coinbase" | "txid", "vout", "scriptSig", "is_pegin", '
            '"txinwitness"?, "pegin_witness"?, "sequence", "issuance"? }, ... ],\n'
            '  "vout" : [ { "value" | "value-minimum", "value-maximum", "ct-exponent", '
            '"ct-bits", "surjectionproof", "valuecommitment", "asset" | "assetcommitment", '
            '"commitmentnonce", "commitmentnonce_fully_valid", "n", "scriptPubKey" }, ... ],\n'
            '  "fee" : { "asset" : n }  (json object) the transaction\'s fee outputs, by asset\n'
            '}',
     examples=('"hexstring"',))
def decoderawtransaction(call: Call, hexstring: str, iswitness: bool | None) -> dict[str, Any]:
    return transaction_json(decodable(decode_transaction_hex(hexstring)), call.node.params,
                            discount_ct(call))


@rpc("rawtransactions",
     args=[required("txid", Kind.STR, "The transaction id"),
           optional("verbosity|verbose", Kind.INT_OR_BOOL, 0, "0 for hex-encoded data, 1 for a "
                    "JSON object, and 2 for JSON object with fee and prevout"),
           optional("blockhash", Kind.STR, None, "The block in which to look for the "
                    "transaction")],
     description="By default, this call only returns a transaction if it is in the mempool. If "
                 "-txindex is enabled and no blockhash argument is passed, it will return the "
                 "transaction if it is in a block in the blockchain.",
     result='if verbosity is not set or set to 0:\n'
            '"str"    (string) The serialized transaction as a hex-encoded string for \'txid\'\n'
            'if verbosity is set to 1: the decoderawtransaction object plus\n'
            '  "in_active_chain" : true|false,  (boolean, optional) Whether specified block '
            'is in the active chain or not (only present with explicit "blockhash" argument)\n'
            '  "blockhash" : "hex",    (string, optional) the block hash\n'
            '  "confirmations" : n,    (numeric, optional) The confirmations\n'
            '  "blocktime" : xxx,      (numeric, optional) The block time expressed in UNIX '
            'epoch time\n'
            '  "time" : n,             (numeric, optional) Same as "blocktime"\n'
            '  "hex" : "hex"           (string) The serialized, hex-encoded data for \'txid\'\n'
            'if verbosity is set to 2: as 1, with each input\'s "prevout" {generated, height, '
            'value (or "<confidential>"), scriptPubKey} when the block\'s undo data exists',
     examples=('"mytxid"', '"mytxid" 1', '"mytxid" 0 "myblockhash"'))
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
    out: dict[str, Any] = {}
    if info is not None and blockhash is not None:
        out["in_active_chain"] = info.in_active_chain
    prevouts = None
    if level >= 2 and info is not None and not tx.is_coinbase and info.has_data:
        # verbosity 2: each input's prevout from the block's undo data (Elements: no fee
        # beyond the per-asset map every decoded transaction has)
        spent = spent_outputs(call, info)
        index = next(i for i, t in enumerate(block.transactions) if t.txid == txid_bytes)
        prevouts = spent[index - 1] if spent is not None else None
    out.update(verbose_transaction(tx, prevouts, prevouts is not None, node.params,
                                   discount_ct(call)))
    if info is not None:
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
            raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {json_type(item).value} "
                                               "is not of expected type object")
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


def _raw_outputs(call: Call, outputs: list[Any] | dict[str, Any]) -> list[TxOut]:
    """Elements' outputs: one-key objects ({address: amount, "asset": hex?}, {"data": hex},
    {"vdata": [hex, ...]}, {"burn": amount}, {"fee": amount}); a plain object is a list of
    them. An output without its own "asset" pays the policy asset. The fee output goes last;
    a confidential address's blinding key goes in the nonce."""
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
                                                    "replaceable.")],
     description="Create a transaction spending the given inputs and creating new outputs. "
                 "Outputs to confidential addresses carry the address's blinding key in their "
                 "nonce, for blindrawtransaction. Returns hex-encoded raw transaction.",
     result='"hex"    (string) hex string of the transaction',
     examples=('"[{\\"txid\\":\\"myid\\",\\"vout\\":0}]" "[{\\"address\\":0.01}]"',
               '"[{\\"txid\\":\\"myid\\",\\"vout\\":0}]" "[{\\"data\\":\\"00010203\\"}]"'))
def createrawtransaction(call: Call, inputs: list[Any], outputs: Any, locktime: int,
                         replaceable: bool) -> str:
    if not 0 <= locktime <= 0xFFFFFFFF:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, locktime out of range")
    # Core's order: locktime, inputs, outputs; empty outputs make a transaction without any
    # (funding adds them), as elementsd does.
    txins = _raw_inputs(inputs, locktime, replaceable)
    txouts = _raw_outputs(call, outputs)
    return Transaction(version=2, inputs=tuple(txins), outputs=tuple(txouts),
                       locktime=locktime).hex()


# --- decodescript -------------------------------------------------------------------------------


def _can_wrap(script: bytes, kind: str) -> bool:
    """decodescript's can_wrap: types P2SH may wrap, with valid ops, spendable, no
    OP_CHECKSIGADD or OP_SUCCESS."""
    if kind in ("true", "fee"):
        return True
    if kind not in ("multisig", "nonstandard", "pubkey", "pubkeyhash", "witness_v0_keyhash",
                    "witness_v0_scripthash"):
        return False
    ops = script_ops(script)
    if ops is None or is_unspendable(script):
        return False
    return not any(op == OP_CHECKSIGADD or is_op_success(op) for op, _ in ops)


def _can_wrap_p2wsh(script: bytes, kind: str) -> bool:
    if kind in ("multisig", "pubkey"):  # uncompressed keys cannot be used with segwit
        return all(len(data) != 65 for _, data in script_ops(script) or [] if data)
    return kind in ("true", "fee", "nonstandard", "pubkeyhash")


@rpc("rawtransactions",
     args=[required("hexstring", Kind.HEX, "the hex-encoded script")],
     description="Decode a hex-encoded script.",
     result='{\n'
            '  "asm" : "str",          (string) Disassembly of the script\n'
            '  "desc" : "str",         (string) Inferred descriptor for the script\n'
            '  "type" : "str",         (string) The output type (e.g. nonstandard, pubkey, '
            'pubkeyhash, scripthash, multisig, nulldata, witness_v0_scripthash, '
            'witness_v0_keyhash, witness_v1_taproot, witness_unknown)\n'
            '  "address" : "str",      (string, optional) The Bitcoin address (only if a '
            'well-defined address exists)\n'
            '  "p2sh" : "str",         (string, optional) address of P2SH script wrapping this '
            'redeem script (not returned for types that should not be wrapped)\n'
            '  "segwit" : {            (json object, optional) Result of a witness output '
            'script wrapping this redeem script (not returned for types that should not be '
            'wrapped)\n'
            '    "asm", "desc", "hex", "address", "type", "p2sh-segwit"\n'
            '  }\n'
            '}',
     examples=('"hexstring"',), locking=Locking.SELF)
def decodescript(call: Call, hexstring: str) -> dict[str, Any]:
    script = parse_hex(hexstring, "argument") if hexstring else b""
    addresses = call.node.params.addresses
    out = {key: value for key, value in script_pubkey_json(script, addresses).items()
           if not key.endswith("hex")}  # ScriptToUniv without the hex here
    kind = out["type"]
    if _can_wrap(script, kind):
        out["p2sh"] = encode_destination(p2sh_script(hash160(script)), addresses)
        if _can_wrap_p2wsh(script, kind):
            ops = script_ops(script) or []
            if kind == "pubkey":
                segwit = b"\x00\x14" + hash160(ops[0][1] or b"")
            elif kind == "pubkeyhash":
                segwit = b"\x00\x14" + script[3:23]
            else:
                segwit = b"\x00\x20" + sha256(script)
            entry = script_pubkey_json(segwit, addresses)
            if kind not in ("pubkey", "pubkeyhash"):
                # InferDescriptor with the script known: wsh(<the script's descriptor>)
                inner = out["desc"].split("#", 1)[0]
                entry["desc"] = with_checksum(f"wsh({inner})")
            entry["p2sh-segwit"] = encode_destination(p2sh_script(hash160(segwit)), addresses)
            out["segwit"] = entry
    return out


# --- issuance -----------------------------------------------------------------------------------


@rpc("rawtransactions",
     args=[required("txid", Kind.STR, "Transaction id of the output that will be spent for "
                                      "this issuance."),
           required("vout", Kind.INT, "Output index of the output that will be spent for this "
                                      "issuance."),
           optional("asset_entropy", Kind.STR, None, "Additional asset entropy to be included "
                    "in the asset tag. This is the contract hash.", "0000...0000"),
           optional("blind_reissuance", Kind.BOOL, True, "Whether the reissuance asset tag "
                                                         "will be blinded")],
     description="Calculate the asset tags and reissuance asset tags for a given prevout and "
                 "contract hash",
     result='{\n'
            '  "asset_tag" : "hex",              (string) Calculated asset tag.\n'
            '  "reissuance_asset_tag" : "hex",   (string) Asset tag for the reissuance '
            'tokens.\n'
            '  "final_asset_entropy" : "hex"     (string) The calculated asset entropy that is '
            'needed for reissuance.\n'
            '}',
     examples=('"txid" 0', '"txid" 0 "contracthash" false'), locking=Locking.SELF)
def calculateasset(call: Call, txid: str, vout: int, asset_entropy: str | None,
                   blind_reissuance: bool) -> dict[str, str]:
    prevout = parse_hash(txid, "txid")
    contract = parse_hash(asset_entropy, "asset_entropy") if asset_entropy is not None \
        else bytes(32)
    entropy = issuance_entropy(prevout, vout & 0xFFFFFFFF, contract)  # uint32_t, as Core
    return {"asset_tag": issuance_asset_id(entropy)[::-1].hex(),
            "reissuance_asset_tag": reissuance_token_id(entropy, blind_reissuance)[::-1].hex(),
            "final_asset_entropy": entropy[::-1].hex()}


def _fee_last(tx: Transaction) -> None:
    """rawissueasset's and rawreissueasset's checks: the fee output exists and is last."""
    if not tx.outputs:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Transaction must have at least one output.")
    if not tx.outputs[-1].is_fee:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Last transaction output must be fee.")
    if any(out.is_fee for out in tx.outputs[:-1]):
        raise RpcError(RpcCode.INVALID_PARAMETER, "Transaction can only have one fee output.")


def _issuance_amount(item: dict[str, Any], amount_key: str, address_key: str,
                     call: Call) -> tuple[int, Destination | None]:
    """An issuance's (amount, destination) when ``amount_key`` is a number (else (0, None))."""
    value = item.get(amount_key)
    if not isinstance(value, (int, Decimal)) or isinstance(value, bool):
        return 0, None
    amount = amount_from_value(value)
    if amount <= 0:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"Invalid parameter, {amount_key} must be positive")
    address = item.get(address_key)
    if not isinstance(address, str):
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"Invalid parameter, missing corresponding {address_key}")
    kind = address_key.split("_", 1)[0]
    try:
        return amount, decode_destination(address, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"Invalid {kind} address provided: {address}") from None


def _insert_randomly(outputs: list[TxOut], out: TxOut) -> None:
    """Before a random position below the fee output (FastRandomContext().randrange)."""
    outputs.insert(secrets.randbelow(len(outputs)), out)


def _issued_output(asset: bytes, amount: int, destination: Destination) -> TxOut:
    return TxOut(asset=asset, value=amount, script_pubkey=destination.script_pubkey,
                 nonce=destination.blinding_pubkey or b"")


def _object(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {json_type(item).value} is not "
                                           "of expected type object")
    return item


@rpc("rawtransactions",
     args=[required("transaction", Kind.HEX, "Transaction in hex in which to include an "
                                             "issuance input."),
           required("issuances", Kind.ARR, "List of issuances to create. Each issuance must "
                    "have one non-zero amount: {\"asset_amount\": amount, \"asset_address\": "
                    "address, \"token_amount\": amount, \"token_address\": address, \"blind\": "
                    "bool (default true), \"contract_hash\": hex (default 0000...0000)}")],
     description="Create an asset by attaching issuances to transaction inputs. Returns the "
                 "transaction hex. There must be as many inputs as issuances requested. The "
                 "final transaction hex is the final version of the transaction appended to "
                 "the last object in the array.",
     result='[                       (json array) Results of issuances, in the order of '
            '`issuances` arguments\n'
            '  {\n'
            '    "hex" : "hex",      (string, optional) The transaction with issuances '
            'appended. Only appended to final index in returned array\n'
            '    "vin" : n,          (numeric) The input position of the issuance in the '
            'transaction\n'
            '    "entropy" : "hex",  (string) Entropy of the asset type\n'
            '    "asset" : "hex",    (string) Asset type for issuance if known\n'
            '    "token" : "hex"     (string) Token type for issuance\n'
            '  },\n'
            '  ...\n'
            ']',
     examples=('"hex" \'[{"asset_amount": 10, "asset_address": "address", "blind": false}]\'',),
     locking=Locking.SELF)
def rawissueasset(call: Call, transaction: str, issuances: list[Any]) -> list[dict[str, Any]]:
    tx = decode_transaction_hex(transaction)
    _fee_last(tx)
    inputs = list(tx.inputs)
    outputs = list(tx.outputs)
    results: list[dict[str, Any]] = []
    for n, raw_item in enumerate(issuances, 1):
        item = _object(raw_item)
        asset_amount, asset_dest = _issuance_amount(item, "asset_amount", "asset_address", call)
        token_amount, token_dest = _issuance_amount(item, "token_amount", "token_address", call)
        if asset_amount == 0 and token_amount == 0:
            raise RpcError(RpcCode.TYPE_ERROR, "Issuance must have one non-zero component")
        blind = item.get("blind")
        blind_issuance = not isinstance(blind, bool) or blind
        contract = bytes(32)
        if item.get("contract_hash") is not None:
            contract = parse_hash(item["contract_hash"], "contract_hash")
        index = next((i for i, txin in enumerate(inputs) if txin.issuance is None), None)
        if index is None:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Failed to find enough blank inputs for listed issuances.")
        txin = inputs[index]
        entropy = issuance_entropy(txin.prevout_hash, txin.prevout_index, contract)
        asset = issuance_asset_id(entropy)
        token = reissuance_token_id(entropy, blind_issuance)
        if asset_amount > 0:
            assert asset_dest is not None
            _insert_randomly(outputs, _issued_output(asset, asset_amount, asset_dest))
        # explicit 0 is a null amount, unless the issuance is to be blinded
        amount: int | None = asset_amount if blind_issuance or asset_amount else None
        keys: int | None = None
        if token_amount > 0:
            assert token_dest is not None
            keys = token_amount
            _insert_randomly(outputs, _issued_output(token, token_amount, token_dest))
        inputs[index] = replace(txin, issuance=AssetIssuance(
            asset_blinding_nonce=bytes(32), asset_entropy=contract, amount=amount,
            inflation_keys=keys))
        result: dict[str, Any] = {}
        if n == len(issuances):
            result["hex"] = replace(tx, inputs=tuple(inputs), outputs=tuple(outputs)).hex()
        result.update({"vin": index, "entropy": entropy[::-1].hex(),
                       "asset": asset[::-1].hex(), "token": token[::-1].hex()})
        results.append(result)
    return results


@rpc("rawtransactions",
     args=[required("transaction", Kind.HEX, "Transaction in hex in which to include an "
                                             "issuance input."),
           required("reissuances", Kind.ARR, "List of re-issuances to create: {\"asset_amount\":"
                    " amount, \"asset_address\": address, \"input_index\": n, "
                    "\"asset_blinder\": hex (the blinding factor of the reissuance token output "
                    "being spent), \"entropy\": hex (from the initial issuance)}")],
     description="Re-issue an asset by attaching pseudo-inputs to transaction inputs, "
                 "revealing the underlying reissuance token of the input. Returns the "
                 "transaction hex.",
     result='{\n  "hex" : "hex"    (string) The transaction with reissuances appended\n}',
     examples=('"hex" \'[{"asset_amount": 1, "asset_address": "address", "input_index": 0, '
               '"asset_blinder": "blinder", "entropy": "entropy"}]\'',),
     locking=Locking.SELF)
def rawreissueasset(call: Call, transaction: str, reissuances: list[Any]) -> dict[str, str]:
    tx = decode_transaction_hex(transaction)
    if not tx.outputs:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Transaction must have at least one output.")
    _fee_last(tx)
    inputs = list(tx.inputs)
    outputs = list(tx.outputs)
    for raw_item in reissuances:
        item = _object(raw_item)
        value = item.get("asset_amount")
        if not isinstance(value, (int, Decimal)) or isinstance(value, bool):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Asset amount must be given for each reissuance.")
        amount = amount_from_value(value)
        if amount <= 0:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter, asset_amount must be positive")
        address = item.get("asset_address")
        if not isinstance(address, str):
            raise RpcError(RpcCode.INVALID_PARAMETER, "Reissuance missing asset_address")
        try:
            destination = decode_destination(address, call.node.params.addresses)
        except EncodingError:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Invalid asset address provided: {address}") from None
        index = item.get("input_index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Input indexes for all reissuances are required.")
        index = integer(index)
        if index < 0:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Input index must be non-negative.")
        if index >= len(inputs):
            raise RpcError(RpcCode.INVALID_PARAMETER, "Input index must exist in transaction.")
        if inputs[index].issuance is not None:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Selected transaction input already has issuance data.")
        blinder = parse_hash(item.get("asset_blinder"), "asset_blinder")
        entropy = parse_hash(item.get("entropy"), "entropy")
        asset = issuance_asset_id(entropy)
        _insert_randomly(outputs, _issued_output(asset, amount, destination))
        inputs[index] = replace(inputs[index], issuance=AssetIssuance(
            asset_blinding_nonce=blinder, asset_entropy=entropy, amount=amount))
    return {"hex": replace(tx, inputs=tuple(inputs), outputs=tuple(outputs)).hex()}


# --- signrawtransactionwithkey ------------------------------------------------------------------

SIGHASH_TYPES = {
    "DEFAULT": 0x00, "ALL": 0x01, "ALL|ANYONECANPAY": 0x81, "ALL|RANGEPROOF": 0x41,
    "ALL|ANYONECANPAY|RANGEPROOF": 0xC1, "NONE": 0x02, "NONE|ANYONECANPAY": 0x82,
    "NONE|RANGEPROOF": 0x42, "NONE|ANYONECANPAY|RANGEPROOF": 0xC2, "SINGLE": 0x03,
    "SINGLE|ANYONECANPAY": 0x83, "SINGLE|RANGEPROOF": 0x43,
    "SINGLE|ANYONECANPAY|RANGEPROOF": 0xC3,
}
"""Elements' SighashFromStr table (core_read.cpp)."""
UNKNOWN_AMOUNT = MAX_MONEY  # ParsePrevouts' placeholder for a prevtx without an amount
_SIGHASH_SINGLE = 0x03


def parse_sighash(value: str | None) -> int:
    """ParseSighashString: null is SIGHASH_DEFAULT; an unknown name -8."""
    if value is None:
        return 0
    if value not in SIGHASH_TYPES:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"'{value}' is not a valid sighash parameter.")
    return SIGHASH_TYPES[value]


@dataclass(slots=True)
class _Coin:
    """A spent output as signing sees it (a SpentOutput); ``asset`` is unknown (zero) for a
    prevtx entry, which v0 and legacy digests do not need."""

    asset: bytes
    value: int | bytes
    script_pubkey: bytes


def _find_coins(call: Call, tx: Transaction) -> dict[tuple[bytes, int], _Coin]:
    """FindCoins: each input's coin from the UTXO set or a mempool transaction."""
    node = call.node
    coins: dict[tuple[bytes, int], _Coin] = {}
    for txin in tx.inputs:
        point = (txin.prevout_hash, txin.prevout_index)
        entry = node.mempool.entries.get(txin.prevout_hash)
        out: TxOut | None = None
        if entry is not None and txin.prevout_index < len(entry.tx.outputs):
            out = entry.tx.outputs[txin.prevout_index]
        else:
            coin = node.utxo(point)
            if coin is not None:
                out = decode_txout(coin.txout)
        if out is not None:
            coins[point] = _Coin(out.asset, out.value, out.script_pubkey)
    return coins


def _typed_field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], name: str,
                 optional_field: bool = False) -> Any:
    """RPCTypeCheckObj: -3 "Missing X" or the field's type complaint."""
    value = obj.get(key)
    if value is None:
        if optional_field:
            return None
        raise RpcError(RpcCode.TYPE_ERROR, f"Missing {key}")
    if not isinstance(value, kind) or isinstance(value, bool):
        raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {json_type(value).value} for "
                                           f"field {key} is not of expected type {name}")
    return value


def _parse_prevouts(prevtxs: list[Any], store: KeyStore,
                    coins: dict[tuple[bytes, int], _Coin]) -> None:
    """ParsePrevouts (rpc/rawtransaction_util.cpp)."""
    for item in prevtxs:
        if not isinstance(item, dict):
            raise RpcError(RpcCode.DESERIALIZATION_ERROR,
                           'expected object with {"txid\'","vout","scriptPubKey"}')
        _typed_field(item, "txid", str, "string")
        _typed_field(item, "vout", (int, Decimal), "number")
        _typed_field(item, "scriptPubKey", str, "string")
        txid = parse_hash(item["txid"], "txid")
        vout = integer(item["vout"])
        if vout < 0:
            raise RpcError(RpcCode.DESERIALIZATION_ERROR, "vout cannot be negative")
        script = parse_hex(item["scriptPubKey"], "scriptPubKey")
        known = coins.get((txid, vout))
        if known is not None and known.script_pubkey != script:
            raise RpcError(RpcCode.DESERIALIZATION_ERROR,
                           "Previous output scriptPubKey mismatch:\n"
                           f"{script_to_asm(known.script_pubkey)}\nvs:\n{script_to_asm(script)}")
        value: int | bytes = UNKNOWN_AMOUNT
        if "amount" in item:
            value = amount_from_value(item["amount"])
        elif "amountcommitment" in item:
            value = parse_hex(item["amountcommitment"], "amountcommitment")
        coins[(txid, vout)] = _Coin(bytes(32), value, script)
        is_p2sh = len(script) == 23 and script[:2] == b"\xa9\x14" and script[22] == 0x87
        is_p2wsh = len(script) == 34 and script[:2] == b"\x00\x20"
        if not (is_p2sh or is_p2wsh):
            continue
        redeem_text = _typed_field(item, "redeemScript", str, "string", True)
        witness_text = _typed_field(item, "witnessScript", str, "string", True)
        if redeem_text is None and witness_text is None:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Missing redeemScript/witnessScript")
        inner = parse_hex(witness_text, "witnessScript") if witness_text is not None \
            else parse_hex(redeem_text, "redeemScript")
        store.add_script(inner)
        wrapped = b"\x00\x20" + sha256(inner)
        if (witness_text is not None and redeem_text is not None
                and witness_text != redeem_text
                and parse_hex(redeem_text, "redeemScript") != wrapped):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "redeemScript does not correspond to witnessScript")
        matches = (script in (p2sh_script(hash160(inner)), p2sh_script(hash160(wrapped)))
                   if is_p2sh else script == wrapped)
        if not matches:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "redeemScript/witnessScript does not match scriptPubKey")


def _amount_text(value: int | bytes) -> str:
    if isinstance(value, bytes):
        return "CONFIDENTIAL"
    return f"{value // COIN}.{value % COIN:08d}"


def sign_with_keys(call: Call, tx: Transaction, store: KeyStore,
                   coins: dict[tuple[bytes, int], _Coin], hash_type: int) -> dict[str, Any]:
    """Core's SignTransaction + SignTransactionResultToJSON: sign every input whose coin is
    known, verify each under the standard flags, report the failures."""
    placeholder = _Coin(bytes(32), 0, b"")
    spent = [coins.get((i.prevout_hash, i.prevout_index), placeholder) for i in tx.inputs]
    # a prevtxs entry has no asset: only coins from the chain or the mempool are complete
    all_known = all(c is not placeholder and c.asset != bytes(32) for c in spent)
    genesis = call.node.params.genesis_hash
    inputs = list(tx.inputs)
    for n, txin in enumerate(tx.inputs):
        if (txin.prevout_hash, txin.prevout_index) not in coins:
            continue
        if (hash_type & 0x1F) == _SIGHASH_SINGLE and n >= len(tx.outputs):
            continue
        pre = PrecomputedTransaction(replace(tx, inputs=tuple(inputs)), spent, genesis)
        if input_error(pre, n, int(STANDARD)) is None:
            continue  # already complete (DataFromTransaction): kept as it is
        script_sig, witness = sign_input(pre, n, store, hash_type, lambda: os.urandom(32),
                                         all_spent_known=all_known)
        inputs[n] = with_input(inputs[n], script_sig, witness)
    signed = replace(tx, inputs=tuple(inputs))
    pre = PrecomputedTransaction(signed, spent, genesis)
    errors = []
    for n, txin in enumerate(signed.inputs):
        coin = coins.get((txin.prevout_hash, txin.prevout_index))
        if coin is None:
            message: str | None = "Input not found or already spent"
        elif coin.value == UNKNOWN_AMOUNT and txin.script_witness:
            raise RpcError(RpcCode.TYPE_ERROR,
                           f"Missing amount for CTxOut(nValue={_amount_text(coin.value)}, "
                           f"scriptPubKey={coin.script_pubkey.hex()[:30]})")
        else:
            message = input_error(pre, n, int(STANDARD))
        if message is not None:
            errors.append({"txid": txin.prevout_txid_hex, "vout": txin.prevout_index,
                           "witness": [item.hex() for item in txin.script_witness],
                           "scriptSig": txin.script_sig.hex(), "sequence": txin.sequence,
                           "error": message})
    result: dict[str, Any] = {"hex": signed.hex(), "complete": not errors}
    if errors:
        result["errors"] = errors
    return result


SIGN_RESULT = ('{\n'
               '  "hex" : "hex",          (string) The hex-encoded raw transaction with '
               'signature(s)\n'
               '  "complete" : true|false,  (boolean) If the transaction has a complete set of '
               'signatures\n'
               '  "errors" : [            (json array, optional) Script verification errors (if '
               'there are any)\n'
               '    {\n'
               '      "txid" : "hex",       (string) The hash of the referenced, previous '
               'transaction\n'
               '      "vout" : n,           (numeric) The index of the output to spent and used '
               'as input\n'
               '      "witness" : [ "hex", ... ],\n'
               '      "scriptSig" : "hex",  (string) The hex-encoded signature script\n'
               '      "sequence" : n,       (numeric) Script sequence number\n'
               '      "error" : "str"       (string) Verification or signing error related to '
               'the input\n'
               '    },\n'
               '    ...\n'
               '  ]\n'
               '}')


@rpc("rawtransactions",
     args=[required("hexstring", Kind.STR, "The transaction hex string"),
           required("privkeys", Kind.ARR, "The base58-encoded private keys for signing"),
           optional("prevtxs", Kind.ARR, None, "The previous dependent transaction outputs: "
                    "[{\"txid\": hex, \"vout\": n, \"scriptPubKey\": hex, \"redeemScript\": hex "
                    "(required for P2SH), \"witnessScript\": hex (required for P2WSH or "
                    "P2SH-P2WSH), \"amount\": amount (required if non-confidential segwit "
                    "output), \"amountcommitment\": hex (required if confidential segwit "
                    "output)}, ...]"),
           optional("sighashtype", Kind.STR, None, 'The signature hash type. Must be one of:\n'
                    + "\n".join(f'"{name}"' for name in SIGHASH_TYPES),
                    "DEFAULT for Taproot, ALL otherwise")],
     description="Sign inputs for raw transaction (serialized, hex-encoded).\nThe second "
                 "argument is an array of base58-encoded private\nkeys that will be the only "
                 "keys used to sign the transaction.\nThe third optional argument (may be "
                 "null) is an array of previous transaction outputs that\nthis transaction "
                 "depends on but may not yet be in the block chain.",
     result=SIGN_RESULT,
     examples=('"myhex" "[\\"key1\\",\\"key2\\"]"',))
def signrawtransactionwithkey(call: Call, hexstring: str, privkeys: list[Any],
                              prevtxs: list[Any] | None, sighashtype: str | None
                              ) -> dict[str, Any]:
    try:
        tx = decode_transaction_hex(hexstring)
    except RpcError:
        raise RpcError(RpcCode.DESERIALIZATION_ERROR,
                       "TX decode failed. Make sure the tx has at least one input.") from None
    store = KeyStore()
    for key in privkeys:
        if not isinstance(key, str):
            raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {json_type(key).value} is "
                                               "not of expected type string")
        try:
            secret, compressed = decode_secret(key, call.node.params.addresses)
        except EncodingError:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid private key") from None
        store.add_key(secret, compressed)
    coins = _find_coins(call, tx)
    _parse_prevouts(prevtxs or [], store, coins)
    return sign_with_keys(call, tx, store, coins, parse_sighash(sighashtype))
