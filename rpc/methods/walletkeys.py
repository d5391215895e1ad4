"""Wallet key calls as elementsd has them (Elements' ``src/wallet/rpc/backup.cpp``,
``addresses.cpp``, ``elements.cpp``; docs/elements-regtest.md §5.3-§5.6): key, address and
descriptor imports, dumps, the HD seed, the keypool, multisig addresses, the master blinding key;
and the descriptor calls that need no wallet (``src/rpc/output_script.cpp``).

Legacy wallets (``createwallet … descriptors=false``) take importprivkey, importpubkey,
importaddress, dumpprivkey, dumpwallet, sethdseed and addmultisigaddress; descriptor wallets take
importdescriptors and listdescriptors; each refuses the other's calls with elementsd's -4.
Our own chains' wallets (neither kind: ``HDScheme.TAGGED``) take both.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import Any

from ctplugin.elements.address import (
    Destination,
    decode_destination,
    decode_secret,
    encode_destination,
    encode_secret,
    p2sh_script,
)
from ctplugin.elements.chainparams import AddressParams
from ctplugin.errors import EncodingError
from ctplugin.hashes import hash160, sha256
from ctplugin.script.descriptor import (
    Descriptor,
    DescriptorError,
    descriptor_checksum,
    parse_descriptor,
)
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.point import Point
from regtest.wallet.keys import (
    ADDRESS_KINDS,
    BIP_PURPOSE,
    HARDENED,
    P2PKH,
    P2SH_P2WPKH,
    P2TR,
    P2WPKH,
    TEST_COIN_TYPE,
    AddressKind,
    HDScheme,
    KeyChain,
    format_path,
    issuance_blinding_script,
    p2wpkh_script,
)
from regtest.wallet.ledger import WalletTx
from regtest.wallet.node_wallet import NodeWallet
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.registry import Kind, optional, required, rpc

LEGACY_ONLY = "Only legacy wallets are supported by this command"
NO_PRIVATE_KEYS = "Cannot import private keys to a wallet with private keys disabled"
MAX_RANGE = 1_000_000  # Core's importdescriptors / deriveaddresses range limit
MAX_KEYPOOL = 10_000  # keypoolrefill's bound here (Core has none; derivation is slow here)


# --- helpers ------------------------------------------------------------------------------------


def _legacy(wallet: NodeWallet) -> None:
    """EnsureLegacyScriptPubKeyMan: descriptor wallets refuse legacy calls."""
    if wallet.wallet.keys.scheme is HDScheme.DESCRIPTORS:
        raise RpcError(RpcCode.WALLET_ERROR, LEGACY_ONLY)


def account_descriptor(keys: KeyChain, kind: AddressKind, params: AddressParams,
                       private: bool = False, internal: bool = False) -> str:
    """A descriptor wallet's active descriptor of one script type: its BIP44/49/84/86
    account's external (``…/0/*``) or internal (``…/1/*``) chain,
    ``[fingerprint/purpose'/1'/0']tpub…/0/*`` (tprv with ``private``), checksummed; the
    ``parent_desc`` of the addresses it hands out."""
    master = keys.master
    assert master is not None  # only HD key chains have accounts
    account_path = (HARDENED | BIP_PURPOSE[kind], HARDENED | TEST_COIN_TYPE, HARDENED)
    account = master.derive_path(account_path)
    key = account.encode(params) if private else account.neuter().encode(params)
    origin = f"[{master.fingerprint.hex()}{format_path(account_path, apostrophe=False)[1:]}]"
    body = {P2PKH: "pkh({})", P2WPKH: "wpkh({})", P2SH_P2WPKH: "sh(wpkh({}))",
            P2TR: "tr({})"}[kind].format(f"{origin}{key}/{int(internal)}/*")
    return parse_descriptor(body, params).to_string(params, private)


def _descriptor_wallet(wallet: NodeWallet, call_name: str) -> None:
    if wallet.wallet.keys.scheme is HDScheme.LEGACY:
        raise RpcError(RpcCode.WALLET_ERROR,
                       f"{call_name} is not available for non-descriptor wallets")


def _label(label: str) -> str:
    if label == "*":
        raise RpcError(RpcCode.WALLET_INVALID_LABEL_NAME, "Invalid label name")
    return label


def _rescan(call: Call, wallet: NodeWallet, rescan: bool, start_height: int = 0) -> None:
    """Scan the chain and mempool after an import (RescanWallet), under the chain lock the
    call holds."""
    if rescan:
        wallet.rescan(call.node, start_height)


def _secret(call: Call, text: str) -> int:
    try:
        secret, compressed = decode_secret(text, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid private key encoding") from None
    if not compressed:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "Uncompressed keys are not supported by this wallet")
    return int.from_bytes(secret, "big")


def _pubkey(text: str) -> bytes:
    try:
        data = bytes.fromhex(text)
    except ValueError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Pubkey must be a hex string") from None
    try:
        Point.from_bytes(data)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Pubkey is not a valid public key") \
            from None
    if len(data) != 33:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "Uncompressed keys are not supported by this wallet")
    return data


def _address(call: Call, script: bytes, blinding_pubkey: bytes | None = None) -> str:
    return encode_destination(script, call.node.params.addresses, blinding_pubkey)


# --- legacy imports -----------------------------------------------------------------------------


@rpc("wallet", args=[required("privkey", Kind.STR, "The private key (see dumpprivkey)"),
                     optional("label", Kind.STR, "", "An optional label",
                              "current label if address exists, otherwise \"\""),
                     optional("rescan", Kind.BOOL, True, "Scan the chain and mempool for "
                                                         "wallet transactions.")],
     wallet=True,
     description="Adds a private key (as returned by dumpprivkey) to your wallet: its P2PKH, "
                 "P2WPKH and P2SH-P2WPKH scripts become the wallet's. Requires a new wallet "
                 "backup.\nNote: This command is only compatible with legacy wallets. Use "
                 "\"importdescriptors\" with \"combo(X)\" for descriptor wallets.",
     result="null    (json null)",
     examples=('"mykey"', '"mykey" "testing" false'))
def importprivkey(call: Call, privkey: str, label: str, rescan: bool) -> None:
    wallet = call.wallet
    _legacy(wallet)
    if not wallet.wallet.private_keys:
        raise RpcError(RpcCode.WALLET_ERROR, NO_PRIVATE_KEYS)
    secret = _secret(call, privkey)
    wallet.import_keys([secret], _label(label))
    _rescan(call, wallet, rescan)


@rpc("wallet", args=[required("pubkey", Kind.STR, "The hex-encoded public key"),
                     optional("label", Kind.STR, "", "An optional label"),
                     optional("rescan", Kind.BOOL, True, "Scan the chain and mempool for "
                                                         "wallet transactions.")],
     wallet=True,
     description="Adds a public key (in hex) that can be watched as if it were in your wallet "
                 "but cannot be used to spend: its P2PK, P2PKH, P2WPKH and P2SH-P2WPKH "
                 "scripts.\nNote: This command is only compatible with legacy wallets.",
     result="null    (json null)", examples=('"mypubkey"', '"mypubkey" "testing" false'))
def importpubkey(call: Call, pubkey: str, label: str, rescan: bool) -> None:
    wallet = call.wallet
    _legacy(wallet)
    key = _pubkey(pubkey)
    wpkh = b"\x00\x14" + hash160(key)
    scripts = [bytes((33,)) + key + b"\xac", b"\x76\xa9\x14" + hash160(key) + b"\x88\xac",
               wpkh, p2sh_script(hash160(wpkh))]
    wallet.import_watch_only(scripts, _label(label))
    _rescan(call, wallet, rescan)


@rpc("wallet", args=[required("address", Kind.STR, "The Bitcoin address (or hex-encoded "
                                                   "script)"),
                     optional("label", Kind.STR, "", "An optional label"),
                     optional("rescan", Kind.BOOL, True, "Scan the chain and mempool for "
                                                         "wallet transactions."),
                     optional("p2sh", Kind.BOOL, False, "Add the P2SH version of the script "
                                                        "as well")],
     wallet=True,
     description="Adds an address or script (in hex) that can be watched as if it were in "
                 "your wallet but cannot be used to spend. A confidential address is watched "
                 "by its script; its payments open with the wallet's blinding key for that "
                 "script or one imported with importblindingkey.\nNote: This command is only "
                 "compatible with legacy wallets. Use \"importdescriptors\" for descriptor "
                 "wallets.",
     result="null    (json null)",
     examples=('"myaddress"', '"myaddress" "testing" false'))
def importaddress(call: Call, address: str, label: str, rescan: bool, p2sh: bool) -> None:
    wallet = call.wallet
    _legacy(wallet)
    label = _label(label)
    try:
        dest: Destination | None = decode_destination(address, call.node.params.addresses)
    except EncodingError:
        dest = None
    if dest is not None:
        if p2sh:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                           "Cannot use the p2sh flag with an address - use a script instead")
        script = dest.script_pubkey
        if len(script) == 34 and script[0] == 0x51:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                           "Blech32m addresses cannot be imported into legacy wallets")
        scripts = [script]
    else:
        try:
            script = bytes.fromhex(address)
        except ValueError:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                           "Invalid Bitcoin address or script") from None
        scripts = [script] + ([p2sh_script(hash160(script))] if p2sh else [])
        if p2sh:
            wallet.record_descriptor(f"raw({scripts[1].hex()})", {"timestamp": 0, "range": None},
                                     {scripts[1]: (script, None)})
    wallet.import_watch_only(scripts, label)
    _rescan(call, wallet, rescan)


@rpc("wallet", args=[required("address", Kind.STR, "The bitcoin address for the private key")],
     wallet=True,
     description="Reveals the private key corresponding to 'address'.\nThen the importprivkey "
                 "can be used with this output\nNote: This command is only compatible with "
                 "legacy wallets.",
     result='"str"    (string) The private key', examples=('"myaddress"',))
def dumpprivkey(call: Call, address: str) -> str:
    wallet = call.wallet
    _legacy(wallet)
    try:
        dest = decode_destination(address, call.node.params.addresses)
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid Bitcoin address") from None
    pair = wallet.wallet.keys.owner_of(dest.script_pubkey)
    if pair is None:
        script = dest.script_pubkey
        is_key = (len(script) == 25 and script[0] == 0x76) or (
            len(script) == 22 and script[:2] == b"\x00\x14") or len(script) == 23
        if not is_key:  # GetKeyForDestination: P2PKH, P2WPKH, P2SH(-P2WPKH) only
            raise RpcError(RpcCode.TYPE_ERROR, "Address does not refer to a key")
        raise RpcError(RpcCode.WALLET_ERROR, f"Private key for address {address} is not known")
    return encode_secret(pair.secret.to_bytes(32, "big"), call.node.params.addresses)


@rpc("wallet", args=[required("filename", Kind.STR, "The filename with path (absolute path "
                                                    "recommended)")],
     wallet=True,
     description="Dumps all wallet keys in a human-readable format to a server-side file. This "
                 "does not allow overwriting existing files. Elements: the master private "
                 "blinding key is written too (a wallet is recovered from its HD seed and that "
                 "key).\nNote: This command is only compatible with legacy wallets.",
     result='{\n  "filename" : "str"    (string) The filename with full absolute path\n}',
     examples=('"test"',))
def dumpwallet(call: Call, filename: str) -> dict[str, str]:
    wallet = call.wallet
    _legacy(wallet)
    path = os.path.abspath(filename)
    if os.path.exists(path):
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"{path} already exists. If you are sure this is what you want, move it "
                       "out of the way first")
    params = call.node.params.addresses
    keys = wallet.wallet.keys
    tip = call.node.tip
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = ["# Wallet dump created by Elements Core (ctplugin node)",
             f"# * Created on {now}",
             f"# * Best block at time of backup was {tip.height} ({tip.hash[::-1].hex()}),"]
    master = keys.master
    if master is not None and wallet.wallet.derives_keys:
        lines.append(f"# extended private masterkey: {master.encode(params)}")
    lines += [f"# Master private blinding key: {keys.master_blinding_key.hex()}", ""]
    stamp = datetime.fromtimestamp(0, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if master is not None and keys.scheme is HDScheme.LEGACY and wallet.wallet.derives_keys:
        seed_key = encode_secret(keys.seed, params)
        seed_pub = ct.base_mul(int.from_bytes(keys.seed, "big")).to_bytes()
        seed_address = _address(call, p2wpkh_script(seed_pub))
        lines.append(f"{seed_key} {stamp} hdseed=1 # addr={seed_address}")
    seen = set()
    for pair in sorted(keys.pairs(), key=lambda p: (p.index is None, p.index or 0)):
        if pair.pubkey in seen:
            continue
        seen.add(pair.pubkey)
        addresses = ",".join(_address(call, p.script_pubkey) for p in keys.pairs()
                             if p.pubkey == pair.pubkey and p.kind != P2TR)
        label = wallet.labels.get(pair.script_pubkey)
        if label is not None:
            tag = f"label={label}"
        elif wallet.is_change(pair.script_pubkey):
            tag = "change=1"
        else:
            tag = "reserve=1"
        origin = (f" hdkeypath={format_path(pair.path, apostrophe=True)}" if pair.path
                  else "")
        lines.append(f"{encode_secret(pair.secret.to_bytes(32, 'big'), params)} {stamp} {tag} "
                     f"# addr={addresses}{origin}")
    for script in sorted(wallet.watch_only):
        lines.append(f"{script.hex()} 0 script=1 # addr=")
    lines += ["", "# End of dump", ""]
    try:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write("\n".join(lines))
    except OSError as exc:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"Cannot open wallet dump file: {exc}") \
            from None
    return {"filename": path}


@rpc("wallet", args=[optional("newkeypool", Kind.BOOL, True, "Whether to flush old unused "
                              "addresses, including change addresses, from the keypool and "
                              "regenerate it."),
                     optional("seed", Kind.STR, None, "The WIF private key to use as the new "
                              "HD seed.", "random seed")],
     wallet=True,
     description="Set or generate a new HD wallet seed. Keys handed out before stay the "
                 "wallet's; new addresses come from the new seed (m/0'/0'/i', change among "
                 "them).\nNote: This command is only compatible with legacy wallets.",
     result="null    (json null)", examples=('', 'false', 'true "wifkey"'))
def sethdseed(call: Call, newkeypool: bool, seed: str | None) -> None:
    wallet = call.wallet
    _legacy(wallet)
    if not wallet.wallet.private_keys:
        raise RpcError(RpcCode.WALLET_ERROR,
                       "Cannot set a HD seed to a wallet with private keys disabled")
    if wallet.wallet.keys.scheme is not HDScheme.LEGACY:
        raise RpcError(RpcCode.WALLET_ERROR, "Cannot set an HD seed on a non-HD wallet. Use the "
                                             "upgradewallet RPC in order to upgrade a non-HD "
                                             "wallet to HD")
    if seed is None:
        secret = 0
        while not 0 < secret < N:
            secret = int.from_bytes(os.urandom(32), "big")
    else:
        try:
            raw, compressed = decode_secret(seed, call.node.params.addresses)
        except EncodingError:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid private key") from None
        if not compressed:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid private key")
        secret = int.from_bytes(raw, "big")
        pubkey = ct.base_mul(secret).to_bytes()
        if pubkey in wallet.wallet.keys.imported:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                           "Already have this key (either as an HD seed or as a loose private "
                           "key)")
    wallet.set_seed(secret.to_bytes(32, "big"))


@rpc("wallet", args=[optional("newsize", Kind.INT, None, "The new keypool size",
                              "-keypool")],
     wallet=True, description="Fills the keypool: keys derived ahead of the last one handed "
                              "out, so payments to them are found.",
     result="null    (json null)", examples=("", "100"))
def keypoolrefill(call: Call, newsize: int | None) -> None:
    wallet = call.wallet
    if newsize is not None and newsize < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Invalid parameter, expected valid size.")
    if newsize is not None and newsize > MAX_KEYPOOL:  # Core would derive them all, for hours
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"Invalid parameter, a keypool above {MAX_KEYPOOL} keys is not supported")
    size = max(newsize or wallet.wallet.lookahead, 1)
    wallet.wallet.keys.extend(wallet.wallet.next_key + size)
    wallet.wallet.keys.extend(wallet.wallet.next_change + size, internal=True)


@rpc("wallet", args=[required("nrequired", Kind.INT, "The number of required signatures out of "
                                                     "the n keys or addresses."),
                     required("keys", Kind.ARR, "The bitcoin addresses or hex-encoded public "
                                                "keys"),
                     optional("label", Kind.STR, "", "A label to assign the addresses to."),
                     optional("address_type", Kind.STR, None, "The address type to use. "
                              "Options are \"legacy\", \"p2sh-segwit\", and \"bech32\".",
                              "set by -addresstype")],
     wallet=True,
     description="Add an nrequired-to-sign multisignature address to the wallet (watched, "
                 "with its redeem script).\nNote: This command is only compatible with legacy "
                 "wallets.",
     result='{\n  "address" : "str",         (string) The value of the new multisig address\n'
            '  "redeemScript" : "hex",    (string) The string value of the hex-encoded '
            'redemption script\n  "descriptor" : "str"       (string) The descriptor for '
            'this multisig\n}',
     examples=('2 "[\\"2dv4oTKjmi3TF6dRq2TmasMdNtTeuqHNcPb\\",\\"2drNifUyWj5D8UPrAJtuQjUyPSUYpE4g'
               'b7E\\"]"',))
def addmultisigaddress(call: Call, nrequired: int, keys: list[Any], label: str,
                       address_type: str | None) -> dict[str, str]:
    wallet = call.wallet
    _legacy(wallet)
    label = _label(label)
    kind = address_type if address_type is not None else "bech32"
    if kind == "bech32m":
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "Bech32m multisig addresses cannot be created with legacy wallets")
    if kind not in ("legacy", "p2sh-segwit", "bech32"):
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, f"Unknown address type '{kind}'")
    pubkeys = []
    for item in keys:
        if not isinstance(item, str):
            raise RpcError(RpcCode.TYPE_ERROR, "JSON value is not a string as expected")
        pubkeys.append(_multisig_key(call, wallet, item))
    if not 1 <= nrequired <= len(pubkeys):
        if nrequired < 1:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "a multisignature address must require at least one key to redeem")
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"not enough keys supplied (got {len(pubkeys)} keys, but need at least "
                       f"{nrequired} to redeem)")
    if len(pubkeys) > 16:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Number of keys involved in the multisignature "
                                                  "address creation > 16\nReduce the number")
    multi = (bytes((0x50 + nrequired,)) + b"".join(bytes((33,)) + k for k in pubkeys)
             + bytes((0x50 + len(pubkeys), 0xAE)))
    inner = f"multi({nrequired},{','.join(k.hex() for k in pubkeys)})"
    if kind == "legacy":
        script, redeem, witness, desc = p2sh_script(hash160(multi)), multi, None, f"sh({inner})"
    else:
        wsh = b"\x00\x20" + sha256(multi)
        if kind == "bech32":
            script, redeem, witness, desc = wsh, None, multi, f"wsh({inner})"
        else:
            script, redeem, witness = p2sh_script(hash160(wsh)), wsh, multi
            desc = f"sh(wsh({inner}))"
    wallet.import_watch_only([script], label)
    parsed = parse_descriptor(desc, call.node.params.addresses)
    wallet.record_descriptor(parsed.to_string(call.node.params.addresses),
                             {"timestamp": int(time.time()), "range": None},
                             {script: (redeem, witness)})
    return {"address": _address(call, script), "redeemScript": (redeem or witness or b"").hex(),
            "descriptor": parsed.to_string(call.node.params.addresses)}


def _multisig_key(call: Call, wallet: NodeWallet, item: str) -> bytes:
    """A hex public key, or an address of the wallet whose key it knows (AddrToPubKey)."""
    try:
        dest = decode_destination(item, call.node.params.addresses)
    except EncodingError:
        dest = None
    if dest is None:
        try:
            return _pubkey(item)
        except RpcError:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, f"Invalid public key: {item}") \
                from None
    pair = wallet.wallet.keys.owner_of(dest.script_pubkey)
    if pair is None:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, f"{item} does not refer to a key")
    return pair.pubkey


# --- descriptor wallets -------------------------------------------------------------------------


def _range(value: Any) -> tuple[int, int]:
    """ParseDescriptorRange: an end (0..end) or [begin, end]."""
    if isinstance(value, int) and not isinstance(value, bool):
        begin, end = 0, value
    elif (isinstance(value, list) and len(value) == 2
          and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        begin, end = value
    else:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Range must be specified as end or as [begin,end]")
    if begin < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Range should be greater or equal than 0")
    if begin > end:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Range specified as [begin,end] must not have begin after end")
    if end - begin >= MAX_RANGE:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Range is too large")
    return begin, end


def _import_descriptor(call: Call, wallet: NodeWallet, request: Any) -> tuple[list[str], int]:
    """One importdescriptors request (ProcessDescriptorImport): the warnings and the
    timestamp it rescans from; RpcError for a refused request."""
    if not isinstance(request, dict):
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid request: expected an object")
    if "desc" not in request or not isinstance(request["desc"], str):
        raise RpcError(RpcCode.TYPE_ERROR, "Descriptor not found.")
    if "timestamp" not in request:
        raise RpcError(RpcCode.TYPE_ERROR, "Missing required timestamp field for key")
    stamp = request["timestamp"]
    if stamp == "now":
        timestamp = int(time.time())
    elif isinstance(stamp, int) and not isinstance(stamp, bool):
        timestamp = stamp
    else:
        raise RpcError(RpcCode.TYPE_ERROR, f"Expected number or \"now\" timestamp value for key. "
                                           f"got type {type(stamp).__name__}")
    params = call.node.params.addresses
    try:
        desc = parse_descriptor(request["desc"], params, require_checksum=True)
    except DescriptorError as exc:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, str(exc)) from None
    active = bool(request.get("active", False))
    internal = bool(request.get("internal", False))
    label = request.get("label", "")
    if not isinstance(label, str):
        raise RpcError(RpcCode.TYPE_ERROR, "label must be a string")
    if "range" in request and not desc.is_range:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Range should not be specified for an un-ranged descriptor")
    warnings = []
    if desc.is_range:
        if "range" in request:
            begin, end = _range(request["range"])
        else:
            warnings.append("Range not given, using default keypool range")
            begin, end = 0, wallet.wallet.lookahead - 1
    else:
        begin, end = 0, 0
    if "range" in request and "label" in request:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Ranged descriptors should not have a label")
    if internal and "label" in request:
        raise RpcError(RpcCode.INVALID_PARAMETER, "Internal addresses should not have a label")
    if active:
        raise RpcError(RpcCode.WALLET_ERROR, "Active descriptors are not supported: new "
                                             "addresses come from the wallet's own BIP32 "
                                             "accounts (listdescriptors)")
    if not wallet.wallet.private_keys and any(k.has_private for k in desc.all_keys()):
        raise RpcError(RpcCode.WALLET_ERROR, NO_PRIVATE_KEYS)
    if not desc.has_private_keys and desc.is_solvable and desc.all_keys():
        warnings.append("Not all private keys provided. Some wallet functionality may return "
                        "unexpected errors")
    solving = _apply(wallet, desc, begin, end, label or None)
    wallet.record_descriptor(desc.to_string(params, private=False),
                             {"timestamp": timestamp, "range": [begin, end] if desc.is_range
                              else None, "internal": internal, "next": end + 1}, solving)
    return warnings, timestamp


def _apply(wallet: NodeWallet, desc: Descriptor, begin: int, end: int, label: str | None
           ) -> dict[bytes, tuple[bytes | None, bytes | None]]:
    """Own (with keys) or watch (without) every script of ``desc`` in [begin, end]; returns
    the redeem / witness scripts of its P2SH / P2WSH outputs."""
    solving: dict[bytes, tuple[bytes | None, bytes | None]] = {}
    kinds: dict[str, AddressKind] = {"p2pkh": P2PKH, "p2wpkh": P2WPKH,
                                     "p2sh-p2wpkh": P2SH_P2WPKH, "p2tr": P2TR}
    for position in range(begin, end + 1):
        for expanded in desc.expand(position):
            secrets_ = [k.secret for k in expanded.keys if k.secret is not None]
            single = len(expanded.keys) == 1 and len(secrets_) == 1
            kind = kinds.get(expanded.kind)
            if single and kind is not None:
                wallet.import_keys(secrets_, label, (kind,))
                continue
            if expanded.redeem_script is not None or expanded.witness_script is not None:
                solving[expanded.script_pubkey] = (expanded.redeem_script,
                                                   expanded.witness_script)
            wallet.import_watch_only([expanded.script_pubkey], label)
    return solving


@rpc("wallet", args=[required("requests", Kind.ARR, "Data to be imported: objects with desc, "
                              "active, range, next_index, timestamp, internal, label")],
     wallet=True,
     description="Import descriptors. This will trigger a rescan of the blockchain based on "
                 "the earliest timestamp of all descriptors being imported (0: from genesis; "
                 "\"now\": none). Descriptors with all their private keys make their scripts "
                 "spendable; others are watched.\nNote: This call can only be used with "
                 "descriptor wallets.",
     result='[\n  {\n    "success" : true|false,\n    "warnings" : [ "str", ... ],    (json '
            'array, optional)\n    "error" : { "code" : n, "message" : "str" }    (json '
            'object, optional)\n  },\n  ...\n]',
     examples=("'[{ \"desc\": \"<my descriptor>\", \"timestamp\":1455191478, \"internal\": "
               "true }]'",))
def importdescriptors(call: Call, requests: list[Any]) -> list[dict[str, Any]]:
    wallet = call.wallet
    _descriptor_wallet(wallet, "importdescriptors")
    results: list[dict[str, Any]] = []
    earliest: int | None = None
    for request in requests:
        try:
            warnings, timestamp = _import_descriptor(call, wallet, request)
        except RpcError as exc:
            results.append({"success": False, "error": {"code": int(exc.code),
                                                        "message": exc.message}})
            continue
        earliest = timestamp if earliest is None else min(earliest, timestamp)
        entry: dict[str, Any] = {"success": True}
        if warnings:
            entry["warnings"] = warnings
        results.append(entry)
    if earliest is not None and earliest < time.time() - 7200:  # Core's TIMESTAMP_WINDOW
        wallet.rescan(call.node, _first_height_after(call, earliest - 7200))
    elif earliest is not None:
        wallet.scan_mempool(call.node)
    return results


def _first_height_after(call: Call, timestamp: int) -> int:
    """The first block whose header time is at least ``timestamp`` (a rescan's start, as
    Core's FindFirstBlockWithTimeAndHeight)."""
    node = call.node
    for height in range(node.tip.height + 1):
        block_hash = node.block_hash(height)
        info = node.block_info(block_hash) if block_hash is not None else None
        if info is not None and info.header.time >= timestamp:
            return height
    return node.tip.height + 1


@rpc("wallet", args=[optional("private", Kind.BOOL, False, "Show private descriptors.")],
     wallet=True,
     description="List descriptors imported into a descriptor-enabled wallet, and the wallet's "
                 "own BIP44/49/84/86 accounts (their external and internal chains, active).",
     result='{\n  "wallet_name" : "str",\n  "descriptors" : [\n    {\n      "desc" : "str",\n'
            '      "timestamp" : n,\n      "active" : true|false,\n      "internal" : '
            'true|false,    (boolean, optional)\n      "range" : [ n, n ],    (json array, '
            'optional)\n      "next" : n,    (numeric, optional)\n      "next_index" : n    '
            '(numeric, optional)\n    },\n    ...\n  ]\n}',
     examples=("", "true"))
def listdescriptors(call: Call, private: bool) -> dict[str, Any]:
    wallet = call.wallet
    _descriptor_wallet(wallet, "listdescriptors")
    params = call.node.params.addresses
    keys = wallet.wallet.keys
    out = []
    if keys.master is not None and keys.scheme is HDScheme.DESCRIPTORS \
            and wallet.wallet.derives_keys:
        for kind in ADDRESS_KINDS:
            for internal in (False, True):
                next_index = wallet.wallet.next_change if internal else wallet.wallet.next_key
                out.append({"desc": account_descriptor(keys, kind, params, private, internal),
                            "timestamp": 0, "active": True, "internal": internal,
                            "range": [0, keys.derived(internal) - 1],
                            "next": next_index, "next_index": next_index})
    for text, record in sorted(wallet.descriptors.items()):
        entry: dict[str, Any] = {"desc": text, "timestamp": record.get("timestamp", 0),
                                 "active": False}
        if record.get("range") is not None:
            entry["internal"] = bool(record.get("internal", False))
            entry["range"] = record["range"]
            entry["next"] = record.get("next", 0)
            entry["next_index"] = record.get("next", 0)
        out.append(entry)
    out.sort(key=lambda d: str(d["desc"]))  # Core: sorted by the descriptor's string
    return {"wallet_name": wallet.name, "descriptors": out}


# --- descriptors without a wallet ---------------------------------------------------------------


def _parse(call: Call, text: str, *, require_checksum: bool = False) -> Descriptor:
    try:
        return parse_descriptor(text, call.node.params.addresses,
                                require_checksum=require_checksum)
    except DescriptorError as exc:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, str(exc)) from None


@rpc("util", args=[required("descriptor", Kind.STR, "The descriptor.")],
     description="Analyses a descriptor.",
     result='{\n  "descriptor" : "str",    (string) The descriptor in canonical form, without '
            'private keys\n  "checksum" : "str",    (string) The checksum for the input '
            'descriptor\n  "isrange" : true|false,    (boolean) Whether the descriptor is '
            'ranged\n  "issolvable" : true|false,    (boolean) Whether the descriptor is '
            'solvable\n  "hasprivatekeys" : true|false    (boolean) Whether the input '
            'descriptor contained at least one private key\n}',
     examples=('"wpkh([d34db33f/84h/0h/0h]0279be667ef9dcbbac55a06295Ce870b07029Bfcdb2dce28d959'
               'f2815b16f81798)"',))
def getdescriptorinfo(call: Call, descriptor: str) -> dict[str, Any]:
    desc = _parse(call, descriptor)
    body = descriptor.partition("#")[0]
    return {"descriptor": desc.to_string(call.node.params.addresses),
            "checksum": descriptor_checksum(body), "isrange": desc.is_range,
            "issolvable": desc.is_solvable,
            "hasprivatekeys": any(k.has_private for k in desc.all_keys())}


@rpc("util", args=[required("descriptor", Kind.STR, "The descriptor."),
                   optional("range", Kind.ARR_OR_OBJ, None, "If a ranged descriptor is used, "
                            "this specifies the end or the range (in [begin,end] notation) to "
                            "derive.")],
     description="Derives one or more addresses corresponding to an output descriptor (with "
                 "its checksum).",
     result='[\n  "str",    (string) the derived addresses\n  ...\n]',
     examples=('"wpkh([d34db33f/84h/0h/0h]tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qk'
               'jcJyJUGLnL4qHHoVvao8Mba6jYy4c4n6yX8tD3qeJ6yLk1gnAdxhVrFnZrf/0/*)#qwtvlu35" '
               '"[0,2]"',))
def deriveaddresses(call: Call, descriptor: str, range: Any) -> list[str]:
    desc = _parse(call, descriptor, require_checksum=True)
    if range is not None and not desc.is_range:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Range should not be specified for an un-ranged descriptor")
    if desc.is_range and range is None:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Range must be specified for a ranged descriptor")
    begin, end = _range(range) if range is not None else (0, 0)
    if desc.func == "combo":
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "Descriptor does not have a corresponding address")
    addresses = []
    for position in _positions(begin, end):
        for expanded in desc.expand(position):
            try:
                addresses.append(_address(call, expanded.script_pubkey,
                                          expanded.blinding_pubkey))
            except EncodingError:
                raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                               "Descriptor does not have a corresponding address") from None
    return addresses


def _positions(begin: int, end: int) -> range:
    return range(begin, end + 1)  # the builtin, shadowed by deriveaddresses' argument name


# --- the master blinding key --------------------------------------------------------------------


@rpc("wallet", args=[required("hexkey", Kind.STR, "The master blinding key in hex")],
     wallet=True,
     description="Import a master blinding key for the wallet: the blinding key of every "
                 "script follows from it (HMAC-SHA256 of the script keyed by it), so outputs "
                 "blinded to the addresses another wallet with this key handed out unblind.",
     result="null    (json null)", examples=('"<hex>"',))
def importmasterblindingkey(call: Call, hexkey: str) -> None:
    try:
        key = bytes.fromhex(hexkey)
    except ValueError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid hexadecimal for key") from None
    if len(key) != 32:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid hexadecimal key length, must "
                                                       "be 64 characters long.")
    wallet = call.wallet
    wallet.set_master_blinding_key(key)
    wallet.rescan(call.node, 0)


# --- issuance blinding keys ---------------------------------------------------------------------


def _issuance_input(call: Call, wallet: NodeWallet, txid: str, vin: Any) -> tuple[WalletTx, int]:
    """(the wallet transaction, vin) of an issuance input, with elementsd's errors."""
    if not isinstance(txid, str) or len(txid) != 64:
        raise RpcError(RpcCode.TYPE_ERROR, "First argument must be a txid string")
    try:
        txid_bytes = bytes.fromhex(txid)[::-1]
    except ValueError:
        raise RpcError(RpcCode.TYPE_ERROR, "First argument must be a txid string") from None
    if not isinstance(vin, int) or isinstance(vin, bool):
        raise RpcError(RpcCode.TYPE_ERROR, "vin must be an integer")
    wtx = wallet.ledger.get(txid_bytes)
    if wtx is None:
        raise RpcError(RpcCode.WALLET_ERROR, "Transaction is unknown to wallet.")
    if not 0 <= vin < len(wtx.tx.inputs):
        raise RpcError(RpcCode.WALLET_ERROR, "Transaction is in wallet but vin does not exist")
    if wtx.tx.inputs[vin].issuance is None:
        raise RpcError(RpcCode.WALLET_ERROR, "Transaction input has no issuance")
    return wtx, vin


@rpc("wallet", args=[required("txid", Kind.HEX, "The transaction id of the issuance"),
                     required("vin", Kind.INT, "The input number of the issuance in the "
                                               "transaction.")],
     wallet=True, description="Dumps the private blinding key for an asset issuance in wallet.",
     result='"hex"    (string) the issuance blinding key', examples=('"<txid>", 0',))
def dumpissuanceblindingkey(call: Call, txid: str, vin: int) -> str:
    wallet = call.wallet
    wtx, vin = _issuance_input(call, wallet, txid, vin)
    txin = wtx.tx.inputs[vin]
    assert txin.issuance is not None  # _issuance_input checked it
    opened = (isinstance(txin.issuance.amount, int)
              or wallet.open_issuance_amount(txin) is not None)
    if not opened:
        raise RpcError(RpcCode.WALLET_ERROR,
                       "Unable to unblind issuance with wallet blinding key.")
    secret = wallet.issuance_blinding_secret(txin.prevout_hash, txin.prevout_index)
    return secret.to_bytes(32, "big").hex()


@rpc("wallet", args=[required("txid", Kind.HEX, "The transaction id of the issuance"),
                     required("vin", Kind.INT, "The input number of the issuance in the "
                                               "transaction."),
                     required("blindingkey", Kind.HEX, "The blinding key in hex")],
     wallet=True,
     description="Imports a private blinding key in hex for an asset issuance. Unlike "
                 "`importblindingkey`, the key is stored without verifying it matches the "
                 "issuance blinding pubkey.",
     result="null    (json null)", examples=('"<txid>" 0 "<blindingkey>"',))
def importissuanceblindingkey(call: Call, txid: str, vin: int, blindingkey: str) -> None:
    wallet = call.wallet
    if len(blindingkey) != 64:
        raise RpcError(RpcCode.TYPE_ERROR, "blinding key must be a hex string of length 64")
    try:
        key = bytes.fromhex(blindingkey)
    except ValueError:
        raise RpcError(RpcCode.TYPE_ERROR, "blinding key must be a hex string of length 64") \
            from None
    wtx, vin = _issuance_input(call, wallet, txid, vin)
    secret = int.from_bytes(key, "big")
    if not 0 < secret < N:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid blinding key")
    txin = wtx.tx.inputs[vin]
    wallet.import_blinding_key(issuance_blinding_script(txin.prevout_hash,
                                                        txin.prevout_index), secret)
