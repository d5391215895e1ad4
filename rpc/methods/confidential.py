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

import secrets
from dataclasses import replace
from typing import Any

import coincurve

from ctplugin.elements import Transaction, TxOut
from ctplugin.elements.address import Destination, decode_destination
from ctplugin.elements.issuance import input_issuance_ids, reissuance_token_id
from ctplugin.elements.script import push_data
from ctplugin.errors import CtpluginError, EncodingError
from ctplugin.script.checker import checker_for
from ctplugin.script.errors import ScriptError
from ctplugin.script.flags import STANDARD
from ctplugin.script.interpreter import verify_input
from ctplugin.script.sighash import PrecomputedTransaction
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from regtest.wallet import Issuance, Payment, Reissuance, WalletError
from regtest.wallet.address import ConfidentialAddress
from regtest.wallet.keys import slip77_blinding_secret
from regtest.wallet.ledger import TxState
from regtest.wallet.node_wallet import NodeWallet
from regtest.wallet.signing import (
    SigningError,
    combine_multisig_witness,
    multisig_keys,
    sign_transaction,
)
from regtest.wallet.wallet import Opening, OwnedCoin, Wallet
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
    choose_fee_rate,
    ensure_unlocked,
    policy_asset,
    policy_label,
    wallet_errors,
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


def _input_openings(call: Call, wallet: NodeWallet, tx: Transaction,
                    foreign: bool = False) -> list[Opening | None]:
    """Per input: the opening of the coin it spends — the wallet's, or an explicit UTXO's;
    None for someone else's blinded coin when ``foreign`` (asset commitments were given)."""
    node = call.node
    openings: list[Opening | None] = []
    for i, txin in enumerate(tx.inputs):
        parent = wallet.ledger.get(txin.prevout_hash)
        # any output the wallet opened, watched ones too (elementsd reads the blinders of
        # every wallet transaction's output it unblinded, ours to spend or not)
        opened = parent.opening(txin.prevout_index) if parent is not None else None
        if opened is not None:
            openings.append(opened)
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
        if out is None and foreign:
            openings.append(None)
            continue
        if out is None:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Invalid parameter: transaction spends non-existing output "
                           f"(input {i})")
        if isinstance(out.value, int) and out.asset_is_explicit:
            openings.append(Opening(out.asset, out.value, 0, 0))
        elif foreign:
            openings.append(None)
        else:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter: transaction spends from non-wallet output and "
                           "no assetcommitment list was given.")
    return openings


@rpc("wallet", args=[required("hexstring", Kind.HEX, "A hex-encoded raw transaction."),
                     optional("ignoreblindfail", Kind.BOOL, True, "Return a transaction even "
                              "when a blinding attempt fails due to number of blinded inputs/"
                              "outputs."),
                     optional("asset_commitments", Kind.ARR, None,
                              "The inputs' asset commitments (hex, 33 bytes each), in input "
                              "order, for the surjection proofs: needed when a blinded input "
                              "is not the wallet's. At least one per input; an empty array "
                              "counts as none given."),
                     optional("blind_issuances", Kind.BOOL, True,
                              "Blind the issuances found in the raw transaction (amounts and "
                              "new tokens, with the wallet's issuance blinding keys) or leave "
                              "them explicit."),
                     optional("totalblinder", Kind.STR, None, "Ignored for now.")],
     wallet=True, locking=Locking.SELF,
     description="Convert one or more outputs of a raw transaction into confidential ones "
                 "using only wallet inputs: every explicit output whose nonce holds a blinding "
                 "public key is blinded.",
     result='"transaction"    (string) hex string of the transaction',
     examples=["\"rawtransactionhex\"", "\"rawtransactionhex\" true '[\"<assetcommitment>\"]'"])
def blindrawtransaction(call: Call, hexstring: str, ignoreblindfail: bool,
                        asset_commitments: list[Any] | None, blind_issuances: bool,
                        totalblinder: str | None) -> str:
    tx = decode_transaction_hex(hexstring)
    wallet = call.wallet
    generators: list[bytes] = []
    if asset_commitments:  # an empty list is no list (elements.cpp)
        if len(asset_commitments) < len(tx.inputs):
            raise RpcError(RpcCode.INVALID_PARAMETER, "Asset commitment array must have at "
                                                      "least as many entries as transaction "
                                                      "inputs.")
        for item in asset_commitments:
            if not isinstance(item, str) or len(item) != 66 or not _is_hex(item):
                raise RpcError(RpcCode.INVALID_PARAMETER, "Asset commitments must be a hex "
                                                          "encoded string of length 66.")
            generators.append(bytes.fromhex(item))
    with call.context.chain_lock, wallet.lock:
        openings = _input_openings(call, wallet, tx, foreign=bool(generators))
    # FillBlinds: outputs blinded to our keys (change, self-sends) are opened and blinded again
    outputs = []
    for out in tx.outputs:
        secret = None if isinstance(out.value, int) else wallet.blinding_secret(out.script_pubkey)
        opened = wallet.wallet.open_output(out, secret) if secret is not None else None
        if opened is None or secret is None:
            outputs.append(out)
            continue
        outputs.append(TxOut(asset=opened[0], value=opened[1], script_pubkey=out.script_pubkey,
                             nonce=ct.base_mul(secret).to_bytes()))
    tx = Transaction(version=tx.version, inputs=tx.inputs, outputs=tuple(outputs),
                     locktime=tx.locktime)
    to_blind = [out for out in tx.outputs if len(out.nonce) == 33 and isinstance(out.value, int)]
    blinded_inputs = any(o is not None and (o.abf or o.vbf) for o in openings)
    # FillBlinds gives every explicit issuance amount and token a key: each counts as one
    # more value to blind
    issuance_values = 0 if not blind_issuances else sum(
        isinstance(t.issuance.amount, int) + (isinstance(t.issuance.inflation_keys, int)
                                              and not t.issuance.is_reissuance)
        for t in tx.inputs if t.issuance is not None)
    if not to_blind and not issuance_values and not blinded_inputs:
        return tx.hex()
    if blinded_inputs and not to_blind:
        if not tx.outputs:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Unable to blind transaction: transaction "
                                                      "has no outputs to balance blinded inputs "
                                                      "against.")
        # Blinded inputs need a blinded output to balance with: a zero-value OP_RETURN of the
        # last output's asset, blinded to the wallet's key for that script (elements.cpp)
        dummy_key = ct.base_mul(slip77_blinding_secret(
            wallet.wallet.keys.master_blinding_key, OP_RETURN)).to_bytes()
        last = tx.outputs[-1]
        asset = last.asset if len(last.asset) == 32 else policy_asset(call)
        tx = Transaction(version=tx.version, inputs=tx.inputs,
                         outputs=(*tx.outputs, TxOut(asset=asset, value=0,
                                                     script_pubkey=OP_RETURN,
                                                     nonce=dummy_key)),
                         locktime=tx.locktime)
    elif len(to_blind) + issuance_values == 1 and not blinded_inputs:
        # One blinded output and nothing blinded in: its blind would follow from the others.
        if not ignoreblindfail:
            raise RpcError(RpcCode.INVALID_PARAMETER, ADD_ANOTHER_OUTPUT)
        stripped = tuple(replace(o, nonce=b"") if isinstance(o.value, int) else o
                         for o in tx.outputs)
        return Transaction(version=tx.version, inputs=tx.inputs, outputs=stripped,
                           locktime=tx.locktime).hex()
    elif not to_blind and not blinded_inputs:
        # issuance values alone: BlindTransaction blinds them only against an output it blinds
        raise RpcError(RpcCode.INVALID_PARAMETER, CANNOT_BLIND)
    with wallet.lock:  # an output asset no input (or issuance) has fails its surjection
        try:
            key = wallet.issuance_blinding_secret  # imported, else the wallet's own
            blinded, output_openings = wallet.wallet.blind(
                tx, openings, generators or None,
                (lambda txin: key(txin.prevout_hash, txin.prevout_index))
                if blind_issuances else None)
        except WalletError:
            raise RpcError(RpcCode.INVALID_PARAMETER, CANNOT_BLIND) from None
        wallet.remember_blinded(blinded.txid, output_openings)
        wallet.commit(state=True, sync=True)
    return blinded.hex()


@rpc("wallet", args=[required("hex", Kind.HEX, "The hex string of the raw transaction")],
     wallet=True, description="Recovers unblinded transaction outputs from blinded outputs "
                              "and issuance inputs when possible using wallet's known blinding "
                              "keys, and strips related witness data.",
     result="{\n  \"hex\" : \"hex\"    (string) The unblinded raw transaction\n}",
     examples=["\"blindedtransactionhex\""])
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
           optional("options", Kind.OBJ_OR_BOOL, None, "An object with fee_rate (sat/vB), feeRate "
                    "(BTC/kvB), changePosition, add_inputs, includeWatching, lockUnspents, "
                    "replaceable, conf_target, estimate_mode, change_type, changeAddress. For "
                    "backward compatibility: passing in a true instead of an object will "
                    "result in {\"includeWatching\":true}"),
           optional("iswitness", Kind.BOOL, None,
                    "Whether the hex is a serialized witness transaction. Accepted for "
                    "elementsd's argument list: an Elements transaction's flag byte says "
                    "whether witness data follows (docs/elements-format.md §1), so the hex is "
                    "decoded by it either way.")],
     wallet=True, locking=Locking.SELF,
     description="Add inputs to a transaction until it has enough in value to meet its out "
                 "value, add change outputs (confidential: the blinding key in the nonce) and "
                 "the fee output. The transaction is not blinded: use blindrawtransaction.",
     result='{\n  "hex" : "hex",       (string) The resulting raw transaction (hex-encoded '
            'string)\n  "fee" : n,           (numeric) Fee in BTC the resulting transaction '
            'pays\n  "changepos" : n      (numeric) The position of the added change output, '
            'or -1\n}',
     examples=['"rawtransactionhex"', '"rawtransactionhex" \'{"fee_rate": 2}\''])
def fundrawtransaction(call: Call, hexstring: str, options: dict[str, Any] | bool | None,
                       iswitness: bool | None) -> dict[str, Any]:
    tx = decode_transaction_hex(hexstring)
    if isinstance(options, bool):  # Core's legacy form (spend.cpp FundTransaction)
        options = {"includeWatching": options}
    opts = dict(options or {})
    known = {"fee_rate", "feeRate", "changePosition", "subtractFeeFromOutputs", "add_inputs",
             "includeWatching", "lockUnspents", "replaceable", "conf_target", "estimate_mode",
             "change_type", "changeAddress", "include_unsafe", "minconf", "maxconf"}
    unknown = set(opts) - known
    if unknown:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"Unexpected key {sorted(unknown)[0]}")
    if opts.get("subtractFeeFromOutputs"):
        raise RpcError(RpcCode.INVALID_PARAMETER, "subtractFeeFromOutputs is not supported")
    if "feeRate" in opts:
        if "fee_rate" in opts:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Cannot specify both fee_rate (sat/vB) "
                                                      "and feeRate (BTC/kvB)")
        rate = amount_from_value(opts["feeRate"])
    else:
        try:
            rate = choose_fee_rate(call, opts.get("fee_rate"), opts.get("conf_target"),
                                   opts.get("estimate_mode"), override_min_fee=True).rate
        except RpcError as error:  # FundTransaction reports wallet failures as -4
            if error.code == RpcCode.WALLET_INSUFFICIENT_FUNDS:
                raise RpcError(RpcCode.WALLET_ERROR, error.message) from None
            raise
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
            output_assets = {p.asset for p in payments}
            if coin.asset != policy_asset(call) and coin.asset not in output_assets:
                # Elements' FundTransaction: the change of a preselected asset has no output
                # to ride along with, so such transactions are refused up front
                raise RpcError(RpcCode.WALLET_ERROR, "Transaction is missing an output for "
                                                     f"input asset {coin.asset[::-1].hex()}")
            inputs.append(coin)
        try:
            funded, fee, change = wallet.wallet.fund(payments, fee_rate=rate,
                                                     height=call.node.tip.height + 1,
                                                     inputs=inputs)
        except WalletError as exc:  # FundTransaction reports every failure as -4
            raise RpcError(RpcCode.WALLET_ERROR, wallet_errors(exc).message) from None
        wallet.commit(state=True, sync=True)
        if opts.get("lockUnspents"):  # the inputs stay out of later selections (in memory)
            wallet.lock_coins([(t.prevout_hash, t.prevout_index) for t in funded.inputs
                               if (t.prevout_hash, t.prevout_index) not in wallet.wallet.locked],
                              persistent=False)
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
                 "spending one of the wallet's P2WPKH or P2TR outputs (or a bare OP_TRUE).",
     result=("{\n"
             "  \"hex\" : \"hex\",           (string) The hex-encoded raw transaction "
             "with signature(s)\n"
             "  \"complete\" : true|false,  (boolean) If the transaction has a "
             "complete set of signatures\n"
             "  \"errors\" : [ {...}, ... ] (json array, optional) Script "
             "verification errors (if there are any)\n"
             "}"),
     examples=["\"myhex\""])
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
    ensure_unlocked(wallet)
    with call.context.chain_lock, wallet.lock:
        spent = [_spent_output(call, wallet, t.prevout_hash, t.prevout_index)
                 for t in tx.inputs]
    # Core signs the inputs it can and lists the others (another party signs them later)
    failed = {i for i, (txin, out) in enumerate(zip(tx.inputs, spent))
              if out is None or (out.script_pubkey != b"\x51"
                                 and not wallet.is_mine(out.script_pubkey))}
    signed = tx
    if len(failed) < len(tx.inputs) and all(o is not None for o in spent):
        with wallet.lock:
            try:
                signed = sign_transaction(
                    tx, [o for o in spent if o is not None], wallet.wallet.keys,
                    wallet.wallet.genesis_hash, wallet.wallet.random_bytes,
                    only=[i for i in range(len(tx.inputs)) if i not in failed])
            except SigningError as exc:
                raise RpcError(RpcCode.WALLET_ERROR, str(exc)) from None
            wallet.commit(state=True)
    partial: set[int] = set()
    if all(o is not None for o in spent):
        signed, partial = _sign_shared_multisig(wallet, signed, spent, failed)
    errors = []
    for i in sorted(failed):
        txin, out = signed.inputs[i], spent[i]
        if out is None:
            problem = "Input not found or already spent"
        elif _input_is_signed(signed, spent, i, wallet.wallet.genesis_hash):
            continue  # another party's input it already signed: complete
        elif i in partial:
            problem = ("CHECK(MULTI)SIG failing with non-zero signature (possibly need more "
                       "signatures)")
        else:
            problem = "Unable to sign input, invalid stack size (possibly missing key)"
        errors.append({"txid": txin.prevout_txid_hex, "vout": txin.prevout_index,
                       "witness": [w.hex() for w in txin.script_witness],
                       "scriptSig": txin.script_sig.hex(), "sequence": txin.sequence,
                       "error": problem})
    if errors:
        return {"hex": signed.hex(), "complete": False, "errors": errors}
    return {"hex": signed.hex(), "complete": True}


def _sign_shared_multisig(wallet: NodeWallet, tx: Transaction, spent: list[TxOut | None],
                          inputs: set[int]) -> tuple[Transaction, set[int]]:
    """Core's SignTransaction on an m-of-n P2WSH (or P2SH-P2WSH) input whose script the wallet
    knows (addmultisigaddress) but holds only some keys of: its signatures join those already
    there (``combine_multisig_witness``). Returns the transaction and the inputs still short of
    signatures."""
    outs = [o for o in spent if o is not None]
    pre = PrecomputedTransaction(tx, outs, wallet.wallet.genesis_hash)
    txins = list(tx.inputs)
    short: set[int] = set()
    for i in sorted(inputs):
        redeem, witness_script = wallet.redeem_scripts.get(outs[i].script_pubkey, (None, None))
        if witness_script is None:
            continue
        try:
            m_keys = multisig_keys(witness_script)[1]
        except SigningError:
            continue
        secrets = {k: s for k in m_keys
                   if (s := wallet.wallet.keys.secret_of(k)) is not None}
        if not secrets:
            continue
        witness, complete = combine_multisig_witness(pre, i, witness_script,
                                                     txins[i].script_witness, secrets)
        txins[i] = replace(txins[i], script_witness=witness,
                           script_sig=push_data(redeem) if redeem is not None else b"")
        if not complete:
            short.add(i)
    return replace(tx, inputs=tuple(txins)), short


def _input_is_signed(tx: Transaction, spent: list[TxOut | None], index: int,
                     genesis_hash: bytes) -> bool:
    """Input ``index`` already carries a witness or scriptSig that satisfies its script (Core's
    SignTransaction verifies each input after signing)."""
    txin = tx.inputs[index]
    if not txin.script_witness and not txin.script_sig:
        return False
    if any(o is None for o in spent):
        return False
    outs = [o for o in spent if o is not None]
    try:
        pre = PrecomputedTransaction(tx, outs, genesis_hash)
        verify_input(pre, index, STANDARD, checker_for(pre, index, STANDARD))
    except (ScriptError, CtpluginError):
        return False
    return True


# --- blinding keys ------------------------------------------------------------------------------


def _decode(call: Call, address: str) -> Destination:
    try:
        return decode_destination(address, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid Bitcoin address") from None


@rpc("wallet", args=[required("address", Kind.STR, "The CT address")], wallet=True,
     description="Dumps the private blinding key for a CT address in hex.",
     result="\"hex\"    (string) The blinding key",
     examples=["\"el1qq…\""])
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
     wallet=True, description="Imports a private blinding key in hex for a CT address.",
     result="null    (json null)",
     examples=["\"el1qq…\" \"<blindinghex>\""])
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
                                        "(SLIP-77).",
     result='"blindingkey"    (string) the master blinding key (32 bytes, hex)',
     examples=("",))
def dumpmasterblindingkey(call: Call) -> str:
    return call.wallet.wallet.keys.master_blinding_key.hex()


def _is_hex(text: str) -> bool:
    return len(text) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in text)


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
                 "wallet.",
     result=("{\n"
             "  \"txid\" : \"hex\",     (string) Transaction id for issuance.\n"
             "  \"vin\" : n,          (numeric) The input position of the issuance in "
             "the transaction.\n"
             "  \"entropy\" : \"hex\",  (string) Entropy of the asset type.\n"
             "  \"asset\" : \"hex\",    (string) Asset type for issuance.\n"
             "  \"token\" : \"hex\"     (string) Token type for issuance.\n"
             "}"),
     examples=["10 0", "10 1 false"])
def issueasset(call: Call, assetamount: Any, tokenamount: Any, blind: bool,
               contract_hash: str | None) -> dict[str, Any]:
    amount = amount_from_value(assetamount)
    tokens = amount_from_value(tokenamount)
    if amount == 0 and tokens == 0:
        raise RpcError(RpcCode.TYPE_ERROR, "Issuance must have one non-zero component")
    contract = bytes(32)
    if contract_hash is not None:
        raw = parse_hex(contract_hash, "contract_hash")
        if len(raw) != 32:
            raise RpcError(RpcCode.INVALID_PARAMETER, "contract_hash must be 32 bytes")
        contract = raw[::-1]
    built = build_and_send(call, [], fee_rate=choose_fee_rate(call, None, None).rate,
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
                 "to do so.",
     result=("{\n"
             "  \"txid\" : \"hex\",    (string) Transaction id for issuance.\n"
             "  \"vin\" : n          (numeric) The input position of the issuance in "
             "the transaction.\n"
             "}"),
     examples=["\"<asset>\" 0"])
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
    built = build_and_send(call, [], fee_rate=choose_fee_rate(call, None, None).rate,
                           reissuance=Reissuance(asset_id, amount, blind_amount=blinded))
    return {"txid": built.tx.txid_hex, "vin": 0}


_UNKNOWN_AMOUNT = -1
"""listissuances' amount of a blinded issuance no key opens: the number -1 itself, not -1
satoshi (src/wallet/rpc/elements.cpp pushes ``-1``, not ``ValueFromAmount(-1)``)."""


@rpc("wallet", args=[optional("asset", Kind.STR, None, "The asset whose issaunces you wish to "
                                                       "list. Accepts either the asset hex or "
                                                       "the locally assigned asset label.")],
     wallet=True, description="List all issuances known to the wallet for the given asset, or "
                              "for all issued assets if none provided.",
     result=("[\n"
             "  {\n"
             "    \"txid\" : \"hex\",          (string) Transaction id for issuance.\n"
             "    \"entropy\" : \"hex\",       (string) Entropy of the asset type.\n"
             "    \"asset\" : \"hex\",         (string) Asset type for issuance if known.\n"
             "    \"assetlabel\" : \"str\",    (string, optional) Asset label for "
             "issuance if set.\n"
             "    \"token\" : \"hex\",         (string) Token type for issuance.\n"
             "    \"vin\" : n,               (numeric) The input position of the "
             "issuance in the transaction.\n"
             "    \"assetamount\" : n,       (numeric) The amount of asset issued. Is "
             "-1 if blinded and unknown to wallet.\n"
             "    \"tokenamount\" : n,       (numeric) The reissuance token amount "
             "issued. Is -1 if blinded and unknown to wallet.\n"
             "    \"isreissuance\" : true|false,\n"
             "    \"assetblinds\" : \"hex\",   (string) Blinding factor for the asset amounts\n"
             "    \"tokenblinds\" : \"hex\"    (string) Blinding factor for the token amounts\n"
             "  },\n"
             "  ...\n"
             "]"),
     examples=["", "\"<asset>\""])
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
            if known is None:  # someone else's issuance whose key was imported, or a restart
                opened = wallet.open_issuance_amount(txin)
                if opened is not None:
                    known = Opening(ids.asset, opened[0], 0, opened[1])
            if not isinstance(issuance.amount, bytes):  # explicit, or null (0) beside tokens
                entry["assetamount"] = amount_json(issuance.amount or 0)
            else:
                entry["assetamount"] = amount_json(known.value) if known else _UNKNOWN_AMOUNT
            token_blind = 0
            if not issuance.is_reissuance:
                tokens = issuance.inflation_keys
                if isinstance(tokens, bytes):  # blinded: -1 unless a key opens it (elements.cpp)
                    opened_tokens = wallet.open_issuance_amount(txin, tokens=True)
                    token_blind = opened_tokens[1] if opened_tokens else 0
                    entry["tokenamount"] = (amount_json(opened_tokens[0]) if opened_tokens
                                            else _UNKNOWN_AMOUNT)
                else:
                    entry["tokenamount"] = amount_json(tokens or 0)
            entry["isreissuance"] = issuance.is_reissuance
            entry["assetblinds"] = blinder_hex(known.vbf) if known else ZERO_BLINDER
            if not issuance.is_reissuance:
                entry["tokenblinds"] = blinder_hex(token_blind)
            result.append(entry)
    return result


# --- utilities without a wallet -------------------------------------------------------------


@rpc("util", description="Returns a map of asset labels to their asset ids.",
     locking=Locking.SELF,
     result='{\n'
            '  "label" : "hex",    (string) the asset id of each label ("bitcoin": the policy '
            'asset)\n'
            '  ...\n'
            '}',
     examples=[""])
def dumpassetlabels(call: Call) -> dict[str, str]:
    return {policy_label(call): policy_asset(call)[::-1].hex()}


@rpc("util", args=[required("address", Kind.STR, "The address to validate")],
     description="Return information about the given address.", locking=Locking.SELF,
     result='{\n'
            '  "isvalid" : true|false,          (boolean) If the address is valid or not\n'
            '  "isvalid_parent" : true|false,   (boolean) If the address is a valid '
            'parent-chain address\n'
            '  "address" : "str",               (string, optional) The address validated\n'
            '  "scriptPubKey" : "hex",          (string, optional) The hex-encoded output '
            'script generated by the address\n'
            '  "isscript" : true|false,         (boolean, optional) If the key is a script\n'
            '  "iswitness" : true|false,        (boolean, optional) If the address is a '
            'witness address\n'
            '  "witness_version" : n,           (numeric, optional) The version number of the '
            'witness program\n'
            '  "witness_program" : "hex",       (string, optional) The hex value of the '
            'witness program\n'
            '  "confidential_key" : "hex",      (string, optional) the blinding public key, "" '
            'for an unconfidential address\n'
            '  "unconfidential" : "str",        (string, optional) The address without its '
            'blinding key\n'
            '  "error" : "str",                 (string, optional) Error message, if any\n'
            '  "error_locations" : [ n, ... ]   (json array, optional) Indices of likely error '
            'locations in address, if known\n'
            '}')
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
     locking=Locking.SELF,
     result='"blinded_address"    (string) The blinded address')
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



# --- destroying and raw blinding ----------------------------------------------------------------


@rpc("wallet", args=[required("asset", Kind.STR, "Hex asset id or asset label to destroy."),
                     required("amount", Kind.AMOUNT, "The amount to destroy (8 decimals above "
                                                     "the minimal unit)."),
                     optional("comment", Kind.STR, None, "A comment used to store what the "
                              "transaction is for. This is not part of the transaction, just "
                              "kept in your wallet."),
                     optional("verbose", Kind.BOOL, False, "If true, return extra information "
                                                           "about the transaction.")],
     wallet=True, locking=Locking.SELF,
     description="Destroy an amount of a given asset: an explicit output to OP_RETURN (Elements' "
                 "NullData recipient), paid by the wallet.",
     result='"txid"    (string) the transaction id (verbose: {"txid", "fee_reason"})',
     examples=['"bitcoin" 100', '"bitcoin" 100 "destroy assets"'])
def destroyamount(call: Call, asset: str, amount: Any, comment: str | None,
                  verbose: bool) -> Any:
    asset_id = asset_from_label(call, asset)
    assert asset_id is not None
    value = amount_from_value(amount)
    if value <= 0:
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount to destroy")
    ensure_unlocked(call.wallet)
    fee = choose_fee_rate(call, None, None)
    built = build_and_send(call, [Payment(value, script_pubkey=OP_RETURN, asset=asset_id)],
                           fee_rate=fee.rate, comment=comment or "")
    if verbose:
        return {"txid": built.tx.txid_hex, "fee_reason": fee.reason}
    return built.tx.txid_hex


OP_RETURN = b"\x6a"
CANNOT_BLIND = ("Unable to blind transaction: Are you sure each asset type to blind is "
                "represented in the inputs?")
ADD_ANOTHER_OUTPUT = ("Unable to blind transaction: Add another output to blind in order to "
                      "complete the blinding.")


def _uint256_list(values: list[Any], count: int, what: str, plural: str) -> list[bytes]:
    """One 32-byte uint256 hex per input, in RPC (reversed) order -> internal bytes."""
    if len(values) != count:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter: one (potentially empty) "
                                                  f"input {what} for each input must be "
                                                  "provided")
    out = []
    for item in values:
        if not isinstance(item, str):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"input {plural} must be an array of hex strings")
        if len(item) != 64 or not _is_hex(item):
            raise RpcError(RpcCode.INVALID_PARAMETER, f"input {plural} must be an array of "
                                                      "32-byte hex-encoded strings")
        out.append(bytes.fromhex(item)[::-1])
    return out


@rpc("rawtransactions",
     args=[required("hexstring", Kind.HEX, "A hex-encoded raw transaction."),
           required("inputamountblinders", Kind.ARR, "An array with one entry per transaction "
                    "input: a hex-encoded blinding factor (listunspent's amountblinder)."),
           required("inputamounts", Kind.ARR, "An array with one entry per transaction input: "
                    "an amount for each input."),
           required("inputassets", Kind.ARR, "An array with one entry per transaction input: "
                    "a hex-encoded asset id."),
           required("inputassetblinders", Kind.ARR, "An array with one entry per transaction "
                    "input: a hex-encoded asset blinding factor."),
           optional("totalblinder", Kind.STR, None, "Ignored for now."),
           optional("ignoreblindfail", Kind.BOOL, True, "Return a transaction even when a "
                    "blinding attempt fails due to number of blinded inputs/outputs.")],
     description="Convert one or more outputs of a raw transaction into confidential ones, "
                 "given every input's amount, asset and blinding factors (no wallet needed). "
                 "The input raw transaction cannot have already-blinded outputs; the output "
                 "keys are the blinding public keys createrawtransaction put in the nonces. If "
                 "blinded inputs exist but no output has a blinding pubkey, the call fails "
                 "(there is no wallet key for a dummy output). Issuances are not blinded.",
     result='"transaction"    (string) hex string of the transaction',
     examples=['"rawtransactionhex" \'["<amountblinder>"]\' \'[1.0]\' \'["<asset>"]\' '
               '\'["<assetblinder>"]\''])
def rawblindrawtransaction(call: Call, hexstring: str, inputamountblinders: list[Any],
                           inputamounts: list[Any], inputassets: list[Any],
                           inputassetblinders: list[Any], totalblinder: str | None,
                           ignoreblindfail: bool) -> str:
    tx = decode_transaction_hex(hexstring)
    n = len(tx.inputs)
    vbfs = _uint256_list(inputamountblinders, n, "blind", "blinds")
    if len(inputamounts) != n:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter: one (potentially empty) "
                                                  "input amount for each input must be "
                                                  "provided")
    assets = _uint256_list(inputassets, n, "asset id", "asset IDs")
    abfs = _uint256_list(inputassetblinders, n, "asset blind", "asset blinds")
    openings = [Opening(asset, amount_from_value(value), int.from_bytes(abf, "big"),
                        int.from_bytes(vbf, "big"))
                for asset, value, abf, vbf in zip(assets, inputamounts, abfs, vbfs)]
    keyed = [j for j, out in enumerate(tx.outputs)
             if len(out.nonce) == 33 and isinstance(out.value, int)]
    blinded_inputs = sum(1 for o in openings if o.vbf)
    if not keyed and not blinded_inputs:
        return tx.hex()
    if blinded_inputs and not keyed:
        raise RpcError(RpcCode.INVALID_PARAMETER, ADD_ANOTHER_OUTPUT)
    if not blinded_inputs and len(keyed) == 1:
        if not ignoreblindfail:
            raise RpcError(RpcCode.INVALID_PARAMETER, ADD_ANOTHER_OUTPUT)
        outputs = tuple(replace(out, nonce=b"") if j in keyed else out
                        for j, out in enumerate(tx.outputs))
        return Transaction(version=tx.version, inputs=tx.inputs, outputs=outputs,
                           locktime=tx.locktime).hex()
    # BlindTransaction blinds nothing for a blinder that is not a scalar or an output asset no
    # input has: elementsd then reports that fewer outputs were blinded than asked
    input_assets = {o.asset for o in openings}
    if any(not 0 <= o.vbf < N or not 0 <= o.abf < N for o in openings) or any(
            tx.outputs[j].asset not in input_assets for j in keyed):
        raise RpcError(RpcCode.INVALID_PARAMETER, CANNOT_BLIND)
    # a one-off blinder with fresh randomness: the node has no wallet here
    blinder = Wallet.for_chain(secrets.token_bytes(32), call.node.params)
    try:
        blinded, _ = blinder.blind(tx, openings)
    except (WalletError, CtpluginError):
        raise RpcError(RpcCode.INVALID_PARAMETER, CANNOT_BLIND) from None
    return blinded.hex()
