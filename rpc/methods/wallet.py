"""Wallet calls (docs/node-rpc.md §1.5), elementsd's shapes: amounts are per-asset maps keyed by
label (the policy asset's is ``-defaultpeggedassetname``, "bitcoin" by default:
``WalletSettings.pegged_asset_label``) or asset hex; blinders print as uint256 hex (byte-reversed),
as elementsd prints them.

Heavy calls (sends, issuance) build and prove under the wallet's lock only, then submit under
the chain lock, so proving never holds up the chain or other wallets.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import coincurve

from ctplugin.elements import TxOut, parse_block
from ctplugin.elements.address import Destination, decode_destination, encode_destination
from ctplugin.elements.script import script_type, witness_program
from ctplugin.errors import EncodingError
from ctplugin.hashes import hash160, sha256d
from ctplugin.serialize import var_bytes
from regtest.wallet import Issuance, Payment, Reissuance, WalletError
from regtest.wallet.address import ConfidentialAddress
from regtest.wallet.crypter import CrypterError
from regtest.wallet.keys import (
    P2PKH,
    P2SH_P2WPKH,
    P2TR,
    P2WPKH,
    AddressKind,
    HDScheme,
    KeyPair,
    format_path,
    p2wpkh_script,
)
from regtest.wallet.ledger import Coin, TxState, WalletTx, watched_openings
from regtest.wallet.node_wallet import NodeWallet
from regtest.wallet.signing import SigningError, multisig_keys
from regtest.wallet.wallet import BuiltTransaction, Opening
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.methods.mempool import MAX_FEE_EXCEEDED, signals_replaceability, submit_transaction
from rpc.methods.walletkeys import account_descriptor
from rpc.params import amount_from_value, amount_json, fee_rate_from_value, parse_hash
from rpc.registry import JsonType, Kind, Locking, integer, json_type, optional, required, rpc
from rpc.scriptjson import inferred_descriptor, transaction_json, with_checksum
from validator import BlockInfo

ZERO_BLINDER = "00" * 32


# --- helpers ------------------------------------------------------------------------------------


def policy_asset(call: Call) -> bytes:
    return call.node.params.policy_asset


def policy_label(call: Call) -> str:
    """The policy (pegged) asset's label in elementsd's asset directory."""
    return call.context.wallet_settings.pegged_asset_label


def asset_label(call: Call, asset: bytes) -> str:
    return policy_label(call) if asset == policy_asset(call) else asset[::-1].hex()


def asset_from_label(call: Call, label: str | None, *, strict: bool = True) -> bytes | None:
    """The asset a label or 64-hex id names (None for an unknown label when not strict)."""
    if label is None or label == policy_label(call):
        return policy_asset(call)
    if len(label) == 64:
        try:
            return bytes.fromhex(label)[::-1]
        except ValueError:
            pass
    if not strict:
        return None
    raise RpcError(RpcCode.WALLET_ERROR, f"Unknown label and invalid asset hex: {label}")


def amount_map(call: Call, totals: dict[bytes, int]) -> dict[str, Decimal]:
    """AmountMapToUniv (Elements' src/rpc/util.cpp): the policy asset always present, then
    every other asset of the map, a zero one too (gettransaction's net of a reissuance shows
    the token that went out and came back as 0); the null asset of an output the wallet
    cannot open is left out."""
    policy = policy_asset(call)
    out = {policy_label(call): amount_json(totals.get(policy, 0))}
    for asset, amount in sorted(totals.items()):
        if asset != policy and asset != bytes(32):
            out[asset[::-1].hex()] = amount_json(amount)
    return out


def watch_only_included(wallet: NodeWallet, include_watchonly: bool | None) -> bool:
    """Core's ParseIncludeWatchonly (src/wallet/rpc/util.cpp): as asked, else true exactly
    for a wallet without private keys."""
    if include_watchonly is None:
        return not wallet.wallet.private_keys
    return include_watchonly


def blinder_hex(value: int) -> str:
    """A blinding factor as elementsd prints it: uint256 hex (reversed byte order)."""
    return value.to_bytes(32, "big")[::-1].hex()


def destination(call: Call, text: str) -> Destination:
    """The destination of an address of the node's chain (``ctplugin.elements.address``)."""
    try:
        return decode_destination(text, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, f"Invalid Bitcoin address: {text}") from None


def wallet_errors(exc: WalletError) -> RpcError:
    message = str(exc)
    if "insufficient funds" in message.lower() or "do not cover" in message:
        return RpcError(RpcCode.WALLET_INSUFFICIENT_FUNDS, "Insufficient funds")
    if "too small to pay the fee" in message:
        return RpcError(RpcCode.WALLET_INSUFFICIENT_FUNDS,
                        "The transaction amount is too small to pay the fee")
    return RpcError(RpcCode.WALLET_ERROR, message)


DEFAULT_TRANSACTION_MINFEE = 100
"""sat/kvB: Elements' ``-mintxfee`` default (src/wallet/wallet.h)."""
MAX_CONF_TARGET = 1008  # the fee estimator's longest horizon (policy/fees.h)
FEE_MODES = ("unset", "economical", "conservative")
NO_FALLBACK_FEE = ("Fee estimation failed. Fallbackfee is disabled. Wait a few blocks or "
                   "enable -fallbackfee.")


@dataclass(frozen=True, slots=True)
class FeeChoice:
    """The fee rate a wallet transaction pays (sat/kvB) and Core's ``FeeReason`` text for it
    (``fee_reason`` of a verbose send, common/messages.cpp)."""

    rate: int
    reason: str


def _sat_per_vb(rate: int) -> str:
    """``CFeeRate::ToString(SAT_VB)``."""
    return f"{rate // 1000}.{rate % 1000:03d} sat/vB"


def choose_fee_rate(call: Call, fee_rate: Any, conf_target: Any,
                    estimate_mode: str | None = None, *,
                    override_min_fee: bool = False) -> FeeChoice:
    """Core's ``SetFeeEstimateMode`` checks, then ``GetMinimumFeeRate``: an explicit
    ``fee_rate`` (sat/vB), else ``settxfee``'s rate, else fee estimation — which on a node
    without estimates is ``-fallbackfee`` (disabled at 0: -6 "Fee estimation failed...") —
    raised to the mempool's and the wallet's minimum (``-mintxfee``, ``-minrelaytxfee``).
    ``override_min_fee``: an explicit rate is taken as it is (fundrawtransaction's, Core's
    ``fOverrideFeeRate``)."""
    if fee_rate is not None:
        if conf_target is not None:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Cannot specify both conf_target and fee_rate. Please provide either "
                           "a confirmation target in blocks for automatic fee estimation, or an "
                           "explicit fee rate.")
        if estimate_mode is not None and estimate_mode != "unset":
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Cannot specify both estimate_mode and fee_rate")
    elif estimate_mode is not None and estimate_mode.lower() not in FEE_MODES:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       'Invalid estimate_mode parameter, must be one of: "unset", '
                       '"economical", "conservative"')
    if fee_rate is None and conf_target is not None:
        target = integer(conf_target)
        if not 1 <= target <= MAX_CONF_TARGET:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Invalid conf_target, must be between 1 and {MAX_CONF_TARGET}")
    relay_minimum = call.node.mempool.settings.minrelaytxfee
    required = max(DEFAULT_TRANSACTION_MINFEE, relay_minimum)
    if fee_rate is not None:
        rate = fee_rate_from_value(fee_rate)
        if override_min_fee:
            return FeeChoice(rate, "PayTxFee set")
        if rate < required:
            raise RpcError(RpcCode.WALLET_INSUFFICIENT_FUNDS,
                           f"Fee rate ({_sat_per_vb(rate)}) is lower than the minimum fee rate "
                           f"setting ({_sat_per_vb(required)})")
        return FeeChoice(rate, "PayTxFee set")
    if conf_target is None and call.context.wallet_fee_rate:
        choice = FeeChoice(call.context.wallet_fee_rate, "PayTxFee set")
    else:  # no fee estimates on a regtest node: the fallback fee
        if not call.context.fallback_fee_rate:
            raise RpcError(RpcCode.WALLET_INSUFFICIENT_FUNDS, NO_FALLBACK_FEE)
        choice = FeeChoice(call.context.fallback_fee_rate, "Fallback fee")
        if choice.rate < relay_minimum:
            choice = FeeChoice(relay_minimum, "Mempool Min Fee")
    if choice.rate < required:
        choice = FeeChoice(required, "Minimum Required Fee")
    return choice


def address_text(call: Call, dest: Destination) -> str:
    """An address in the node's chain's encodings."""
    return encode_destination(dest.script_pubkey, call.node.params.addresses,
                              dest.blinding_pubkey)


def address_of_output(call: Call, wallet: NodeWallet, out: TxOut) -> str | None:
    """The address an output pays as elementsd's history and coin lists print it
    (``ExtractDestination`` of the scriptPubKey, src/wallet/receive.cpp
    ``CachedTxGetAmounts``, coins.cpp ``listunspent``): the unconfidential form, whether the
    output is ours or not and blinded or not; None for a script without an address."""
    try:
        return address_text(call, Destination(out.script_pubkey))
    except EncodingError:
        return None


def send_built(call: Call, wallet: NodeWallet, built: BuiltTransaction) -> None:
    """Submit a wallet transaction to the mempool; the wallet forgets it if refused."""
    with call.context.chain_lock:
        try:
            submit_transaction(call, built.tx)
        except RpcError as error:
            with wallet.lock:
                wallet.forget(built.tx.txid)
            raise RpcError(RpcCode.WALLET_ERROR, f"Transaction rejected: {error.message}") from None


def build_and_send(call: Call, payments: list[Payment], *, fee_rate: int,
                   subtract: Iterable[int] = (), comment: str = "", comment_to: str = "",
                   issuance: Issuance | None = None,
                   reissuance: Reissuance | None = None) -> BuiltTransaction:
    wallet = call.wallet
    ensure_unlocked(wallet)
    with wallet.lock:
        height = call.node.tip.height + 1
        try:
            # the node verifies the range proofs as soon as they are made, while the wallet
            # goes on (signing, writing)
            built = wallet.wallet.build(payments, fee_rate=fee_rate, height=height,
                                        issuance=issuance, reissuance=reissuance,
                                        subtract_fee_from=tuple(subtract),
                                        proven=call.node.verify_ahead)
        except WalletError as exc:
            wallet.sync_coins()
            raise wallet_errors(exc) from None
        if built.fee > call.context.max_tx_fee:  # Core's wallet: -maxtxfee, before anything is kept
            wallet.sync_coins()
            raise RpcError(RpcCode.WALLET_INSUFFICIENT_FUNDS, MAX_FEE_EXCEEDED)
        wallet.add_own(built, comment, comment_to)
    send_built(call, wallet, built)
    return built


# --- wallet management --------------------------------------------------------------------------


@rpc("wallet", args=[required("wallet_name", Kind.STR, "The name for the new wallet."),
                     optional("disable_private_keys", Kind.BOOL, False,
                              "A watch-only wallet: it can never hold private keys (imports "
                              "of addresses, scripts and public keys only)."),
                     optional("blank", Kind.BOOL, False,
                              "A wallet with no keys and no HD seed; keys come later from "
                              "imports or sethdseed."),
                     optional("passphrase", Kind.STR, None,
                              "Encrypt the wallet with this passphrase. Not at creation here: "
                              "a non-empty passphrase is refused (-4); create the wallet, then "
                              "call encryptwallet."),
                     optional("avoid_reuse", Kind.BOOL, False,
                              "Track reused addresses and spend their coins apart (Core's "
                              "avoid_reuse flag). Accepted for elementsd's argument list; "
                              "wallets here do not track reuse (getwalletinfo: avoid_reuse "
                              "false)."),
                     optional("descriptors", Kind.BOOL, True,
                              "A descriptor wallet (addresses from BIP44/49/84/86 account "
                              "descriptors); false makes a legacy wallet, a type elementsd "
                              "deprecates (on elementsregtest the result says so in warnings)."),
                     optional("load_on_startup", Kind.BOOL, None,
                              "Save wallet name to persistent settings and load on startup. "
                              "True to add wallet to startup list, false to remove, null to "
                              "leave unchanged."),
                     optional("external_signer", Kind.BOOL, False,
                              "Use an external signer such as a hardware wallet. Not supported "
                              "here: true is refused (-4).")],
     description="Creates and loads a new wallet (a fresh random seed; confidential "
                 "addresses, deterministic keys and blinding keys from it). On elementsregtest "
                 "a descriptor wallet (BIP44/49/84/86 accounts) or, with descriptors=false, a "
                 "legacy one (Core's HD chain m/0'/0'/i'), with a random master blinding key; "
                 "blank: no keys until imported or sethdseed; disable_private_keys: "
                 "watch-only.",
     result='{\n  "name" : "str",    (string) The wallet name if created successfully.\n'
            '  "warnings" : [ "str", ... ]    (json array, optional) Warning messages\n}',
     examples=('"testwallet"', '"testwallet" false false "" false true'))
def createwallet(call: Call, wallet_name: str, disable_private_keys: bool, blank: bool,
                 passphrase: str | None, avoid_reuse: bool, descriptors: bool,
                 load_on_startup: bool | None, external_signer: bool) -> dict[str, Any]:
    if passphrase or external_signer:
        raise RpcError(RpcCode.WALLET_ERROR, "Only wallets without a passphrase and without an "
                                             "external signer are supported here")
    call.context.wallets.create(wallet_name, load_on_startup=load_on_startup,
                                descriptors=descriptors, blank=blank,
                                private_keys=not disable_private_keys)
    if not descriptors and call.context.wallet_settings.elements_keys:
        return {"name": wallet_name, "warnings": [
            "Wallet created successfully. The legacy wallet type is being deprecated and "
            "support for creating and opening legacy wallets will be removed in the future."]}
    return {"name": wallet_name}


@rpc("wallet", args=[required("filename", Kind.STR, "The wallet directory or .dat file."),
                     optional("load_on_startup", Kind.BOOL, None,
                              "Save wallet name to persistent settings and load on startup. "
                              "True to add wallet to startup list, false to remove, null to "
                              "leave unchanged.")],
     description="Loads a wallet from a wallet file or directory.",
     result='{\n  "name" : "str"    (string) The wallet name if loaded successfully.\n}',
     examples=('"testwallet"',))
def loadwallet(call: Call, filename: str, load_on_startup: bool | None) -> dict[str, Any]:
    call.context.wallets.load(filename, load_on_startup=load_on_startup)
    return {"name": filename}


@rpc("wallet", args=[optional("wallet_name", Kind.STR, None, "The name of the wallet to unload.",
                              "the wallet name from the RPC endpoint"),
                     optional("load_on_startup", Kind.BOOL, None,
                              "Save wallet name to persistent settings and load on startup. "
                              "True to add wallet to startup list, false to remove, null to "
                              "leave unchanged.")],
     description="Unloads the wallet referenced by the request endpoint, otherwise unloads the "
                 "wallet specified in the argument.",
     result="{}    (json object) empty: the wallet was unloaded",
     examples=('"testwallet"',))
def unloadwallet(call: Call, wallet_name: str | None, load_on_startup: bool | None
                 ) -> dict[str, Any]:
    if wallet_name is None:
        wallet_name = call.wallet.name
    elif call.uri_wallet is not None and call.uri_wallet != wallet_name:
        raise RpcError(RpcCode.INVALID_PARAMETER, "RPC endpoint wallet and wallet_name "
                                                  "parameter specify different wallets")
    call.context.wallets.unload(wallet_name, load_on_startup=load_on_startup)
    return {}


@rpc("wallet", description="Returns a list of currently loaded wallets.",
     result='[\n  "walletname",    (string) the wallet name\n  ...\n]',
     examples=("",))
def listwallets(call: Call) -> list[str]:
    return call.context.wallets.names()


@rpc("wallet", description="Returns a list of wallets in the wallet directory.",
     result=("{\n"
             "  \"wallets\" : [           (json array)\n"
             "    {\n"
             "      \"name\" : \"str\"     (string) The wallet name\n"
             "    },\n"
             "    ...\n"
             "  ]\n"
             "}"),
     examples=("",))
def listwalletdir(call: Call) -> dict[str, Any]:
    return {"wallets": [{"name": name} for name in call.context.wallets.on_disk()]}


@rpc("wallet", wallet=True, description="Returns an object containing various wallet state "
                                        "info.",
     result=("{\n"
             "  \"walletname\" : \"str\",          (string) the wallet name\n"
             "  \"walletversion\" : n,           (numeric) the wallet version (169900)\n"
             "  \"format\" : \"str\",              (string) the database format (leveldb)\n"
             "  \"balance\" : {...},             (json object) DEPRECATED. Identical to "
             "getbalances().mine.trusted: the amount per asset\n"
             "  \"unconfirmed_balance\" : {...}, (json object) DEPRECATED. Identical to "
             "getbalances().mine.untrusted_pending\n"
             "  \"immature_balance\" : {...},    (json object) DEPRECATED. Identical to "
             "getbalances().mine.immature\n"
             "  \"txcount\" : n,                 (numeric) the total number of transactions "
             "in the wallet\n"
             "  \"keypoolsize\" : n,             (numeric) how many receiving keys are "
             "derived and not handed out yet\n"
             "  \"keypoolsize_hd_internal\" : n, (numeric) the same for change keys (the "
             "receiving pool when the wallet has no change chain)\n"
             "  \"unlocked_until\" : xxx,        (numeric, optional) the UNIX epoch time "
             "until which the wallet is unlocked, or 0 if locked (encrypted wallets only)\n"
             "  \"paytxfee\" : n,                (numeric) the settxfee rate in BTC/kvB "
             "(0: not set)\n"
             "  \"hdseedid\" : \"hex\",            (string, optional) the Hash160 of the HD "
             "seed (legacy HD wallets only)\n"
             "  \"private_keys_enabled\" : true|false, (boolean) false for a watch-only "
             "wallet (disable_private_keys)\n"
             "  \"avoid_reuse\" : false,         (boolean) whether the wallet tracks address "
             "reuse (never here)\n"
             "  \"scanning\" : false,            (boolean) false: this node does not report "
             "scan progress\n"
             "  \"descriptors\" : true|false,    (boolean) whether this is a descriptor "
             "wallet\n"
             "  \"external_signer\" : false,     (boolean) whether an external signer is "
             "used (never here)\n"
             "  \"blank\" : true|false,          (boolean) whether the wallet was created "
             "without keys, scripts or descriptors\n"
             "  \"birthtime\" : n,               (numeric) the start time for block "
             "scanning (always 0 here)\n"
             "  \"lastprocessedblock\" : {       (json object) hash and height of the block "
             "this information was generated on\n"
             "    \"hash\" : \"hex\",\n"
             "    \"height\" : n\n"
             "  }\n"
             "}"),
     examples=("",))
def getwalletinfo(call: Call) -> dict[str, Any]:
    wallet = call.wallet
    balances = wallet.ledger.balances(wallet.tip_height)
    best = wallet.best
    keys = wallet.wallet.keys
    pool = len(keys) - wallet.wallet.next_key  # derived keys not handed out yet
    internal_pool = (keys.derived(internal=True) - wallet.wallet.next_change
                     if keys.has_internal_chain else pool)
    hd: dict[str, Any] = {}
    if keys.scheme is HDScheme.LEGACY and keys.seed_id is not None \
            and wallet.wallet.derives_keys:
        hd["hdseedid"] = keys.seed_id[::-1].hex()  # a uint160, printed reversed
    return {
        "walletname": wallet.name,
        "walletversion": 169900,
        "format": "leveldb",
        "balance": amount_map(call, balances.trusted),
        "unconfirmed_balance": amount_map(call, balances.untrusted_pending),
        "immature_balance": amount_map(call, balances.immature),
        "txcount": len(wallet.ledger),
        "keypoolsize": pool,
        "keypoolsize_hd_internal": internal_pool,
        **({"unlocked_until": wallet.unlocked_until} if wallet.encryption is not None else {}),
        "paytxfee": amount_json(call.context.wallet_fee_rate),
        **hd,
        "private_keys_enabled": wallet.wallet.private_keys,
        "avoid_reuse": False,
        "scanning": False,
        "descriptors": keys.scheme is not HDScheme.LEGACY,
        "external_signer": False,
        "blank": wallet.wallet.blank,
        "birthtime": 0,
        "lastprocessedblock": ({"hash": best[0][::-1].hex(), "height": best[1]}
                               if best is not None else None),
    }


@rpc("wallet", args=[required("amount", Kind.AMOUNT, "The transaction fee rate in BTC/kvB")],
     description="Set the transaction fee rate in BTC/kvB for this node's wallets (0 returns "
                 "to fee estimation, which here is -fallbackfee). Overrides the conf_target and "
                 "estimate_mode parameters.",
     result="true|false    (boolean) Returns true if successful",
     examples=["0.00001"])
def settxfee(call: Call, amount: Any) -> bool:
    rate = amount_from_value(amount)
    relay = call.node.mempool.settings.minrelaytxfee
    if rate and rate < relay:  # CFeeRate::ToString: "0.00001000 BTC/kvB"
        raise RpcError(RpcCode.INVALID_PARAMETER, "txfee cannot be less than min relay tx fee "
                                                  f"({amount_json(relay):.8f} BTC/kvB)")
    if rate and rate < DEFAULT_TRANSACTION_MINFEE:
        raise RpcError(RpcCode.INVALID_PARAMETER, "txfee cannot be less than wallet min fee "
                       f"({amount_json(DEFAULT_TRANSACTION_MINFEE):.8f} BTC/kvB)")
    call.context.wallet_fee_rate = rate
    return True


# --- addresses ----------------------------------------------------------------------------------


_ADDRESS_TYPES: dict[str, tuple[bool, AddressKind]] = {  # Elements' names: (confidential, kind)
    "blech32m": (True, P2TR), "bech32m": (False, P2TR),
    "blech32": (True, P2WPKH), "bech32": (False, P2WPKH),
}
_BASE58_TYPES: dict[str, AddressKind] = {"legacy": P2PKH, "p2sh-segwit": P2SH_P2WPKH}
"""Base58 types: blinded as -blindedaddresses says (docs/elements-regtest.md §5.4)."""


def _address_type(call: Call, address_type: str | None,
                  change: bool = False) -> tuple[bool, AddressKind]:
    """(confidential, kind) of an address type (docs/elements-regtest.md §6): without one, the
    node's default kind (``WalletSettings.address_kind``: P2WPKH on elementsregtest as
    elementsd's bech32, a taproot key path on our chains so blocks exercise the batch), blinded
    as ``-blindedaddresses`` says; the bech32 types are never blinded, the blech32 ones always.
    ``change``: getrawchangeaddress, which also blinds "bech32" types when the setting is on."""
    settings = call.context.wallet_settings
    if address_type is None:
        return settings.blinded_addresses, settings.address_kind
    known = _ADDRESS_TYPES.get(address_type)
    if known is not None:
        confidential, kind = known
        return confidential or (change and settings.blinded_addresses), kind
    base58 = _BASE58_TYPES.get(address_type)
    if base58 is not None:
        return settings.blinded_addresses, base58
    raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, f"Unknown address type '{address_type}'")


def address_kind_json(script: bytes) -> dict[str, Any]:
    """Core's ``DescribeAddress`` (validateaddress, getaddressinfo): ``isscript`` for P2SH,
    P2WSH and taproot, ``iswitness`` and the witness fields for segwit; a future witness
    version gets no ``isscript``."""
    program = witness_program(script)
    if program is None:
        return {"isscript": len(script) == 23 and script[0] == 0xA9, "iswitness": False}
    version, data = program
    out: dict[str, Any] = {}
    if (version, len(data)) in ((0, 20), (0, 32), (1, 32)):
        out["isscript"] = len(data) == 32
    out.update({"iswitness": True, "witness_version": version, "witness_program": data.hex()})
    return out


def key_descriptor(pair: KeyPair, fingerprint: bytes | None = None) -> str:
    """The wallet's descriptor of one of its scripts (InferDescriptor with the key's origin
    ``[fingerprint/path]`` when it is an HD key): pkh, sh(wpkh), wpkh or tr (internal
    x-only key)."""
    key = pair.pubkey[1:].hex() if pair.kind == P2TR else pair.pubkey.hex()
    if fingerprint is not None and pair.path is not None:
        key = f"[{fingerprint.hex()}{format_path(pair.path, apostrophe=False)[1:]}]{key}"
    body = {P2TR: "tr({})", P2WPKH: "wpkh({})", P2PKH: "pkh({})",
            P2SH_P2WPKH: "sh(wpkh({}))"}[pair.kind].format(key)
    return with_checksum(body)


@rpc("wallet", args=[optional("label", Kind.STR, "", "The label name for the address to be "
                                                     "linked to."),
                     optional("address_type", Kind.STR, None, "The address type to use. "
                              "Options are \"legacy\", \"p2sh-segwit\", \"blech32m\", "
                              "\"bech32m\", \"blech32\" and \"bech32\".", "-addresstype")],
     wallet=True, description="Returns a new address for receiving payments: without "
                              "address_type a P2WPKH address on elementsregtest (elementsd's "
                              "bech32) and a taproot one on our chains, confidential as "
                              "-blindedaddresses says (default 1); \"bech32m\" and "
                              "\"bech32\" are never confidential, \"blech32m\" and "
                              "\"blech32\" always, \"legacy\" (P2PKH) and "
                              "\"p2sh-segwit\" as -blindedaddresses says. Warning: on our "
                              "ctregtest chains the default wallet \"\" "
                              "of every node is the same public-seed wallet (the regtest "
                              "seed that owns the genesis coins): every fresh node hands out "
                              "the same addresses and any node can spend what they receive; "
                              "createwallet makes a wallet with a fresh random seed.",
     result='"address"    (string) The new address')
def getnewaddress(call: Call, label: str, address_type: str | None) -> str:
    if label == "*":
        raise RpcError(RpcCode.WALLET_INVALID_LABEL_NAME, "Invalid label name")
    confidential, kind = _address_type(call, address_type)
    try:
        dest = call.wallet.new_destination(label, confidential=confidential, kind=kind)
    except WalletError as exc:  # a blank or watch-only wallet
        raise RpcError(RpcCode.WALLET_ERROR, str(exc)) from None
    return address_text(call, dest)


@rpc("wallet", args=[optional("address_type", Kind.STR, None,
                              "The address type to use, as getnewaddress's (\"legacy\", "
                              "\"p2sh-segwit\", \"blech32m\", \"bech32m\", \"blech32\", "
                              "\"bech32\"); without it the wallet's default kind. Change is "
                              "confidential when -blindedaddresses is on, the bech32 types "
                              "included.", "the wallet's default address kind")],
     wallet=True, description="Returns a new address, for receiving change. This is for use "
                              "with raw transactions, not normal use.",
     result='"address"    (string) The address',
     examples=("", '"blech32"'))
def getrawchangeaddress(call: Call, address_type: str | None) -> str:
    confidential, kind = _address_type(call, address_type, change=True)
    try:
        dest = call.wallet.new_destination(change=True, confidential=confidential, kind=kind)
    except WalletError as exc:  # a blank or watch-only wallet
        raise RpcError(RpcCode.WALLET_ERROR, str(exc)) from None
    return address_text(call, dest)


@rpc("wallet", args=[required("address", Kind.STR, "The address for which to get information.")],
     wallet=True, description="Return information about the given address. Some of the "
                              "information is only present if the address is in the wallet.",
     result=("{\n"
             "  \"address\" : \"str\",             (string) The address validated\n"
             "  \"scriptPubKey\" : \"hex\",        (string) The output script the address "
             "pays\n"
             "  \"ismine\" : true|false,         (boolean) If the address is the wallet's: its "
             "key or all its multisig keys (and, if confidential, its blinding key)\n"
             "  \"solvable\" : true|false,       (boolean) If the wallet knows how to spend "
             "coins sent to it, private keys aside\n"
             "  \"desc\" : \"str\",                (string, optional) A descriptor for "
             "spending coins sent to it (only when solvable)\n"
             "  \"parent_desc\" : \"str\",         (string, optional) The account descriptor "
             "the address was derived from (descriptor wallets)\n"
             "  \"iswatchonly\" : true|false,    (boolean) If the address is watch-only\n"
             "  \"isscript\" : true|false,       (boolean, optional) If the output script is "
             "a script hash (P2SH, P2WSH) or taproot\n"
             "  \"iswitness\" : true|false,      (boolean) If the address is a witness "
             "address\n"
             "  \"witness_version\" : n,         (numeric, optional) The witness program's "
             "version\n"
             "  \"witness_program\" : \"hex\",     (string, optional) The witness program\n"
             "  \"script\" : \"str\",              (string, optional) The type of the known "
             "redeem script (or witness_v0_keyhash for a wallet P2SH-P2WPKH)\n"
             "  \"hex\" : \"hex\",                 (string, optional) The known redeem "
             "script\n"
             "  \"pubkeys\" : [ \"hex\", ... ],    (json array, optional) The keys of a "
             "known multisig redeem script\n"
             "  \"sigsrequired\" : n,            (numeric, optional) The signatures that "
             "multisig script requires\n"
             "  \"pubkey\" : \"hex\",              (string, optional) The public key of a "
             "wallet P2PKH, P2SH-P2WPKH or P2WPKH address\n"
             "  \"iscompressed\" : true,         (boolean, optional) If that key is "
             "compressed (always, in this wallet)\n"
             "  \"confidential\" : \"str\",        (string) The address with the wallet's "
             "blinding key for a wallet unconfidential address, else the address given\n"
             "  \"confidential_key\" : \"hex\",    (string) The address's blinding public "
             "key, \"\" if none\n"
             "  \"unconfidential\" : \"str\",      (string) The address without its "
             "blinding key\n"
             "  \"ischange\" : true|false,       (boolean) If the address was handed out "
             "for change\n"
             "  \"timestamp\" : xxx,             (numeric, optional) The key's creation "
             "time (0 here: not recorded)\n"
             "  \"hdkeypath\" : \"str\",           (string, optional) The HD key path of "
             "the key\n"
             "  \"hdseedid\" : \"hex\",            (string, optional) The Hash160 of the HD "
             "seed (zeros in a descriptor wallet)\n"
             "  \"hdmasterfingerprint\" : \"hex\", (string, optional) The fingerprint of the "
             "master key\n"
             "  \"labels\" : [ \"str\", ... ]      (json array) The address's label (at most "
             "one)\n"
             "}"),
     examples=('"el1qq…"',))
def getaddressinfo(call: Call, address: str) -> dict[str, Any]:
    try:
        dest = decode_destination(address, call.node.params.addresses)
    except EncodingError as exc:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, f"Invalid address: {exc}") from None
    wallet = call.wallet
    keys = wallet.wallet.keys
    script = dest.script_pubkey
    pair = keys.owner_of(script)
    watched = script in wallet.watch_only
    redeem = wallet.redeem_scripts.get(script)
    # Elements: an address whose blinding key is not the wallet's is not spendable by it
    blinding_ok = (dest.blinding_pubkey is None
                   or dest.blinding_pubkey == wallet.blinding_pubkey(script))
    multisig = keys.multisig_of(script)  # every key ours: spendable, as in a legacy wallet
    ismine = (pair is not None or multisig is not None) and blinding_ok
    iswatchonly = watched and blinding_ok
    solvable = pair is not None or redeem is not None
    out: dict[str, Any] = {"address": address, "scriptPubKey": script.hex(), "ismine": ismine,
                           "solvable": solvable}
    if pair is not None:
        out["desc"] = key_descriptor(pair, keys.master_fingerprint)
    elif solvable:
        out["desc"] = inferred_descriptor(script, call.node.params.addresses)
    if pair is not None and pair.path is not None and keys.scheme is HDScheme.DESCRIPTORS:
        out["parent_desc"] = account_descriptor(keys, pair.kind, call.node.params.addresses,
                                                internal=pair.internal)
    out["iswatchonly"] = iswatchonly
    out.update(address_kind_json(script))
    if redeem is not None:
        inner = redeem[1] if redeem[1] is not None else redeem[0]
        if inner is not None:
            out["script"] = script_type(inner)
            out["hex"] = inner.hex()
            try:
                required_sigs, pubkeys = multisig_keys(inner)
            except SigningError:  # not a multisig script: no keys to list
                pass
            else:
                out["pubkeys"] = [k.hex() for k in pubkeys]
                out["sigsrequired"] = required_sigs
    if pair is not None and pair.kind in (P2WPKH, P2PKH):
        out["pubkey"] = pair.pubkey.hex()
        out["iscompressed"] = True
    if pair is not None and pair.kind == P2SH_P2WPKH:
        out["script"] = "witness_v0_keyhash"
        out["hex"] = p2wpkh_script(pair.pubkey).hex()
        out["pubkey"] = pair.pubkey.hex()
    mine_at_all = pair is not None or multisig is not None or watched
    if dest.blinding_pubkey is None and mine_at_all:
        out["confidential"] = address_text(call, Destination(script,
                                                             wallet.blinding_pubkey(script)))
    else:
        out["confidential"] = address
    out["confidential_key"] = dest.blinding_pubkey.hex() if dest.blinding_pubkey else ""
    out["unconfidential"] = address_text(call, dest.unconfidential())
    out["ischange"] = wallet.is_change(script)
    if pair is not None:
        out["timestamp"] = 0
        if pair.path is not None:
            legacy = keys.scheme is HDScheme.LEGACY
            out["hdkeypath"] = format_path(pair.path, apostrophe=legacy)
            seed_id = keys.seed_id if legacy else None
            out["hdseedid"] = seed_id[::-1].hex() if seed_id is not None else "00" * 20
            fingerprint = keys.master_fingerprint
            assert fingerprint is not None  # an HD key has a master
            out["hdmasterfingerprint"] = fingerprint.hex()
    label = wallet.labels.get(script)
    out["labels"] = [label] if label is not None else ([] if pair is None or out["ischange"]
                                                       else [""])
    return out


# --- balances and coins -------------------------------------------------------------------------


@rpc("wallet", args=[optional("dummy", Kind.STR, None, "Remains for backward compatibility. "
                                                        "Must be excluded or set to \"*\"."),
                     optional("minconf", Kind.INT, 0, "Only include transactions confirmed at "
                                                      "least this many times."),
                     optional("include_watchonly", Kind.BOOL, True,
                              "Also include balance in watch-only addresses (see "
                              "'importaddress'). Accepted for elementsd's argument list: the "
                              "balance here is the same either way."),
                     optional("avoid_reuse", Kind.BOOL, True,
                              "(only with the avoid_reuse wallet flag) Leave out outputs of "
                              "addresses already used. Wallets here never have that flag, so "
                              "it changes nothing."),
                     optional("assetlabel", Kind.STR, None, "Hex asset id or asset label for "
                                                            "balance.")],
     wallet=True, description="Returns the total available balance per asset, or of one asset "
                              "when assetlabel is given (0 for an unknown label).",
     result=("{\n"
             "  \"bitcoin\" : n,    (numeric) The total amount of the asset received "
             "for this wallet\n"
             "  ...\n"
             "}\n"
             "or n    (numeric) with assetlabel: that asset's amount"),
     examples=["", "\"*\" 6", "\"*\" 0 true true \"bitcoin\""])
def getbalance(call: Call, dummy: str | None, minconf: int, include_watchonly: bool,
               avoid_reuse: bool, assetlabel: str | None) -> Any:
    if dummy is not None and dummy != "*":
        raise RpcError(RpcCode.METHOD_DEPRECATED,
                       'dummy first argument must be excluded or set to "*".')
    wallet = call.wallet
    totals = wallet.ledger.balances(wallet.tip_height, min_depth=minconf).trusted
    if assetlabel is not None:
        asset = asset_from_label(call, assetlabel, strict=False)
        return amount_json(totals.get(asset, 0) if asset is not None else 0)
    return amount_map(call, totals)


@rpc("wallet", wallet=True, description="Returns an object with all balances in BTC.",
     result=("{\n"
             "  \"mine\" : {                  (json object) balances from outputs "
             "that the wallet can sign\n"
             "    \"trusted\" : {...},        (json object) trusted balance per asset "
             "(outputs created by the wallet or confirmed outputs)\n"
             "    \"untrusted_pending\" : {...},  (json object) untrusted pending "
             "balance per asset (outputs created by others that are in the mempool)\n"
             "    \"immature\" : {...}        (json object) balance per asset from "
             "immature coinbase outputs\n"
             "  },\n"
             "  \"lastprocessedblock\" : {    (json object) hash and height of the "
             "block this information was generated on\n"
             "    \"hash\" : \"hex\",\n"
             "    \"height\" : n\n"
             "  }\n"
             "}"),
     examples=[""])
def getbalances(call: Call) -> dict[str, Any]:
    wallet = call.wallet
    balances = wallet.ledger.balances(wallet.tip_height)
    best = wallet.best
    return {"mine": {"trusted": amount_map(call, balances.trusted),
                     "untrusted_pending": amount_map(call, balances.untrusted_pending),
                     "immature": amount_map(call, balances.immature)},
            "lastprocessedblock": ({"hash": best[0][::-1].hex(), "height": best[1]}
                                   if best is not None else None)}


@rpc("wallet", wallet=True, description="Returns the server's total unconfirmed balance",
     result="{\n  \"bitcoin\" : n,    (numeric) the unconfirmed balance of the asset\n  ...\n}",
     examples=[""])
def getunconfirmedbalance(call: Call) -> dict[str, Any]:
    wallet = call.wallet
    return amount_map(call, wallet.ledger.balances(wallet.tip_height).untrusted_pending)


def coin_json(call: Call, wallet: NodeWallet, coin: Coin) -> dict[str, Any]:
    wtx = coin.wtx
    out = wtx.tx.outputs[coin.n]
    o = coin.opening
    entry: dict[str, Any] = {"txid": wtx.tx.txid_hex, "vout": coin.n}
    address = address_of_output(call, wallet, out)
    if address is not None:
        entry["address"] = address
        label = wallet.labels.get(out.script_pubkey)
        if label is not None:
            entry["label"] = label
    entry["scriptPubKey"] = out.script_pubkey.hex()
    entry["amount"] = amount_json(o.value)
    if not isinstance(out.value, int):
        entry["amountcommitment"] = out.value.hex()
    entry["asset"] = o.asset[::-1].hex()
    if not out.asset_is_explicit:
        entry["assetcommitment"] = out.asset.hex()
    entry["amountblinder"] = blinder_hex(o.vbf)
    entry["assetblinder"] = blinder_hex(o.abf)
    depth = wtx.depth(wallet.tip_height)
    entry["confirmations"] = depth
    pair = wallet.wallet.keys.owner_of(out.script_pubkey)
    ours = coin.n in wtx.mine  # else watched without keys (importaddress): listed, not spendable
    entry["spendable"] = ours
    entry["solvable"] = ours
    if pair is not None:
        entry["desc"] = key_descriptor(pair)
    entry["parent_descs"] = []
    entry["safe"] = depth > 0 or wallet.ledger.is_trusted(wtx, wallet.tip_height)
    return entry


@rpc("wallet", args=[optional("minconf", Kind.INT, 1, "The minimum confirmations to filter"),
                     optional("maxconf", Kind.INT, 9999999, "The maximum confirmations to "
                                                             "filter"),
                     optional("addresses", Kind.ARR, None, "The addresses to filter"),
                     optional("include_unsafe", Kind.BOOL, True, "Include outputs that are not "
                              "safe to spend"),
                     optional("query_options", Kind.OBJ, None, "minimumAmount, maximumAmount, "
                              "maximumCount, minimumSumAmount, asset, "
                              "include_immature_coinbase")],
     wallet=True, description="Returns array of unspent transaction outputs with between "
                              "minconf and maxconf (inclusive) confirmations, with their "
                              "amounts, assets and blinding factors.",
     result=("[\n"
             "  {\n"
             "    \"txid\" : \"hex\",             (string) the transaction id\n"
             "    \"vout\" : n,                 (numeric) the vout value\n"
             "    \"address\" : \"str\",          (string, optional) the "
             "(unconfidential) address\n"
             "    \"label\" : \"str\",            (string, optional) The associated "
             "label, or \"\" for the default label\n"
             "    \"scriptPubKey\" : \"str\",     (string) the script key\n"
             "    \"amount\" : n,               (numeric) the transaction output "
             "amount in BTC\n"
             "    \"amountcommitment\" : \"hex\", (string, optional) the value commitment\n"
             "    \"asset\" : \"hex\",            (string) the asset id\n"
             "    \"assetcommitment\" : \"hex\",  (string, optional) the asset commitment\n"
             "    \"amountblinder\" : \"hex\",    (string) the amount blinding factor\n"
             "    \"assetblinder\" : \"hex\",     (string) the asset blinding factor\n"
             "    \"confirmations\" : n,        (numeric) The number of confirmations\n"
             "    \"spendable\" : true|false,   (boolean) Whether we have the private "
             "keys to spend this output\n"
             "    \"solvable\" : true|false,    (boolean) Whether we know how to "
             "spend this output\n"
             "    \"desc\" : \"str\",             (string, optional) A descriptor for "
             "spending this output\n"
             "    \"parent_descs\" : [ \"str\", ... ],\n"
             "    \"safe\" : true|false         (boolean) Whether this output is "
             "considered safe to spend\n"
             "  },\n"
             "  ...\n"
             "]"),
     examples=["", "6 9999999", "1 9999999 [] true '{\"asset\": \"bitcoin\"}'"])
def listunspent(call: Call, minconf: int, maxconf: int, addresses: list[Any] | None,
                include_unsafe: bool, query_options: dict[str, Any] | None) -> list[Any]:
    wallet = call.wallet
    scripts: set[bytes] | None = None
    if addresses:  # an empty list filters nothing, as bitcoind
        scripts = set()
        for item in addresses:
            if not isinstance(item, str):
                raise RpcError(RpcCode.TYPE_ERROR, "JSON value is not a string as expected")
            script = destination(call, item).script_pubkey
            if script in scripts:
                raise RpcError(RpcCode.INVALID_PARAMETER,
                               f"Invalid parameter, duplicated address: {item}")
            scripts.add(script)
    options = dict(query_options or {})
    known = {"minimumAmount", "maximumAmount", "maximumCount", "minimumSumAmount", "asset",
             "include_immature_coinbase"}
    unknown = set(options) - known
    if unknown:
        raise RpcError(RpcCode.TYPE_ERROR, f"Unexpected key {sorted(unknown)[0]}")
    minimum = amount_from_value(options["minimumAmount"]) if "minimumAmount" in options else 0
    maximum = (amount_from_value(options["maximumAmount"]) if "maximumAmount" in options
               else None)
    max_count = options.get("maximumCount")
    min_sum = (amount_from_value(options["minimumSumAmount"]) if "minimumSumAmount" in options
               else None)
    asset = (asset_from_label(call, options["asset"]) if options.get("asset") is not None
             else None)
    immature = bool(options.get("include_immature_coinbase", False))
    coins = wallet.ledger.coins(wallet.tip_height, min_depth=minconf, max_depth=maxconf,
                                include_immature=immature, watch_only=wallet.watch_only)
    result = []
    total = 0
    for coin in sorted(coins, key=lambda c: (c.wtx.order, c.n)):
        if scripts is not None and coin.wtx.tx.outputs[coin.n].script_pubkey not in scripts:
            continue
        if asset is not None and coin.opening.asset != asset:
            continue
        if coin.opening.value < minimum or (maximum is not None
                                            and coin.opening.value > maximum):
            continue
        safe = coin.wtx.depth(wallet.tip_height) > 0 or wallet.ledger.is_trusted(
            coin.wtx, wallet.tip_height)
        if not include_unsafe and not safe:
            continue
        result.append(coin_json(call, wallet, coin))
        total += coin.opening.value
        if isinstance(max_count, int) and max_count > 0 and len(result) >= max_count:
            break
        if min_sum is not None and total >= min_sum:
            break
    return result


# --- sending ------------------------------------------------------------------------------------


def _payment(call: Call, address: str, amount: Any, asset_text: str | None) -> Payment:
    dest = destination(call, address)
    value = amount_from_value(amount)
    if value <= 0:
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount for send")
    asset = asset_from_label(call, asset_text or None)  # "" names the policy asset
    assert asset is not None
    if dest.blinding_pubkey is not None:
        return Payment(value, ConfidentialAddress(dest.script_pubkey, dest.blinding_pubkey),
                       asset=asset)
    return Payment(value, script_pubkey=dest.script_pubkey, asset=asset)


# Arguments sendtoaddress and sendmany share (Elements' spend.cpp declares them once too)
_COMMENT = optional("comment", Kind.STR, None,
    "What the transaction is for: kept in the wallet (gettransaction's "
    "\"comment\"), not in the transaction.")
_REPLACEABLE = optional("replaceable", Kind.BOOL, None,
    "Signal that this transaction can be replaced (BIP 125). Accepted for "
    "elementsd's argument list: this wallet's transactions never signal (every "
    "input has the final sequence; -walletrbf=1 is refused at startup).",
    "wallet default")
_CONF_TARGET = optional("conf_target", Kind.INT, None,
    "Confirmation target in blocks (1 to 1008) for fee estimation. This node "
    "keeps no fee estimates, so a target pays -fallbackfee (not settxfee's "
    "rate). Not with fee_rate.")
_ESTIMATE_MODE = optional("estimate_mode", Kind.STR, "unset",
    "The fee estimate mode, one of \"unset\", \"economical\", "
    "\"conservative\" (case insensitive); checked, then unused, as this "
    "node keeps no fee estimates. Not with fee_rate.")
_IGNOREBLINDFAIL = optional("ignoreblindfail", Kind.BOOL, True,
    "If true, go on when an output cannot be blinded instead of failing the "
    "call. Accepted for elementsd's argument list; not used here.")
_FEE_RATE = optional("fee_rate", Kind.AMOUNT, None, "Specify a fee rate in sat/vB.",
    "not set, falls back to wallet fee estimation")


@rpc("wallet",
     args=[required("address", Kind.STR, "The address to send to."),
           required("amount", Kind.AMOUNT, "The amount in BTC to send. eg 0.1"),
           _COMMENT,
           optional("comment_to", Kind.STR, None,
                    "The person or organization paid: kept in the wallet (gettransaction's "
                    "\"to\"), not in the transaction."),
           optional("subtractfeefromamount", Kind.BOOL, False, "The fee will be deducted from "
                    "the amount being sent."),
           _REPLACEABLE,
           _CONF_TARGET,
           _ESTIMATE_MODE,
           optional("avoid_reuse", Kind.BOOL, True,
                    "(only with the avoid_reuse wallet flag) Do not spend coins of addresses "
                    "already used. Wallets here never have that flag, so it changes nothing."),
           optional("assetlabel", Kind.STR, None, "Hex asset id or asset label for balance."),
           _IGNOREBLINDFAIL,
           _FEE_RATE,
           optional("verbose", Kind.BOOL, False, "If true, return extra information about the "
                                                 "transaction.")],
     wallet=True, locking=Locking.SELF,
     description="Send an amount to a given address: to a confidential address the payment and "
                 "the change are blinded (Bulletproof range proofs, surjection proofs).",
     result=('"hex"    (string) The transaction id.\n'
             'or {"txid": "hex", "fee_reason": "str"} with verbose'),
     examples=[
         "\"ert1q…\" 0.1",
         "\"el1qq…\" 0.1 \"donation\" \"seans outpost\"",
         "\"el1qq…\" 0.1 \"\" \"\" false true null \"unset\" true \"bitcoin\" true 25 true",
     ])
def sendtoaddress(call: Call, address: str, amount: Any, comment: str | None,
                  comment_to: str | None, subtractfeefromamount: bool, replaceable: Any,
                  conf_target: Any, estimate_mode: str, avoid_reuse: bool,
                  assetlabel: str | None, ignoreblindfail: bool, fee_rate: Any,
                  verbose: bool) -> Any:
    payment = _payment(call, address, amount, assetlabel)
    fee = choose_fee_rate(call, fee_rate, conf_target, estimate_mode)
    built = build_and_send(call, [payment], fee_rate=fee.rate,
                           subtract=[0] if subtractfeefromamount else [],
                           comment=comment or "", comment_to=comment_to or "")
    if verbose:
        return {"txid": built.tx.txid_hex, "fee_reason": fee.reason}
    return built.tx.txid_hex


@rpc("wallet",
     args=[required("dummy", Kind.STR, "Must be set to \"\" for backwards compatibility."),
           required("amounts", Kind.OBJ, "The addresses and amounts"),
           optional("minconf", Kind.INT, None, "Ignored dummy value"),
           _COMMENT,
           optional("subtractfeefrom", Kind.ARR, None, "The addresses to take the fee from"),
           _REPLACEABLE,
           _CONF_TARGET,
           _ESTIMATE_MODE,
           optional("output_assets", Kind.OBJ, None, "address → asset label or hex"),
           _IGNOREBLINDFAIL,
           _FEE_RATE,
           optional("verbose", Kind.BOOL, False, "If true, return extra information about the "
                                                 "transaction.")],
     wallet=True, locking=Locking.SELF,
     description="Send multiple times (parameters in elementsd's positional order).",
     result=("\"hex\"    (string) The transaction id for the send. Only 1 transaction "
             "is created regardless of\n"
             "the number of addresses.\n"
             "or {\"txid\": \"hex\", \"fee_reason\": \"str\"} with verbose"),
     examples=[
         "\"\" '{\"ert1q…\":0.01,\"el1qq…\":0.02}'",
         "\"\" '{\"ert1q…\":0.01}' 6 \"testing\" '[\"ert1q…\"]' true 2 \"unset\" "
         "'{\"ert1q…\": \"bitcoin\"}'",
     ])
def sendmany(call: Call, dummy: str, amounts: dict[str, Any], minconf: Any, comment: str | None,
             subtractfeefrom: list[Any] | None, replaceable: Any, conf_target: Any,
             estimate_mode: str, output_assets: dict[str, Any] | None, ignoreblindfail: bool,
             fee_rate: Any, verbose: bool) -> Any:
    if dummy != "":
        raise RpcError(RpcCode.INVALID_PARAMETER, "Dummy value must be set to \"\"")
    if not amounts:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, amounts object is empty")
    assets = output_assets or {}
    payments = []
    subtract = []
    for i, (address, amount) in enumerate(amounts.items()):
        label = assets.get(address)
        payments.append(_payment(call, address, amount, label if isinstance(label, str)
                                 else None))
        if subtractfeefrom and address in subtractfeefrom:
            subtract.append(i)
    fee = choose_fee_rate(call, fee_rate, conf_target, estimate_mode)
    built = build_and_send(call, payments, fee_rate=fee.rate, subtract=subtract,
                           comment=comment or "")
    if verbose:
        return {"txid": built.tx.txid_hex, "fee_reason": fee.reason}
    return built.tx.txid_hex


# --- history ------------------------------------------------------------------------------------


def _wtx_fields(call: Call, wallet: NodeWallet, wtx: WalletTx) -> dict[str, Any]:
    """WalletTxToJSON."""
    depth = wtx.depth(wallet.tip_height)
    out: dict[str, Any] = {"confirmations": depth}
    if wtx.is_coinbase:
        out["generated"] = True
    if depth == 0:
        out["trusted"] = wallet.ledger.is_trusted(wtx, wallet.tip_height)
    if wtx.state is TxState.CONFIRMED and wtx.block_hash is not None:
        out["blockhash"] = wtx.block_hash[::-1].hex()
        out["blockheight"] = wtx.height
        out["blockindex"] = wtx.position
        out["blocktime"] = wtx.block_time
    elif wtx.state is TxState.CONFLICTED and wtx.conflict_hash is not None:
        out["mempoolconflicts"] = []
    out["txid"] = wtx.tx.txid_hex
    out["wtxid"] = wtx.tx.wtxid_hex
    out["walletconflicts"] = sorted(t[::-1].hex() for t in wallet.ledger.conflicts_of(wtx.tx))
    out["time"] = wtx.time_received
    out["timereceived"] = wtx.time_received
    if wtx.comment:
        out["comment"] = wtx.comment
    if wtx.comment_to:
        out["to"] = wtx.comment_to
    if wtx.tx.txid in call.node.mempool.entries:
        replaceable = "yes" if signals_replaceability(call, wtx.tx.txid) else "no"
    else:  # Core: confirmed or conflicted is "no", anything else not in the pool "unknown"
        replaceable = "no" if wtx.state in (TxState.CONFIRMED, TxState.CONFLICTED) else "unknown"
    out["bip125-replaceable"] = replaceable
    return out


def _entries(call: Call, wallet: NodeWallet, wtx: WalletTx,
             include_change: bool = False) -> list[dict[str, Any]]:
    """ListTransactions' entries of one transaction (send, receive, generate, immature);
    ``include_change``: change outputs too (listsinceblock)."""
    entries = []
    debit = wallet.ledger.debit(wtx)
    tx = wtx.tx
    fees = tx.fees()
    fee = fees.get(policy_asset(call), 0)
    if debit:  # Core's CachedTxGetAmounts: every non-change output is a send
        for n, out in enumerate(tx.outputs):
            if out.is_fee or (n in wtx.change and not include_change):
                continue
            entry: dict[str, Any] = {}
            address = address_of_output(call, wallet, out)
            if address is not None:
                entry["address"] = address
            entry["category"] = "send"
            entry.update(_amount_fields(wtx.opening(n), negative=True))
            label = wallet.labels.get(out.script_pubkey)
            if label is not None:
                entry["label"] = label
            entry["vout"] = n
            entry["fee"] = amount_json(-fee)
            entry["abandoned"] = wtx.state is TxState.ABANDONED
            entries.append(entry)
    depth = wtx.depth(wallet.tip_height)
    for n, opening in sorted(wtx.mine.items()):
        if debit and n in wtx.change and not include_change:
            continue
        out = tx.outputs[n]
        entry = {}
        address = address_of_output(call, wallet, out)
        if address is not None:
            entry["address"] = address
        if wtx.is_coinbase:  # Core: a coinbase not in the main chain is an orphan
            entry["category"] = ("orphan" if depth < 1 else
                                 "immature" if wallet.ledger.is_immature(wtx, wallet.tip_height)
                                 else "generate")
        else:
            entry["category"] = "receive"
        entry.update(_amount_fields(opening, negative=False))
        label = wallet.labels.get(out.script_pubkey)
        if label is not None:
            entry["label"] = label
        entry["vout"] = n
        entry["abandoned"] = wtx.state is TxState.ABANDONED
        entries.append(entry)
    return entries


def _amount_fields(opening: Opening | None, negative: bool) -> dict[str, Any]:
    if opening is None:  # an output we cannot open
        return {"amount": amount_json(0), "amountblinder": ZERO_BLINDER,
                "asset": ZERO_BLINDER, "assetblinder": ZERO_BLINDER}
    value = -opening.value if negative else opening.value
    return {"amount": amount_json(value), "amountblinder": blinder_hex(opening.vbf),
            "asset": opening.asset[::-1].hex(), "assetblinder": blinder_hex(opening.abf)}


@rpc("wallet", args=[required("txid", Kind.STR, "The transaction id"),
                     optional("include_watchonly", Kind.BOOL, None, "Whether to include watch-"
                              "only addresses in balance calculation and details[]",
                              "true for watch-only wallets, otherwise false"),
                     optional("verbose", Kind.BOOL, False, "Whether to include a `decoded` "
                                                           "field containing the decoded "
                                                           "transaction"),
                     optional("assetlabel", Kind.STR, None, "Hex asset id or asset label for "
                                                            "balance.")],
     wallet=True, description="Get detailed information about in-wallet transaction <txid>; "
                              "with assetlabel, \"amount\" is that asset's alone (0 for an "
                              "unknown label).",
     result='{\n  "amount" : {...},          (json object or numeric) The amount per asset '
            '(one number with assetlabel)\n  "fee" : {...},             (json object) The '
            'fee per asset, for a send\n  "confirmations" : n,       (numeric)\n  '
            '"txid" : "hex",           (string)\n  "details" : [...],         (json array)\n'
            '  "hex" : "hex",            (string) Raw data for transaction\n  "decoded" : '
            '{...}          (json object, verbose only)\n}',
     examples=['"1075db55d416d3ca199f55b6084e2115b9345e16c5cf302fc80e9d5fbf5d48d"',
               '"1075db55d416d3ca199f55b6084e2115b9345e16c5cf302fc80e9d5fbf5d48d" true false '
               '"bitcoin"'])
def gettransaction(call: Call, txid: str, include_watchonly: bool | None,
                   verbose: bool, assetlabel: str | None) -> dict[str, Any]:
    wallet = call.wallet
    wtx = wallet.ledger.get(parse_hash(txid, "txid"))
    if wtx is None:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid or non-wallet transaction id")
    credit = wallet.ledger.credit(wtx)
    if watch_only_included(wallet, include_watchonly):  # CachedTxGetCredit, ISMINE_WATCH_ONLY
        for opening in watched_openings(wtx, wallet.watch_only).values():
            credit[opening.asset] = credit.get(opening.asset, 0) + opening.value
    debit = wallet.ledger.debit(wtx)
    fees = wtx.tx.fees() if debit else {}
    net: dict[bytes, int] = {}
    for asset in {*credit, *debit, *fees}:
        net[asset] = credit.get(asset, 0) - debit.get(asset, 0) + fees.get(asset, 0)
    out: dict[str, Any] = {"amount": amount_map(call, net)}
    if assetlabel:  # AmountMapToUniv with an asset: that asset's amount alone
        named = asset_from_label(call, assetlabel, strict=False)
        out["amount"] = amount_json(net.get(named, 0) if named is not None else 0)
    if debit:
        out["fee"] = amount_map(call, {a: -v for a, v in fees.items()})
    out.update(_wtx_fields(call, wallet, wtx))
    out["details"] = _entries(call, wallet, wtx)
    out["hex"] = wtx.tx.hex()
    if verbose:
        out["decoded"] = transaction_json(wtx.tx, call.node.params)
    return out


@rpc("wallet", args=[optional("label", Kind.STR, None, "If set, should be a valid label name "
                                                       "to return only incoming transactions "
                                                       "with the specified label, or \"*\"."),
                     optional("count", Kind.INT, 10, "The number of transactions to return"),
                     optional("skip", Kind.INT, 0, "The number of transactions to skip"),
                     optional("include_watchonly", Kind.BOOL, True,
                              "Include transactions to watch-only addresses (see "
                              "'importaddress'). Accepted for elementsd's argument list: the "
                              "list here is the same either way.")],
     wallet=True, description="Returns up to 'count' most recent transactions skipping the "
                              "first 'from' transactions.",
     result=("[\n"
             "  {\n"
             "    \"address\" : \"str\",       (string, optional) The (unconfidential) "
             "address of the transaction\n"
             "    \"category\" : \"str\",      (string) send|receive|generate|immature|orphan\n"
             "    \"amount\" : n,            (numeric) The amount in BTC (negative for send)\n"
             "    \"amountblinder\" : \"hex\", (string)\n"
             "    \"asset\" : \"hex\",         (string)\n"
             "    \"assetblinder\" : \"hex\",  (string)\n"
             "    \"label\" : \"str\",         (string, optional)\n"
             "    \"vout\" : n,              (numeric) the vout value\n"
             "    \"fee\" : n,               (numeric, optional) The amount of the "
             "fee in BTC, negative (send only)\n"
             "    \"abandoned\" : true|false,\n"
             "    \"confirmations\" : n,     (numeric) The number of confirmations "
             "for the transaction\n"
             "    \"txid\" : \"hex\",          (string) The transaction id\n"
             "    \"time\" : xxx,            (numeric) The transaction time in "
             "seconds since epoch\n"
             "    ...\n"
             "  },\n"
             "  ...\n"
             "]"),
     examples=["", "\"*\" 20 100"])
def listtransactions(call: Call, label: str | None, count: int, skip: int,
                     include_watchonly: bool) -> list[dict[str, Any]]:
    if count < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Negative count")
    if skip < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Negative from")
    wallet = call.wallet
    rows: list[dict[str, Any]] = []
    for wtx in reversed(wallet.ledger.by_time()):
        fields = _wtx_fields(call, wallet, wtx)
        for entry in reversed(_entries(call, wallet, wtx)):
            if label not in (None, "*") and entry.get("label") != label:
                continue
            rows.append({**entry, **fields})
        if len(rows) >= count + skip:
            break
    rows = rows[skip: skip + count]
    rows.reverse()
    return rows


# --- coin locks, abandoning, received amounts, history since a block ----------------------------


def _outpoint_object(item: Any) -> tuple[bytes, int]:
    """One ``{"txid": hex, "vout": n}`` of lockunspent (``RPCTypeCheckObj`` messages)."""
    if not isinstance(item, dict):
        raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {json_type(item).value} is not "
                                           "of expected type object")
    for key, expected in (("txid", JsonType.STRING), ("vout", JsonType.NUMBER)):
        if key not in item:
            raise RpcError(RpcCode.TYPE_ERROR, f"Missing {key}")
        actual = json_type(item[key])
        if actual is not expected:
            raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {actual.value} for field "
                                               f"{key} is not of expected type "
                                               f"{expected.value}")
    txid = parse_hash(item["txid"], "txid")
    vout = integer(item["vout"])
    if vout < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, vout cannot be negative")
    return txid, vout


@rpc("wallet", args=[required("unlock", Kind.BOOL, "Whether to unlock (true) or lock (false) "
                                                   "the specified transactions"),
                     optional("transactions", Kind.ARR, None, "The transaction outputs and "
                              "within each, the txid (string) vout (numeric).", "[]"),
                     optional("persistent", Kind.BOOL, False, "Whether to write/erase this lock "
                              "in the wallet database, or keep the change in memory only. "
                              "Ignored for unlocking.")],
     wallet=True,
     description="Updates list of temporarily unspendable outputs: locked coins are left out "
                 "of coin selection (sends, fundrawtransaction). Without transactions, "
                 "unlock=true unlocks every coin.",
     result="true|false    (boolean) Whether the command was successful or not",
     examples=['false \'[{"txid":"a08e6907dbbd3d809776dbfc5d82e371b764ed838b5655e72f463568df1'
               'aadf0","vout":1}]\'', "true"])
def lockunspent(call: Call, unlock: bool, transactions: list[Any] | None,
                persistent: bool) -> bool:
    wallet = call.wallet
    if transactions is None:
        if unlock:
            wallet.unlock_coins()
        return True
    outpoints = []
    for item in transactions:
        txid, vout = _outpoint_object(item)
        wtx = wallet.ledger.get(txid)
        if wtx is None:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, unknown transaction")
        if vout >= len(wtx.tx.outputs):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter, vout index out of bounds")
        if wallet.ledger.is_spent((txid, vout)):
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Invalid parameter, expected unspent output")
        locked = (txid, vout) in wallet.wallet.locked
        if unlock and not locked:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, expected locked output")
        if not unlock and locked and not persistent:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, output already locked")
        outpoints.append((txid, vout))
    if unlock:
        wallet.unlock_coins(outpoints)
    else:
        wallet.lock_coins(outpoints, persistent=persistent)
    return True


@rpc("wallet", wallet=True, description="Returns list of temporarily unspendable outputs.",
     result='[\n  {\n    "txid" : "hex",    (string) The transaction id locked\n    "vout" : n'
            '         (numeric) The vout value\n  },\n  ...\n]',
     examples=[""])
def listlockunspent(call: Call) -> list[dict[str, Any]]:
    return [{"txid": txid[::-1].hex(), "vout": n}
            for txid, n in sorted(call.wallet.wallet.locked)]


@rpc("wallet", args=[required("txid", Kind.HEX, "The transaction id")], wallet=True,
     description="Mark in-wallet transaction <txid> as abandoned. This will mark this "
                 "transaction and all its in-wallet descendants as abandoned which will allow "
                 "for their inputs to be respent. It can only be used on transactions that "
                 "are not confirmed and not in the mempool.",
     examples=['"1075db55d416d3ca199f55b6084e2115b9345e16c5cf302fc80e9d5fbf5d48d"'],
     result="null    (json null)")
def abandontransaction(call: Call, txid: str) -> None:
    wallet = call.wallet
    hash_ = parse_hash(txid, "txid")
    wtx = wallet.ledger.get(hash_)
    if wtx is None:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid or non-wallet transaction id")
    if (wtx.depth(wallet.tip_height) != 0 or hash_ in call.node.mempool.entries
            or wtx.state is TxState.ABANDONED):
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Transaction not eligible for abandonment")
    wallet.abandon(hash_)


def _tally(call: Call, wallet: NodeWallet, min_depth: int, include_immature: bool,
           script: bytes | None = None, asset: bytes | None = None,
           watch_only: bool = False
           ) -> dict[bytes, tuple[dict[bytes, int], int, list[str]]]:
    """Core's ``ListReceived`` tally: per script of ours (``watch_only``: and per script
    watched without keys), the amounts per asset it received in transactions of at least
    ``min_depth``, the least depth and the txids (only outputs the wallet can open count:
    Elements skips amounts it cannot unblind)."""
    tally: dict[bytes, tuple[dict[bytes, int], int, list[str]]] = {}
    for wtx in wallet.ledger.by_time():
        depth = wtx.depth(wallet.tip_height)
        if depth < min_depth or wtx.state is TxState.ABANDONED:
            continue
        if wtx.is_coinbase and (depth < 1 or (wallet.ledger.is_immature(wtx, wallet.tip_height)
                                              and not include_immature)):
            continue
        for n, out in enumerate(wtx.tx.outputs):
            if out.is_fee or (script is not None and out.script_pubkey != script):
                continue
            opening = wtx.mine.get(n)
            if opening is None and watch_only and out.script_pubkey in wallet.watch_only:
                opening = wtx.known.get(n)
            if opening is None or (asset is not None and opening.asset != asset):
                continue
            amounts, least, txids = tally.get(out.script_pubkey, ({}, 1 << 31, []))
            amounts[opening.asset] = amounts.get(opening.asset, 0) + opening.value
            if wtx.tx.txid_hex not in txids:
                txids.append(wtx.tx.txid_hex)
            tally[out.script_pubkey] = (amounts, min(least, depth), txids)
    return tally


def _book_address(call: Call, wallet: NodeWallet, script: bytes) -> str:
    """An address-book entry's address: confidential for the wallet's own keys when
    ``-blindedaddresses`` hands them out so (elementsd keeps the blinded destination in its
    address book), else unconfidential."""
    pair = wallet.wallet.keys.owner_of(script)
    if pair is not None and call.context.wallet_settings.blinded_addresses:
        return address_text(call, Destination(script, pair.blinding_pubkey))
    return address_text(call, Destination(script))


def _amounts_json(call: Call, amounts: dict[bytes, int], assetlabel: str | None) -> Any:
    """``AmountMapToUniv``: the per-asset map, or one asset's amount with an asset label."""
    if assetlabel:
        asset = asset_from_label(call, assetlabel, strict=False)
        return amount_json(amounts.get(asset, 0) if asset is not None else 0)
    return amount_map(call, amounts)


@rpc("wallet", args=[optional("minconf", Kind.INT, 1, "The minimum number of confirmations "
                                                      "before payments are included."),
                     optional("include_empty", Kind.BOOL, False, "Whether to include addresses "
                              "that haven't received any payments."),
                     optional("include_watchonly", Kind.BOOL, None, "Whether to include watch-"
                              "only addresses (see 'importaddress')",
                              "true for watch-only wallets, otherwise false"),
                     optional("address_filter", Kind.STR, None, "If present and non-empty, only "
                              "return information on this address."),
                     optional("assetlabel", Kind.STR, None, "Hex asset id or asset label for "
                                                            "balance."),
                     optional("include_immature_coinbase", Kind.BOOL, False,
                              "Include immature coinbase transactions.")],
     wallet=True, description="List balances by receiving address (the wallet's labelled, "
                              "non-change addresses).",
     result='[\n  {\n    "address" : "str",      (string) The receiving address\n    '
            '"amount" : {...},       (json object or numeric) The amount per asset (one '
            'number with assetlabel)\n    "confirmations" : n,    (numeric) The number of '
            'confirmations of the most recent transaction included\n    "label" : "str",'
            '        (string) The label of the receiving address\n    "txids" : [ "hex", ... '
            ']\n  },\n  ...\n]',
     examples=["6 true", '6 true true "" "bitcoin"'])
def listreceivedbyaddress(call: Call, minconf: int, include_empty: bool,
                          include_watchonly: bool | None, address_filter: str | None,
                          assetlabel: str | None,
                          include_immature_coinbase: bool) -> list[dict[str, Any]]:
    wallet = call.wallet
    wanted: bytes | None = None
    if address_filter:
        try:
            wanted = decode_destination(address_filter, call.node.params.addresses).script_pubkey
        except EncodingError:
            raise RpcError(RpcCode.WALLET_ERROR, "address_filter parameter was invalid") from None
    asset = asset_from_label(call, assetlabel, strict=False) if assetlabel else None
    tally = _tally(call, wallet, minconf, include_immature_coinbase, wanted, asset,
                   watch_only_included(wallet, include_watchonly))
    rows = []
    for script, label in wallet.labels.items():
        if wanted is not None and script != wanted:
            continue
        if script not in tally and not include_empty:
            continue
        amounts, least, txids = tally.get(script, ({}, 1 << 31, []))
        rows.append({"address": _book_address(call, wallet, script),
                     "amount": _amounts_json(call, amounts, assetlabel),
                     "confirmations": 0 if least == 1 << 31 else least,
                     "label": label, "txids": txids})
    return rows


@rpc("wallet", args=[required("address", Kind.STR, "The address for transactions."),
                     optional("minconf", Kind.INT, 1, "Only include transactions confirmed at "
                                                      "least this many times."),
                     optional("assetlabel", Kind.STR, None, "Hex asset id or asset label for "
                                                            "balance."),
                     optional("include_immature_coinbase", Kind.BOOL, False,
                              "Include immature coinbase transactions.")],
     wallet=True, description="Returns the total amount received by the given address in "
                              "transactions with at least minconf confirmations.",
     result='{...} or n    (json object or numeric) The amounts per asset, or of the asset '
            'assetlabel names',
     examples=['"ert1q…"', '"ert1q…" 6 "bitcoin"'])
def getreceivedbyaddress(call: Call, address: str, minconf: int, assetlabel: str | None,
                         include_immature_coinbase: bool) -> Any:
    wallet = call.wallet
    try:
        script = decode_destination(address, call.node.params.addresses).script_pubkey
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid Bitcoin address") from None
    if not wallet.is_mine(script):
        raise RpcError(RpcCode.WALLET_ERROR, "Address not found in wallet")
    tally = _tally(call, wallet, minconf, include_immature_coinbase, script)
    amounts = tally.get(script, ({}, 0, []))[0]
    return _amounts_json(call, amounts, assetlabel)


@rpc("wallet", args=[optional("blockhash", Kind.STR, None, "If set, the block hash to list "
                              "transactions since, otherwise list all transactions."),
                     optional("target_confirmations", Kind.INT, 1, "Return the nth block hash "
                              "from the main chain. e.g. 1 would mean the best block hash. "
                              "Note: this is not used as a filter, but only affects [lastblock] "
                              "in the return value"),
                     optional("include_watchonly", Kind.BOOL, None, "Include transactions to "
                              "watch-only addresses (see 'importaddress')",
                              "true for watch-only wallets, otherwise false"),
                     optional("include_removed", Kind.BOOL, True, "Show transactions that were "
                              "removed due to a reorg in the \"removed\" array (not guaranteed "
                              "to work on pruned nodes)"),
                     optional("include_change", Kind.BOOL, False, "Also add entries for change "
                                                                  "outputs."),
                     optional("label", Kind.STR, None, "Return only incoming transactions "
                              "paying to addresses with the specified label.")],
     wallet=True,
     description="Get all transactions in blocks since block [blockhash], or all transactions "
                 "if omitted. Transactions of a block that left the main chain since are "
                 "listed under \"removed\".",
     result='{\n  "transactions" : [ {...}, ... ],    (json array) as listtransactions\n  '
            '"removed" : [ {...}, ... ],         (json array, optional) transactions of '
            'blocks that left the main chain\n  "lastblock" : "hex"                (string) '
            'The hash of the block (target_confirmations-1) from the best block\n}',
     examples=["", '"000000000000000bacf66f7497b7dc45ef753ee9a7d38571037cdb1a57f663ad" 6'])
def listsinceblock(call: Call, blockhash: str | None, target_confirmations: int,
                   include_watchonly: bool | None, include_removed: bool,
                   include_change: bool, label: str | None) -> dict[str, Any]:
    wallet = call.wallet
    node = call.node
    if target_confirmations < 1:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter")
    depth_limit = -1
    removed_from: bytes | None = None
    if blockhash is not None:
        hash_ = parse_hash(blockhash, "blockhash")
        info = node.block_info(hash_)
        if info is None:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Block not found")
        if info.in_active_chain:
            depth_limit = wallet.tip_height + 1 - info.height
        else:
            removed_from = hash_
            fork: BlockInfo | None = info
            while fork is not None and not fork.in_active_chain:
                fork = node.block_info(fork.prev_hash)
            depth_limit = wallet.tip_height + 1 - fork.height if fork is not None else -1
    rows: list[dict[str, Any]] = []
    for wtx in wallet.ledger.by_time():
        depth = wtx.depth(wallet.tip_height)
        if depth_limit != -1 and depth >= depth_limit:
            continue
        fields = _wtx_fields(call, wallet, wtx)
        for entry in _entries(call, wallet, wtx, include_change=include_change):
            if label is not None and entry.get("label") != label:
                continue
            rows.append({**entry, **fields})
    out: dict[str, Any] = {"transactions": rows}
    if include_removed and removed_from is not None:
        removed = []
        cursor = node.block_info(removed_from)
        while cursor is not None and not cursor.in_active_chain:
            block = parse_block(node.read_block(cursor.hash))
            for tx in block.transactions:
                gone = wallet.ledger.get(tx.txid)
                if gone is None:
                    continue
                fields = _wtx_fields(call, wallet, gone)
                removed += [{**entry, **fields}
                            for entry in _entries(call, wallet, gone,
                                                  include_change=include_change)]
            cursor = node.block_info(cursor.prev_hash)
        out["removed"] = removed
    last_height = max(0, node.tip.height + 1 - target_confirmations)
    last = node.block_hash(last_height)
    out["lastblock"] = last[::-1].hex() if last is not None else ZERO_BLINDER
    return out


@rpc("wallet", args=[optional("start_height", Kind.INT, 0, "block height where the rescan "
                                                           "should start"),
                     optional("stop_height", Kind.INT, None, "the last block height that should "
                              "be scanned. If none is provided it will rescan up to the tip at "
                              "return time of this call.")],
     wallet=True, locking=Locking.SELF,
     description="Rescan the local blockchain for wallet related transactions: every block "
                 "from start_height to stop_height is scanned again (new keys, imported "
                 "addresses and blinding keys find their payments).",
     result='{\n  "start_height" : n,    (numeric) The block height where the rescan started '
            '(the requested height or 0)\n  "stop_height" : n      (numeric) The height of the '
            'last rescanned block.\n}',
     examples=["100000 120000"])
def rescanblockchain(call: Call, start_height: int, stop_height: int | None) -> dict[str, Any]:
    wallet = call.wallet
    with call.context.chain_lock:
        tip = call.node.tip.height
        if start_height < 0 or start_height > tip:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid start_height")
        stop = tip if stop_height is None else stop_height
        if stop_height is not None and (stop_height < 0 or stop_height > tip):
            raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid stop_height")
        if stop < start_height:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "stop_height must be greater than start_height")
        with wallet.lock:
            wallet.rescan(call.node, start_height, stop)
    return {"start_height": start_height, "stop_height": stop}


# --- message signing ----------------------------------------------------------------------------


MESSAGE_MAGIC = b"Bitcoin Signed Message:\n"
"""Elements keeps Bitcoin's message magic (src/common/signmessage.cpp)."""


def message_hash(message: str) -> bytes:
    """``MessageHash``: sha256d of the magic and the message, each with its compact size."""
    text = message.encode()
    return sha256d(var_bytes(MESSAGE_MAGIC) + var_bytes(text))


@rpc("wallet", args=[required("address", Kind.STR, "The address to use for the private key."),
                     required("message", Kind.STR, "The message to create a signature of.")],
     wallet=True,
     description="Sign a message with the private key of an address (a P2PKH address, as "
                 "Core: the key whose hash it pays).",
     result='"signature"    (string) The signature of the message encoded in base 64',
     examples=['"2dxk3DB5Ma6bRiXuSJSQKvRmkF9ziT7YNgu" "my message"'])
def signmessage(call: Call, address: str, message: str) -> str:
    wallet = call.wallet
    ensure_unlocked(wallet)
    try:
        dest = decode_destination(address, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid address") from None
    script = dest.script_pubkey
    if not (len(script) == 25 and script[:3] == b"\x76\xa9\x14" and script[23:] == b"\x88\xac"):
        raise RpcError(RpcCode.TYPE_ERROR, "Address does not refer to key")
    # the key whose HASH160 the address pays is the one of our P2WPKH script of that hash
    pair = wallet.wallet.keys.owner_of(script) or wallet.wallet.keys.owner_of(
        b"\x00\x14" + script[3:23])
    if pair is None or hash160(pair.pubkey) != script[3:23]:
        raise RpcError(RpcCode.WALLET_ERROR, "Private key not available")
    recoverable = coincurve.PrivateKey(pair.secret.to_bytes(32, "big")).sign_recoverable(
        message_hash(message), hasher=None)
    # compact form: header 27 + recovery id + 4 (compressed key), then r ‖ s
    compact = bytes([27 + recoverable[64] + 4]) + recoverable[:64]
    return base64.b64encode(compact).decode()


# --- encryption ---------------------------------------------------------------------------------


UNLOCK_NEEDED = "Error: Please enter the wallet passphrase with walletpassphrase first."
MAX_SLEEP_TIME = 100_000_000  # walletpassphrase's cap on the timeout (encrypt.cpp)


def ensure_unlocked(wallet: NodeWallet) -> None:
    """``EnsureWalletIsUnlocked``: -13 while an encrypted wallet is locked."""
    if wallet.is_locked:
        raise RpcError(RpcCode.WALLET_UNLOCK_NEEDED, UNLOCK_NEEDED)


def _wrong_passphrase(passphrase: str, old: bool = False) -> RpcError:
    if "\0" not in passphrase:
        return RpcError(RpcCode.WALLET_PASSPHRASE_INCORRECT,
                        "Error: The wallet passphrase entered was incorrect.")
    which = "old wallet passphrase" if old else "wallet passphrase"
    return RpcError(RpcCode.WALLET_PASSPHRASE_INCORRECT,
                    f"Error: The {which} entered is incorrect. It contains a null character "
                    "(ie - a zero byte). If the passphrase was set with a version of this "
                    "software prior to 25.0, please try again with only the characters up to "
                    "— but not including — the first null character. If this is successful, "
                    "please set a new passphrase to avoid this issue in the future.")


@rpc("wallet", args=[required("passphrase", Kind.STR, "The pass phrase to encrypt the wallet "
                              "with. It must be at least 1 character, but should be long.")],
     wallet=True,
     description="Encrypts the wallet with 'passphrase' (its seed under a master key, the master "
                 "key under the passphrase: AES-256-CBC, SHA-512 key derivation as Core's). "
                 "After this, any calls that interact with private keys such as sending or "
                 "signing will require the passphrase to be set prior to making these calls. "
                 "Use the walletpassphrase call for this, and then walletlock call.",
     result='"str"    (string) A string with further instructions',
     examples=['"my pass phrase"'])
def encryptwallet(call: Call, passphrase: str) -> str:
    wallet = call.wallet
    if wallet.encryption is not None:
        raise RpcError(RpcCode.WALLET_WRONG_ENC_STATE,
                       "Error: running with an encrypted wallet, but encryptwallet was called.")
    if not passphrase:
        raise RpcError(RpcCode.INVALID_PARAMETER, "passphrase cannot be empty")
    wallet.encrypt(passphrase)
    return ("wallet encrypted; The keypool has been flushed and a new HD seed was generated. "
            "You need to make a new backup with the backupwallet RPC.")


@rpc("wallet", args=[required("passphrase", Kind.STR, "The wallet passphrase"),
                     required("timeout", Kind.INT, "The time to keep the decryption key in "
                              "seconds; capped at 100000000 (~3 years).")],
     wallet=True,
     description="Stores the wallet decryption key in memory for 'timeout' seconds. This is "
                 "needed prior to performing transactions related to private keys such as "
                 "sending bitcoins. Issuing the walletpassphrase command while the wallet is "
                 "already unlocked will set a new unlock time that overrides the old one.",
     examples=['"my pass phrase" 60'],
     result="null    (json null)")
def walletpassphrase(call: Call, passphrase: str, timeout: int) -> None:
    wallet = call.wallet
    if wallet.encryption is None:
        raise RpcError(RpcCode.WALLET_WRONG_ENC_STATE, "Error: running with an unencrypted "
                                                       "wallet, but walletpassphrase was called.")
    if timeout < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Timeout cannot be negative.")
    if not passphrase:
        raise RpcError(RpcCode.INVALID_PARAMETER, "passphrase cannot be empty")
    try:
        wallet.unlock_keys(passphrase, min(timeout, MAX_SLEEP_TIME))
    except CrypterError:
        raise _wrong_passphrase(passphrase) from None


@rpc("wallet", args=[required("oldpassphrase", Kind.STR, "The current passphrase"),
                     required("newpassphrase", Kind.STR, "The new passphrase")],
     wallet=True, description="Changes the wallet passphrase from 'oldpassphrase' to "
                              "'newpassphrase'.",
     examples=['"old one" "new one"'],
     result="null    (json null)")
def walletpassphrasechange(call: Call, oldpassphrase: str, newpassphrase: str) -> None:
    wallet = call.wallet
    if wallet.encryption is None:
        raise RpcError(RpcCode.WALLET_WRONG_ENC_STATE, "Error: running with an unencrypted "
                                                       "wallet, but walletpassphrasechange was "
                                                       "called.")
    if not oldpassphrase or not newpassphrase:
        raise RpcError(RpcCode.INVALID_PARAMETER, "passphrase cannot be empty")
    try:
        wallet.change_passphrase(oldpassphrase, newpassphrase)
    except CrypterError:
        raise _wrong_passphrase(oldpassphrase, old=True) from None


@rpc("wallet", wallet=True,
     description="Removes the wallet encryption key from memory, locking the wallet. After "
                 "calling this method, you will need to call walletpassphrase again before "
                 "being able to call any methods which require the wallet to be unlocked.",
     result="null    (json null)",
     examples=[""])
def walletlock(call: Call) -> None:
    wallet = call.wallet
    if wallet.encryption is None:
        raise RpcError(RpcCode.WALLET_WRONG_ENC_STATE, "Error: running with an unencrypted "
                                                       "wallet, but walletlock was called.")
    wallet.lock_keys()
