"""Confidential-transaction calls (docs/node-rpc.md §1.5): raw-transaction funding and blinding,
unblinding, blinding keys, asset issuance, and the address utilities that need no wallet.

The raw flow is Elements': ``createrawtransaction`` puts a confidential address's blinding
public key in its output's nonce field, ``fundrawtransaction`` adds coins, change (to
confidential change addresses, their keys in the nonce too) and the fee output,
``blindrawtransaction`` blinds every output that carries a key (Bulletproofs, surjection proofs,
the last value blind balancing the transaction), ``signrawtransactionwithwallet`` signs it
(``regtest.wallet.signing``: taproot digests commit to the finished outputs, so signing comes
last); ``sendrawtransaction`` then submits it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import coincurve

from ctplugin.elements import Transaction, TxOut
from ctplugin.elements.address import Destination, decode_destination
from ctplugin.elements.issuance import input_issuance_ids, reissuance_token_id
from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from regtest.wallet import Issuance, Payment, Reissuance, WalletError
from regtest.wallet.address import ConfidentialAddress
from regtest.wallet.ledger import TxState
from regtest.wallet.node_wallet import NodeWallet
from regtest.wallet.signing import SigningError, sign_transaction
from regtest.wallet.wallet import Opening, OwnedCoin
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.methods.wallet import (
    ZERO_BLINDER,
    address_kind_json,
    address_text,
    asset_from_label,
    asset_label,
    blinder_hex,
    build_and_send,
    policy_asset,
    policy_label,
    wallet_errors,
    wallet_fee_rate,
)
from rpc.params import amount_from_value, amount_json, decode_transaction_hex, parse_hex
from rpc.registry import Kind, Locking, optional, required, rpc
from validator import decode_txout


def _spent_output(call: Call, wallet: NodeWallet, txid: bytes, n: int) -> TxOut | None:
    """The output ``(txid, n)``: a wallet transaction's, the UTXO set's or a mempool one's."""
    parent = wallet.ledger.get(txid)
    if parent is not None:
        return parent.tx.outputs[n] if n < len(parent.tx.outputs) else None
    coin = call.node.utxo((txid, n))
    if coin is not None:
        return decode_txout(coin.txout)
    entry = call.node.mempool.entries.get(txid)
    if entry is not None and n < len(entry.tx.outputs):
        return entry.tx.outputs[n]
    return None


def _input_openings(call: Call, wallet: NodeWallet, tx: Transaction) -> list[Opening | None]:
    """Per input: the opening of the coin it spends — the wallet's, or an explicit UTXO's."""
    node = call.node
    openings: list[Opening | None] = []
    for i, txin in enumerate(tx.inputs):
        parent = wallet.ledger.get(txin.prevout_hash)
        if parent is not None and txin.prevout_index in parent.mine:
            openings.append(parent.mine[txin.prevout_index])
            continue
        if parent is not None and txin.prevout_index >= len(parent.tx.outputs):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter: transaction spends non-existing output")
        out: TxOut | None = None
        coin = node.utxo((txin.prevout_hash, txin.prevout_index))
        if coin is not None:
            out = decode_txout(coin.txout)
        else:
            entry = node.mempool.entries.get(txin.prevout_hash)
            if entry is not None and txin.prevout_index < len(entry.tx.outputs):
                out = entry.tx.outputs[txin.prevout_index]
        if out is None:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Invalid parameter: transaction spends non-existing output "
                           f"(input {i})")
        if isinstance(out.value, int) and out.asset_is_explicit:
            openings.append(Opening(out.asset, out.value, 0, 0))
        else:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter: transaction spends from non-wallet output and "
                           "no assetcommitment list was given.")
    return openings


@rpc("wallet", args=[required("hexstring", Kind.HEX, "A hex-encoded raw transaction."),
                     optional("ignoreblindfail", Kind.BOOL, True, "Return a transaction even "
                              "when a blinding attempt fails due to number of blinded inputs/"
                              "outputs."),
                     optional("asset_commitments", Kind.ARR, None),
                     optional("blind_issuances", Kind.BOOL, True),
                     optional("totalblinder", Kind.STR, None, "Ignored for now.")],
     wallet=True, locking=Locking.SELF,
     description="Convert one or more outputs of a raw transaction into confidential ones "
                 "using only wallet inputs: every explicit output whose nonce holds a blinding "
                 "public key is blinded.",
     result='"transaction"    (string) hex string of the transaction')
def blindrawtransaction(call: Call, hexstring: str, ignoreblindfail: bool,
                        asset_commitments: list[Any] | None, blind_issuances: bool,
                        totalblinder: str | None) -> str:
    tx = decode_transaction_hex(hexstring)
    wallet = call.wallet
    if asset_commitments is not None:
        if len(asset_commitments) < len(tx.inputs):
            raise RpcError(RpcCode.INVALID_PARAMETER, "Asset commitment array must have at "
                                                      "least as many entries as transaction "
                                                      "inputs.")
        for item in asset_commitments:
            if not isinstance(item, str) or len(item) != 66:
                raise RpcError(RpcCode.INVALID_PARAMETER, "Asset commitments must be a hex "
                                                          "encoded string of length 66.")
    with call.context.chain_lock, wallet.lock:
        openings = _input_openings(call, wallet, tx)
    to_blind = [out for out in tx.outputs if len(out.nonce) == 33 and isinstance(out.value, int)]
    blinded_inputs = any(o is not None and (o.abf or o.vbf) for o in openings)
    if not to_blind and not blinded_inputs:
        return tx.hex()
    if len(to_blind) == 1 and not blinded_inputs:
        # One blinded output and nothing blinded in: its blind would follow from the others.
        if not ignoreblindfail:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Unable to blind transaction: Add another "
                                                      "output to blind in order to complete "
                                                      "the blinding.")
        outputs = tuple(TxOut(asset=o.asset, value=o.value, script_pubkey=o.script_pubkey,
                              nonce=b"" if isinstance(o.value, int) else o.nonce)
                        for o in tx.outputs)
        return Transaction(version=tx.version, inputs=tx.inputs, outputs=outputs,
                           locktime=tx.locktime).hex()
    if not to_blind:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Unable to blind transaction: Add another "
                                                  "output to blind in order to complete the "
                                                  "blinding.")
    with wallet.lock:
        try:
            blinded, output_openings = wallet.wallet.blind(tx, openings)
        except WalletError as exc:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Unable to blind transaction: {exc}") from None
        wallet.remember_blinded(blinded.txid, output_openings)
        wallet.commit(state=True, sync=True)
    return blinded.hex()


@rpc("wallet", args=[required("hex", Kind.HEX, "The hex string of the raw transaction")],
     wallet=True, description="Recovers unblinded transaction outputs from blinded outputs "
                              "and issuance inputs when possible using wallet's known blinding "
                              "keys, and strips related witness data.")
def unblindrawtransaction(call: Call, hex: str) -> dict[str, Any]:
    tx = decode_transaction_hex(hex)
    wallet = call.wallet
    outputs = []
    for out in tx.outputs:
        secret = wallet.blinding_secret(out.script_pubkey)
        opened = None
        if secret is not None and not isinstance(out.value, int):
            opened = wallet.wallet.open_output(out, secret)
        if opened is None:
            outputs.append(out)
            continue
        asset, value, _abf, _vbf = opened
        outputs.append(TxOut(asset=asset, value=value, script_pubkey=out.script_pubkey))
    unblinded = Transaction(version=tx.version, inputs=tx.inputs, outputs=tuple(outputs),
                            locktime=tx.locktime)
    return {"hex": unblinded.hex()}


@rpc("wallet",
     args=[required("hexstring", Kind.HEX, "The hex string of the raw transaction"),
           optional("options", Kind.OBJ, None, "fee_rate (sat/vB), feeRate (BTC/kvB), "
                    "changePosition, subtractFeeFromOutputs (unsupported), add_inputs"),
           optional("iswitness", Kind.BOOL, None)],
     wallet=True, locking=Locking.SELF,
     description="Add inputs to a transaction until it has enough in value to meet its out "
                 "value, add change outputs (confidential: the blinding key in the nonce) and "
                 "the fee output. The transaction is not blinded: use blindrawtransaction.")
def fundrawtransaction(call: Call, hexstring: str, options: dict[str, Any] | None,
                       iswitness: bool | None) -> dict[str, Any]:
    tx = decode_transaction_hex(hexstring)
    opts = dict(options or {})
    known = {"fee_rate", "feeRate", "changePosition", "subtractFeeFromOutputs", "add_inputs",
             "includeWatching", "lockUnspents", "replaceable", "conf_target", "estimate_mode",
             "change_type", "changeAddress"}
    unknown = set(opts) - known
    if unknown:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"Unexpected key {sorted(unknown)[0]}")
    if opts.get("subtractFeeFromOutputs"):
        raise RpcError(RpcCode.INVALID_PARAMETER, "subtractFeeFromOutputs is not supported")
    if "feeRate" in opts:
        rate = amount_from_value(opts["feeRate"])
    else:
        rate = wallet_fee_rate(call, opts.get("fee_rate"), opts.get("conf_target"))
    payments = []
    for n, out in enumerate(tx.outputs):
        if out.is_fee:
            continue
        if not isinstance(out.value, int) or not out.asset_is_explicit:
            raise RpcError(RpcCode.INVALID_PARAMETER, f"output {n} is already blinded")
        if out.value <= 0:
            raise RpcError(RpcCode.INVALID_PARAMETER, f"output {n}: zero-value outputs cannot "
                                                      "be funded here")
        if len(out.nonce) == 33:
            payments.append(Payment(out.value, ConfidentialAddress(out.script_pubkey, out.nonce),
                                    asset=out.asset))
        else:
            payments.append(Payment(out.value, script_pubkey=out.script_pubkey, asset=out.asset))
    wallet = call.wallet
    with wallet.lock:
        inputs: list[OwnedCoin] = []
        for txin in tx.inputs:
            coin = wallet.wallet.coins.get((txin.prevout_hash, txin.prevout_index))
            if coin is None:
                raise RpcError(RpcCode.INVALID_PARAMETER, "Insufficient funds: preselected "
                                                          "input is not a wallet coin")
            inputs.append(coin)
        try:
            funded, fee, change = wallet.wallet.fund(payments, fee_rate=rate,
                                                     height=call.node.tip.height + 1,
                                                     inputs=inputs)
        except WalletError as exc:
            raise wallet_errors(exc) from None
        wallet.commit(state=True, sync=True)
    # Core keeps what the caller set: preselected inputs' sequences (their BIP125 signal,
    # relative locktimes) and the locktime; inputs the wallet adds get its default.
    preset = {(t.prevout_hash, t.prevout_index): t.sequence for t in tx.inputs}
    funded = Transaction(
        version=funded.version, locktime=tx.locktime, outputs=funded.outputs,
        inputs=tuple(replace(t, sequence=preset.get((t.prevout_hash, t.prevout_index),
                                                     t.sequence)) for t in funded.inputs))
    return {"hex": funded.hex(), "fee": amount_json(fee),
            "changepos": change[0] if change else -1}


@rpc("wallet", args=[required("hexstring", Kind.HEX, "The transaction hex string"),
                     optional("prevtxs", Kind.ARR, None, "The previous dependent transaction "
                              "outputs (unsupported here: the wallet, the UTXO set and the "
                              "mempool provide them)"),
                     optional("sighashtype", Kind.STR, "DEFAULT", "The signature hash type: "
                              "the wallet signs SIGHASH_DEFAULT (taproot) / ALL (P2WPKH)")],
     wallet=True, locking=Locking.SELF,
     description="Sign inputs for raw transaction (serialized, hex-encoded): every input "
                 "spending one of the wallet's P2WPKH or P2TR outputs (or a bare OP_TRUE).")
def signrawtransactionwithwallet(call: Call, hexstring: str, prevtxs: list[Any] | None,
                                 sighashtype: str) -> dict[str, Any]:
    if sighashtype not in ("DEFAULT", "ALL"):
        raise RpcError(RpcCode.INVALID_PARAMETER, f"{sighashtype} is not a valid sighash "
                                                  "parameter.")
    if prevtxs:
        raise RpcError(RpcCode.INVALID_PARAMETER, "prevtxs is not supported: the spent outputs "
                                                  "must be known to the node")
    tx = decode_transaction_hex(hexstring)
    wallet = call.wallet
    with call.context.chain_lock, wallet.lock:
        spent = [_spent_output(call, wallet, t.prevout_hash, t.prevout_index)
                 for t in tx.inputs]
    errors = []
    for txin, out in zip(tx.inputs, spent):
        problem = None
        if out is None:
            problem = "Input not found or already spent"
        elif out.script_pubkey != b"\x51" and not wallet.is_mine(out.script_pubkey):
            problem = "Unable to sign input, invalid stack size (possibly missing key)"
        if problem is not None:
            errors.append({"txid": txin.prevout_txid_hex, "vout": txin.prevout_index,
                           "witness": [w.hex() for w in txin.script_witness],
                           "scriptSig": txin.script_sig.hex(), "sequence": txin.sequence,
                           "error": problem})
    if errors:
        return {"hex": tx.hex(), "complete": False, "errors": errors}
    with wallet.lock:
        try:
            signed = sign_transaction(tx, [o for o in spent if o is not None], wallet.wallet.keys,
                                      wallet.wallet.genesis_hash, wallet.wallet.random_bytes)
        except SigningError as exc:
            raise RpcError(RpcCode.WALLET_ERROR, str(exc)) from None
        wallet.commit(state=True)
    return {"hex": signed.hex(), "complete": True}


# --- blinding keys ------------------------------------------------------------------------------


def _decode(call: Call, address: str) -> Destination:
    try:
        return decode_destination(address, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid Bitcoin address") from None


@rpc("wallet", args=[required("address", Kind.STR, "The CT address")], wallet=True,
     description="Dumps the private blinding key for a CT address in hex.")
def dumpblindingkey(call: Call, address: str) -> str:
    dest = _decode(call, address)
    wallet = call.wallet
    secret = wallet.blinding_secret(dest.script_pubkey)
    if secret is None:
        raise RpcError(RpcCode.WALLET_ERROR, "Blinding key for address is unknown")
    if dest.blinding_pubkey is not None and ct.base_mul(secret).to_bytes() != dest.blinding_pubkey:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "CT address blinding key does not match the blinding key in wallet")
    return secret.to_bytes(32, "big").hex()


@rpc("wallet", args=[required("address", Kind.STR, "The CT address"),
                     required("hexkey", Kind.STR, "The blinding key in hex")],
     wallet=True, description="Imports a private blinding key in hex for a CT address.")
def importblindingkey(call: Call, address: str, hexkey: str) -> None:
    try:
        dest = decode_destination(address, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid Bitcoin address.") from None
    if dest.blinding_pubkey is None:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Address is not confidential.")
    try:
        key = bytes.fromhex(hexkey)
    except ValueError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid hexadecimal for key") from None
    if len(key) != 32:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid hexadecimal key length")
    secret = int.from_bytes(key, "big")
    if not 0 < secret < N or ct.base_mul(secret).to_bytes() != dest.blinding_pubkey:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Address and key do not match")
    call.wallet.import_blinding_key(dest.script_pubkey, secret)


@rpc("wallet", wallet=True, description="Dumps the master private blinding key in hex "
                                        "(SLIP-77).")
def dumpmasterblindingkey(call: Call) -> str:
    return call.wallet.wallet.keys.master_blinding_key.hex()


# --- issuance -----------------------------------------------------------------------------------


@rpc("wallet", args=[required("assetamount", Kind.AMOUNT, "Amount of asset to generate."),
                     required("tokenamount", Kind.AMOUNT, "Amount of reissuance tokens to "
                                                          "generate."),
                     optional("blind", Kind.BOOL, True, "Whether to blind the issuance amount "
                                                        "(the outputs are always blinded)."),
                     optional("contract_hash", Kind.STR, None, "Contract hash that is put into "
                                                               "issuance definition.")],
     wallet=True, locking=Locking.SELF,
     description="Create an asset. Must have funds in the wallet to cover the transaction fee. "
                 "The asset and its reissuance tokens go to new confidential addresses of the "
                 "wallet.")
def issueasset(call: Call, assetamount: Any, tokenamount: Any, blind: bool,
               contract_hash: str | None) -> dict[str, Any]:
    amount = amount_from_value(assetamount)
    tokens = amount_from_value(tokenamount)
    if amount == 0 and tokens == 0:
        raise RpcError(RpcCode.TYPE_ERROR, "Issuance must have one non-zero component")
    if amount == 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Token-only issuance is not supported by this "
                                                  "wallet (give an asset amount)")
    contract = bytes(32)
    if contract_hash is not None:
        raw = parse_hex(contract_hash, "contract_hash")
        if len(raw) != 32:
            raise RpcError(RpcCode.INVALID_PARAMETER, "contract_hash must be 32 bytes")
        contract = raw[::-1]
    built = build_and_send(call, [], fee_rate=wallet_fee_rate(call, None, None),
                           issuance=Issuance(amount, tokens, contract, blind_amount=blind))
    ids = input_issuance_ids(built.tx.inputs[0])
    assert ids is not None
    return {"txid": built.tx.txid_hex, "vin": 0, "entropy": ids.entropy[::-1].hex(),
            "asset": ids.asset[::-1].hex(), "token": ids.token[::-1].hex()}


@rpc("wallet", args=[required("asset", Kind.STR, "The asset you want to re-issue. The "
                                                 "corresponding token must be in your wallet."),
                     required("assetamount", Kind.AMOUNT, "Amount of additional asset to "
                                                          "generate.")],
     wallet=True, locking=Locking.SELF,
     description="Create more of an already issued asset. Must have reissuance token in wallet "
                 "to do so.")
def reissueasset(call: Call, asset: str, assetamount: Any) -> dict[str, Any]:
    amount = amount_from_value(assetamount)
    if amount <= 0:
        raise RpcError(RpcCode.TYPE_ERROR, "Reissuance must create a non-zero amount.")
    asset_id = asset_from_label(call, asset)
    assert asset_id is not None
    wallet = call.wallet
    with wallet.lock:
        token = wallet.wallet.token_of.get(asset_id)
        if token is None:
            if asset_id in wallet.wallet.token_of.values():
                raise RpcError(RpcCode.WALLET_ERROR, "Asset given is a reissuance token type and "
                                                     "can not be reissued.")
            raise RpcError(RpcCode.WALLET_ERROR, "Asset reissuance token definition could not "
                                                 "be found in wallet.")
        if not wallet.wallet.spendable(token, call.node.tip.height + 1):
            raise RpcError(RpcCode.WALLET_INSUFFICIENT_FUNDS,
                           "No available reissuance tokens in wallet.")
        entropy = wallet.wallet.entropy[asset_id]
        blinded = token == reissuance_token_id(entropy, True)  # the asset's issuance was blinded
    built = build_and_send(call, [], fee_rate=wallet_fee_rate(call, None, None),
                           reissuance=Reissuance(asset_id, amount, blind_amount=blinded))
    return {"txid": built.tx.txid_hex, "vin": 0}


@rpc("wallet", args=[optional("asset", Kind.STR, None, "The asset whose issaunces you wish to "
                                                       "list. Accepts either the asset hex or "
                                                       "the locally assigned asset label.")],
     wallet=True, description="List all issuances known to the wallet for the given asset, or "
                              "for all issued assets if none provided.")
def listissuances(call: Call, asset: str | None) -> list[dict[str, Any]]:
    wallet = call.wallet
    wanted = asset_from_label(call, asset, strict=False) if asset is not None else None
    if asset is not None and wanted is None:
        return []
    result = []
    for wtx in wallet.ledger.by_time():
        if wtx.state in (TxState.CONFLICTED, TxState.ABANDONED):
            continue
        for vin, txin in enumerate(wtx.tx.inputs):
            ids = input_issuance_ids(txin)
            if ids is None or (wanted is not None and ids.asset != wanted):
                continue
            issuance = txin.issuance
            assert issuance is not None
            entry: dict[str, Any] = {"txid": wtx.tx.txid_hex, "entropy": ids.entropy[::-1].hex(),
                                     "asset": ids.asset[::-1].hex()}
            if ids.asset == policy_asset(call):
                entry["assetlabel"] = asset_label(call, ids.asset)
            if not issuance.is_reissuance:
                entry["token"] = ids.token[::-1].hex()
            entry["vin"] = vin
            known = wtx.issuance if wtx.issuance is not None and wtx.issuance.asset == ids.asset \
                else None
            if known is None and not isinstance(issuance.amount, int):
                known = wallet.issuance_opening(wtx.tx, vin)  # imported or own issuance key
            if isinstance(issuance.amount, int):
                entry["assetamount"] = amount_json(issuance.amount)
            else:
                entry["assetamount"] = amount_json(known.value) if known else amount_json(-1)
            if not issuance.is_reissuance:
                tokens = issuance.inflation_keys
                entry["tokenamount"] = amount_json(tokens if isinstance(tokens, int) else 0)
            entry["isreissuance"] = issuance.is_reissuance
            entry["assetblinds"] = blinder_hex(known.vbf) if known else ZERO_BLINDER
            if not issuance.is_reissuance:
                entry["tokenblinds"] = ZERO_BLINDER
            result.append(entry)
    return result


# --- utilities without a wallet -------------------------------------------------------------


@rpc("util", description="Returns a map of asset labels to their asset ids.",
     locking=Locking.SELF)
def dumpassetlabels(call: Call) -> dict[str, str]:
    return {policy_label(call): policy_asset(call)[::-1].hex()}


@rpc("util", args=[required("address", Kind.STR, "The address to validate")],
     description="Return information about the given address.", locking=Locking.SELF)
def validateaddress(call: Call, address: str) -> dict[str, Any]:
    try:
        dest = decode_destination(address, call.node.params.addresses)
    except EncodingError as exc:
        return {"isvalid": False, "isvalid_parent": False, "error_locations": [],
                "error": str(exc)}
    script = dest.script_pubkey
    return {"isvalid": True, "isvalid_parent": False, "address": address,
            "scriptPubKey": script.hex(), **address_kind_json(script),
            "confidential_key": dest.blinding_pubkey.hex() if dest.blinding_pubkey else "",
            "unconfidential": address_text(call, dest.unconfidential())}


@rpc("util", args=[required("address", Kind.STR, "The unblinded address to be blinded."),
                   required("blinding_key", Kind.STR, "The blinding public key. This can be "
                                                      "obtained for a given address using "
                                                      "`getaddressinfo` (`confidential_key` "
                                                      "field).")],
     description="Creates a blinded address using the provided blinding key.",
     locking=Locking.SELF)
def createblindedaddress(call: Call, address: str, blinding_key: str) -> str:
    try:
        dest = decode_destination(address, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid Bitcoin address or script") \
            from None
    if dest.blinding_pubkey is not None:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Not an unblinded address")
    try:
        key = bytes.fromhex(blinding_key)
    except ValueError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid hexadecimal for key") from None
    if len(key) != 33:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "Invalid hexadecimal key length, must be length 66.")
    try:
        coincurve.PublicKey(key)
        return address_text(call, Destination(dest.script_pubkey, key))
    except (ValueError, EncodingError):
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid blinding key") from None

