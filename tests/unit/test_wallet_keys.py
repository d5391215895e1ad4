"""elementsd's wallet keys (regtest.wallet.keys, ctplugin.bip32): BIP32 against its published
vector, Core's legacy and descriptor derivation paths, imported keys, blinding keys derived from
the master blinding key as Elements' GetBlindingKey does, the issuance blinding script, base58
addresses of the framework's deterministic keys, and the wallet's P2PKH / P2SH-P2WPKH
signatures checked by the script interpreter."""

from __future__ import annotations

import hmac

import pytest

from ctplugin import bip32
from ctplugin.bip32 import HARDENED, decode_extkey, master_key, parse_path
from ctplugin.elements import Transaction, TxIn, TxOut
from ctplugin.elements.address import (
    BITCOIN_MAIN,
    decode_secret,
    encode_destination,
    p2sh_script,
)
from ctplugin.errors import EncodingError
from ctplugin.hashes import hash160, sha256
from ctplugin.script import flags
from ctplugin.script.checker import checker_for
from ctplugin.script.interpreter import verify_input
from ctplugin.script.sighash import PrecomputedTransaction
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from regtest.params import select_chain
from regtest.wallet.keys import (
    P2PKH,
    P2SH_P2WPKH,
    P2TR,
    P2WPKH,
    HDScheme,
    KeyChain,
    format_path,
    issuance_blinding_script,
)
from regtest.wallet.signing import script_sig_template, sign_transaction, witness_template

ELEMENTS = select_chain("elementsregtest")
ADDRESSES = ELEMENTS.addresses

# BIP32 test vector 1
SEED1 = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
XPRV1 = ("xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRN"
         "NU3TGtRBeJgk33yuGBxrMPHi")
XPUB1 = ("xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD"
         "265TMg7usUDFdp6W1EGMcet8")
XPUB1_CHAIN = ("xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro4"
               "9S8yGasTvXEYBVPamhGW6cFJodrTHy")

# the framework's deterministic keys (test_node.py PRIV_KEYS): WIF and P2PKH address
FRAMEWORK_KEYS = [
    ("cQ1PxVTn5J3qCzUqXzpNeHiPVxZcwwaJkFmZcokescXwmHWAdBoe", "2doncj41FX6LahE2aspuLuQcnmgrLtfvvma"),
    ("cRuGzyZjb5zQQg1TbAiGK1UJBuK1UQHaFf4DXBUcPZNZ3WomNoxW", "2dv4oTKjmi3TF6dRq2TmasMdNtTeuqHNcPb"),
    ("cSYxv1JKDNrSKnm2fzNj1uFUkr7HqTQHvU8PCAZ1mWNwYB5LwZVu", "2drNifUyWj5D8UPrAJtuQjUyPSUYpE4gb7E"),
]
SEED = bytes(range(1, 33))
MASTER_BLINDING = bytes(range(32, 64))


def test_bip32_vector_1() -> None:
    master = master_key(SEED1)
    assert master.encode(BITCOIN_MAIN) == XPRV1
    assert master.neuter().encode(BITCOIN_MAIN) == XPUB1
    child = master.derive_path(parse_path("m/0'/1/2h/2/1000000000"))
    assert child.neuter().encode(BITCOIN_MAIN) == XPUB1_CHAIN
    assert decode_extkey(XPRV1, BITCOIN_MAIN) == master
    # public derivation of the non-hardened tail agrees with private derivation
    hardened = master.derive_path(parse_path("m/0'/1/2'"))
    assert hardened.neuter().derive_path((2, 1000000000)).pubkey == child.pubkey


@pytest.mark.parametrize("text", ["m/1/x", "m/4294967296", "m/-1"])
def test_bad_paths_are_refused(text: str) -> None:
    with pytest.raises(EncodingError):
        parse_path(text)


def test_legacy_chain_is_core_s_hd_chain() -> None:
    keys = KeyChain(SEED, scheme=HDScheme.LEGACY, master_blinding_key=MASTER_BLINDING)
    master = master_key(SEED)
    pair = keys.key(3, P2WPKH)
    assert pair.path == parse_path("m/0'/0'/3'")
    assert format_path(pair.path, apostrophe=True) == "m/0'/0'/3'"
    assert pair.secret == master.derive_path(parse_path("m/0'/0'/3'")).secret
    # one key serves every script type in a legacy wallet
    assert {keys.key(3, kind).pubkey for kind in (P2WPKH, P2PKH, P2SH_P2WPKH, P2TR)} == {
        pair.pubkey}
    assert keys.master_fingerprint == master.fingerprint
    change = keys.key(3, P2WPKH, internal=True)
    assert change.internal and change.path == parse_path("m/0'/1'/3'")
    assert keys.owner_of(change.script_pubkey) == change
    seed_pub = ct.base_mul(int.from_bytes(SEED, "big")).to_bytes()
    assert keys.seed_id == hash160(seed_pub)


@pytest.mark.parametrize(("kind", "purpose"), [(P2PKH, 44), (P2SH_P2WPKH, 49), (P2WPKH, 84),
                                               (P2TR, 86)])
def test_descriptor_chain_uses_the_bip_accounts(kind: str, purpose: int) -> None:
    keys = KeyChain(SEED, scheme=HDScheme.DESCRIPTORS, master_blinding_key=MASTER_BLINDING)
    pair = keys.key(2, kind)  # type: ignore[arg-type]
    assert format_path(pair.path or (), apostrophe=False) == f"m/{purpose}h/1h/0h/0/2"
    assert pair.secret == master_key(SEED).derive_path(pair.path or ()).secret


def test_blinding_keys_follow_the_master_blinding_key() -> None:
    keys = KeyChain(SEED, scheme=HDScheme.DESCRIPTORS, master_blinding_key=MASTER_BLINDING)
    pair = keys.key(0, P2WPKH)
    expected = int.from_bytes(hmac.digest(MASTER_BLINDING, pair.script_pubkey, "sha256"), "big")
    assert pair.blinding_secret == expected
    other = bytes(32 * [7])
    keys.set_master_blinding_key(other)
    moved = keys.owner_of(pair.script_pubkey)
    assert moved is not None and moved.blinding_secret == int.from_bytes(
        hmac.digest(other, pair.script_pubkey, "sha256"), "big")
    assert keys.key(0, P2WPKH) == moved
    with pytest.raises(EncodingError):
        keys.set_master_blinding_key(b"short")


def test_imported_keys_own_what_importprivkey_owns() -> None:
    keys = KeyChain(SEED, scheme=HDScheme.LEGACY, master_blinding_key=MASTER_BLINDING)
    for wif, address in FRAMEWORK_KEYS:
        secret, compressed = decode_secret(wif, ADDRESSES)
        assert compressed
        added = keys.import_secret(int.from_bytes(secret, "big"))
        assert sorted(p.kind for p in added) == sorted((P2PKH, P2WPKH, P2SH_P2WPKH))
        p2pkh = next(p for p in added if p.kind == P2PKH)
        assert encode_destination(p2pkh.script_pubkey, ADDRESSES) == address
        assert p2pkh.index is None and p2pkh.path is None
    assert keys.import_secret(int.from_bytes(decode_secret(FRAMEWORK_KEYS[0][0],
                                                           ADDRESSES)[0], "big")) == []


def test_replacing_the_seed_keeps_handed_out_keys() -> None:
    keys = KeyChain(SEED, scheme=HDScheme.LEGACY, master_blinding_key=MASTER_BLINDING)
    used = keys.key(0, P2WPKH)
    unused = keys.key(5, P2WPKH)
    keys.replace_seed(bytes(range(2, 34)), used=1)
    assert keys.owner_of(used.script_pubkey) is not None
    assert keys.owner_of(unused.script_pubkey) is None
    assert keys.key(0, P2WPKH).pubkey != used.pubkey


@pytest.mark.parametrize(("index", "tail"), [(0, "00"), (1, "51"), (16, "60"), (17, "0111"),
                                             (128, "028000"), (0xFFFFFFFF, "05ffffffff00")])
def test_issuance_blinding_script_pushes_the_index_as_a_script_number(index: int,
                                                                      tail: str) -> None:
    txid = bytes(range(32))
    assert issuance_blinding_script(txid, index) == b"\x6a\x20" + txid + bytes.fromhex(tail)


@pytest.mark.parametrize("kind", [P2PKH, P2SH_P2WPKH, P2WPKH])
def test_wallet_signatures_verify(kind: str) -> None:
    keys = KeyChain(SEED, scheme=HDScheme.LEGACY, master_blinding_key=MASTER_BLINDING)
    pair = keys.key(0, kind)  # type: ignore[arg-type]
    asset = ELEMENTS.policy_asset
    spent = TxOut(asset=asset, value=100_000, script_pubkey=pair.script_pubkey)
    tx = Transaction(version=2, inputs=(TxIn(prevout_hash=bytes(32), prevout_index=0),),
                     outputs=(TxOut(asset=asset, value=99_000, script_pubkey=b"\x51"),
                              TxOut(asset=asset, value=1_000)))
    signed = sign_transaction(tx, [spent], keys, ELEMENTS.genesis_hash, lambda: bytes(32))
    txin = signed.inputs[0]
    assert len(txin.script_sig) <= len(script_sig_template(pair.script_pubkey))
    assert len(txin.script_witness) == len(witness_template(pair.script_pubkey))
    pre = PrecomputedTransaction(signed, [spent], ELEMENTS.genesis_hash)
    verify_input(pre, 0, int(flags.STANDARD), checker_for(pre, 0, int(flags.STANDARD)))


@pytest.mark.parametrize("kind", ["wsh", "sh-wsh", "sh"])
def test_multisig_outputs_of_our_keys_are_signed(kind: str) -> None:
    keys = KeyChain(SEED, scheme=HDScheme.LEGACY, master_blinding_key=MASTER_BLINDING)
    pubkeys = [keys.key(i, P2WPKH).pubkey for i in range(3)]
    multisig = b"\x52" + b"".join(b"\x21" + k for k in pubkeys) + b"\x53\xae"
    wsh = b"\x00\x20" + sha256(multisig)
    script, redeem = {"wsh": (wsh, None), "sh-wsh": (p2sh_script(hash160(wsh)), wsh),
                      "sh": (p2sh_script(hash160(multisig)), multisig)}[kind]
    assert keys.add_multisig(script, multisig, witness=kind != "sh",
                             redeem_script=redeem) is not None
    stranger = KeyChain(bytes(range(3, 35)), scheme=HDScheme.LEGACY,
                        master_blinding_key=MASTER_BLINDING)
    assert stranger.add_multisig(script, multisig, witness=True, redeem_script=redeem) is None
    asset = ELEMENTS.policy_asset
    spent = TxOut(asset=asset, value=100_000, script_pubkey=script)
    tx = Transaction(version=2, inputs=(TxIn(prevout_hash=bytes(32), prevout_index=0),),
                     outputs=(TxOut(asset=asset, value=99_000, script_pubkey=b"\x51"),
                              TxOut(asset=asset, value=1_000)))
    signed = sign_transaction(tx, [spent], keys, ELEMENTS.genesis_hash, lambda: bytes(32))
    pre = PrecomputedTransaction(signed, [spent], ELEMENTS.genesis_hash)
    verify_input(pre, 0, int(flags.STANDARD), checker_for(pre, 0, int(flags.STANDARD)))


def test_child_secrets_are_the_library_s_children() -> None:
    """``ExtKey.child_secret`` (the keypool's fast path: one HMAC, no child key object) gives
    the secret of the library's derivation, hardened and not, at the index range's edges."""
    parent = master_key(SEED1).derive_path(parse_path("m/0'/1"))
    for index in (0, 1, 2, 1000000000, HARDENED - 1, HARDENED, HARDENED + 7, 2**32 - 1):
        assert parent.child_secret(index) == parent.derive(index).secret


def test_an_invalid_child_is_left_to_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    """BIP32: I_L >= n makes the child invalid; child_secret then answers as the library
    does rather than with a reduced key of its own."""
    parent = master_key(SEED1)
    expected = parent.derive(5).secret

    class _Overflowing:
        @staticmethod
        def digest(key: bytes, msg: bytes, digest: object) -> bytes:
            return N.to_bytes(32, "big") + bytes(32)  # I_L = n

    monkeypatch.setattr(bip32, "hmac", _Overflowing)
    assert parent.child_secret(5) == expected
