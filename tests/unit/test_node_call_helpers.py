"""The pure parts of the node calls (docs/node-rpc.md §1.8): message signing (Core's own
vector), the merkle block of gettxoutproof, key signing of every script kind checked by our
interpreter, scantxoutset's descriptors and createmultisig's rules."""

from __future__ import annotations

import base64
import os
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.elements import Transaction, TxIn, TxOut
from ctplugin.elements._speedups import merkle_root
from ctplugin.elements.address import decode_secret, p2pkh_script, p2sh_script
from ctplugin.elements.chainparams import ELEMENTS_REGTEST_ADDRESSES as ADDRESSES
from ctplugin.elements.merkleblock import block_header_end, build_proof, parse_proof
from ctplugin.elements.model import BlockHeader
from ctplugin.hashes import hash160, sha256, sha256d
from ctplugin.script.flags import STANDARD
from ctplugin.script.sighash import PrecomputedTransaction
from ctplugin.script.sign import MISSING_KEY, KeyStore, input_error, sign_input, with_input
from ctplugin.script.taproot import tweak_hash
from ctplugin.secp256k1 import ct
from rpc.errors import RpcError
from rpc.methods.util import multisig_destination, recover_pubkey, sign_message
from rpc.scriptjson import scan_scripts

GENESIS = bytes(32)
ASSET = bytes(range(32))


def header() -> BlockHeader:
    return BlockHeader(version=0x20000000, prev_hash=b"\x11" * 32, merkle_root=b"\x22" * 32,
                       time=1_700_000_000, height=5, challenge=b"\x51", solution=b"")


# --- messages -----------------------------------------------------------------------------------


def test_message_signature_is_cores() -> None:
    """Bitcoin Core's rpc_signmessagewithprivkey.py vector (regtest WIF: elementsregtest uses
    the same secret-key prefix)."""
    secret, compressed = decode_secret("cUeKHd5orzT3mz8P9pxyREHfsWtVfgsfDjiZZBcjUBAaGk1BTj7N",
                                       ADDRESSES)
    signature = sign_message(secret, compressed, "This is just a test message")
    assert signature == ("INbVnW4e6PeRmsv2Qgu8NuopvrVjkcxob+sX8OcZG0SALhWybUjzMLPdAsXI46YZGb0K"
                         "QTRii+wWIQzRpG/U+S0=")
    pubkey = ct.base_mul(secret).to_bytes()
    assert recover_pubkey(base64.b64decode(signature), "This is just a test message") == pubkey
    assert recover_pubkey(base64.b64decode(signature), "another message") != pubkey
    assert recover_pubkey(b"\x00" * 65, "x") is None
    assert recover_pubkey(base64.b64decode(signature)[:64], "x") is None


# --- merkle blocks ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40).flatmap(
    lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1), min_size=1))))
def test_merkle_block_round_trip(case: tuple[int, set[int]]) -> None:
    n, picked = case
    txids = [sha256d(i.to_bytes(4, "little")) for i in range(n)]
    wanted = {txids[i] for i in picked}
    proof = build_proof(header(), txids, wanted)
    parsed_header, count, matched, root = parse_proof(proof)
    assert parsed_header.serialize() == header().serialize() and count == n
    assert matched == [t for t in txids if t in wanted]  # in block order
    assert root == merkle_root(b"".join(txids))[0]


def test_header_lengths_of_real_blocks() -> None:
    """block_header_end walks legacy and dynamic-federation headers of elementsd's blocks to
    where the parser says they end; a cut header is a ParseError."""
    from ctplugin.elements import parse_block
    from ctplugin.errors import ParseError
    from harness.elements_vectors import load_entries
    from tests.conftest import FIXTURES

    seen = set()
    for entry in load_entries([FIXTURES / "elements_blocks.json"], "blocks"):
        raw = bytes.fromhex(entry["hex"])
        try:
            block = parse_block(raw)
        except ParseError:
            continue  # the fixtures' malformed blocks
        end = len(block.header.serialize())
        assert block_header_end(raw) == end
        with pytest.raises(ParseError):
            block_header_end(raw[:end - 1])
        seen.add(block.header.is_dynafed)
    assert seen == {False, True}


def test_merkle_block_refusals() -> None:
    txids = [sha256d(bytes([i])) for i in range(5)]
    proof = build_proof(header(), txids, {txids[3]})
    # a flipped hash gives another root (verifytxoutproof then answers [])
    flipped = bytearray(proof)
    flipped[-40] ^= 1
    assert parse_proof(bytes(flipped))[3] != parse_proof(proof)[3]
    # a transaction count the tree does not fit: no root (Core's ExtractMatches fails)
    end = len(header().serialize())
    wrong_count = proof[:end] + (0).to_bytes(4, "little") + proof[end + 4:]
    assert parse_proof(wrong_count)[3] is None
    from ctplugin.errors import ParseError
    with pytest.raises(ParseError):
        parse_proof(proof[:-1])
    with pytest.raises(ParseError):
        parse_proof(proof + b"\x00")


# --- signing ------------------------------------------------------------------------------------

SECRETS = [bytes([i]) * 32 for i in (7, 8, 9)]
PUBKEYS = [ct.base_mul(s).to_bytes() for s in SECRETS]


def spend(script: bytes, value: int = 100_000) -> tuple[Transaction, list[TxOut]]:
    spent = [TxOut(asset=ASSET, value=value, script_pubkey=script)]
    tx = Transaction(version=2, inputs=(TxIn(prevout_hash=b"\x33" * 32, prevout_index=1),),
                     outputs=(TxOut(asset=ASSET, value=value - 1000,
                                    script_pubkey=p2pkh_script(hash160(PUBKEYS[0]))),
                              TxOut(asset=ASSET, value=1000)), locktime=0)
    return tx, spent


def signed(tx: Transaction, spent: list[TxOut], store: KeyStore, hash_type: int = 1
           ) -> tuple[Transaction, str | None]:
    pre = PrecomputedTransaction(tx, spent, GENESIS)
    script_sig, witness = sign_input(pre, 0, store, hash_type, lambda: os.urandom(32))
    tx = replace(tx, inputs=(with_input(tx.inputs[0], script_sig, witness),))
    return tx, input_error(PrecomputedTransaction(tx, spent, GENESIS), 0, int(STANDARD))


def store_of(*indices: int, scripts: tuple[bytes, ...] = ()) -> KeyStore:
    store = KeyStore()
    for i in indices:
        store.add_key(SECRETS[i])
    for script in scripts:
        store.add_script(script)
    return store


MULTI = (b"\x52" + b"".join(b"\x21" + p for p in PUBKEYS[:2]) + b"\x52\xae")  # 2-of-2


@pytest.mark.parametrize("hash_type", [0x01, 0x02, 0x03, 0x81, 0x41, 0xC3])
@pytest.mark.parametrize("kind", ["p2pk", "p2pkh", "p2wpkh", "p2sh-p2wpkh", "p2sh", "p2wsh",
                                  "p2sh-p2wsh"])
def test_every_kind_signs_and_verifies(kind: str, hash_type: int) -> None:
    wpkh = b"\x00\x14" + hash160(PUBKEYS[0])
    wsh = b"\x00\x20" + sha256(MULTI)
    script, store = {
        "p2pk": (b"\x21" + PUBKEYS[0] + b"\xac", store_of(0)),
        "p2pkh": (p2pkh_script(hash160(PUBKEYS[0])), store_of(0)),
        "p2wpkh": (wpkh, store_of(0)),
        "p2sh-p2wpkh": (p2sh_script(hash160(wpkh)), store_of(0, scripts=(wpkh,))),
        "p2sh": (p2sh_script(hash160(MULTI)), store_of(0, 1, scripts=(MULTI,))),
        "p2wsh": (wsh, store_of(0, 1, scripts=(MULTI,))),
        "p2sh-p2wsh": (p2sh_script(hash160(wsh)), store_of(0, 1, scripts=(MULTI,))),
    }[kind]
    tx, spent = spend(script)
    done, error = signed(tx, spent, store, hash_type)
    assert error is None
    signatures = [item for item in (*done.inputs[0].script_witness,) if item[:1] == b"\x30"]
    if kind in ("p2pk", "p2pkh", "p2sh"):
        assert not done.inputs[0].script_witness
    else:
        assert signatures and {s[-1] for s in signatures} == {hash_type}


def test_multisig_is_completed_by_a_second_signer() -> None:
    tx, spent = spend(b"\x00\x20" + sha256(MULTI))
    half, error = signed(tx, spent, store_of(1, scripts=(MULTI,)))
    assert error is not None  # one of two signatures
    assert len([i for i in half.inputs[0].script_witness if i[:1] == b"\x30"]) == 1
    full, error = signed(half, spent, store_of(0, scripts=(MULTI,)))
    assert error is None
    # the order is the script's key order, whoever signed first
    witness = full.inputs[0].script_witness
    assert witness[0] == b"" and witness[-1] == MULTI and len(witness) == 4


def test_taproot_key_path_and_missing_keys() -> None:
    xonly = PUBKEYS[2][1:]
    output = ct.xonly_public_key(ct.taproot_tweak_secret(SECRETS[2], tweak_hash(xonly, None)))
    tx, spent = spend(b"\x51\x20" + output)
    done, error = signed(tx, spent, store_of(2), 0x00)
    assert error is None and len(done.inputs[0].script_witness[0]) == 64  # SIGHASH_DEFAULT
    done, error = signed(tx, spent, store_of(2), 0x83)
    assert error is None and done.inputs[0].script_witness[0][-1] == 0x83
    untouched, error = signed(tx, spent, store_of(0))
    assert untouched == tx and error is not None
    pre = PrecomputedTransaction(tx, spent, GENESIS)
    assert sign_input(pre, 0, store_of(2), 0x00, lambda: bytes(32),
                      all_spent_known=False) == (b"", ())  # no digest without every coin
    _, error = signed(*spend(p2pkh_script(hash160(PUBKEYS[0]))), store_of(1))
    assert error == MISSING_KEY


# --- scantxoutset descriptors and createmultisig ------------------------------------------------


def test_scan_descriptors() -> None:
    key = PUBKEYS[0].hex()
    [(script, desc)] = scan_scripts(f"wpkh({key})", ADDRESSES)
    assert script == b"\x00\x14" + hash160(PUBKEYS[0]) and desc.startswith(f"wpkh({key})#")
    assert scan_scripts(desc, ADDRESSES) == [(script, desc)]  # with its checksum
    combo = scan_scripts({"desc": f"combo({key})", "range": 10}, ADDRESSES)
    assert [d.split("(")[0] for _, d in combo] == ["pk", "pkh", "wpkh", "sh"]
    assert scan_scripts("raw(51)", ADDRESSES)[0][0] == b"\x51"
    for bad, code in ((f"wpkh({key})#aaaaaaaa", -5), ("nope(00)", -5), ("raw(zz)", -5),
                      (f"pkh({key[:-2]})", -5), (1, -8), ({"range": 1}, -8)):
        with pytest.raises(RpcError) as info:
            scan_scripts(bad, ADDRESSES)
        assert info.value.code == code, bad


def test_multisig_rules() -> None:
    spk, redeem, made, desc = multisig_destination(1, PUBKEYS[:2], "p2sh-segwit")
    assert made == "p2sh-segwit" and desc.startswith("sh(wsh(multi(1,")
    assert spk == p2sh_script(hash160(b"\x00\x20" + sha256(redeem)))
    uncompressed = b"\x04" + bytes(64)
    assert multisig_destination(1, [uncompressed], "bech32")[2] == "legacy"
    for required, keys in ((0, PUBKEYS[:1]), (3, PUBKEYS[:2]), (1, PUBKEYS[:1] * 17)):
        with pytest.raises(RpcError) as info:
            multisig_destination(required, keys, "legacy")
        assert info.value.code == -8
