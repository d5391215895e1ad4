"""The regtest wallet: keys, addresses and nonces against libwally; blinding algebra; unblinding;
determinism; issuance."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ctplugin.elements.address import (
    Destination,
    blech32_decode,
    blech32_encode,
    decode_destination,
)
from ctplugin.elements.chainparams import ELEMENTS_REGTEST_ADDRESSES
from ctplugin.elements.consensus import COIN
from ctplugin.errors import EncodingError
from ctplugin.pedersen import commit, generator_generate_blinded, verify_tally
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from regtest.params import CTREGTEST, POLICY_ASSET, REGTEST_SEED, regtest_key, select_chain
from regtest.wallet import ConfidentialAddress, Issuance, KeyChain, Payment, Wallet, WalletError
from regtest.wallet.blinding import (
    asset_blinding_factor,
    final_value_blind,
    rewind_nonce,
)

wally = pytest.importorskip("wallycore")


# ------------------------------------------------------------------------------------------------
# Keys, addresses, nonces: byte-compatible with libwally (Elements' wallet library)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [b"\x00" * 16, b"wallet seed for tests, 32 bytes.",
                                  bytes(range(64))])
def test_slip77_blinding_keys_match_libwally(seed: bytes) -> None:
    chain = KeyChain(seed)
    master = wally.asset_blinding_key_from_seed(seed)
    assert chain.master_blinding_key == bytes(master[32:])
    for i in range(3):
        pair = chain.key(i)
        expected = wally.asset_blinding_key_to_ec_private_key(master, pair.script_pubkey)
        assert pair.blinding_secret == int.from_bytes(expected, "big")
        assert pair.script_pubkey == b"\x00\x14" + wally.hash160(pair.pubkey)


def test_confidential_addresses_match_libwally() -> None:
    chain = KeyChain(b"address test seed!")
    for i in range(4):
        pair = chain.key(i)
        address = ConfidentialAddress(pair.script_pubkey, pair.blinding_pubkey)
        segwit = wally.addr_segwit_from_bytes(pair.script_pubkey, "ert", 0)
        expected = wally.confidential_addr_from_addr_segwit(segwit, "ert", "el",
                                                             pair.blinding_pubkey)
        assert address.encode(ELEMENTS_REGTEST_ADDRESSES) == expected
        assert decode_destination(expected, ELEMENTS_REGTEST_ADDRESSES) == address.destination
        assert decode_destination(segwit, ELEMENTS_REGTEST_ADDRESSES) == Destination(
            pair.script_pubkey)


def test_blech32m_round_trip_and_bad_checksums() -> None:
    payload = bytes(range(65))
    text = blech32_encode("el", 1, payload)
    assert blech32_decode("el", text) == (1, payload)
    assert blech32_decode("el", text.upper()) == (1, payload)
    broken = text[:-1] + ("q" if text[-1] != "q" else "p")
    with pytest.raises(EncodingError):
        blech32_decode("el", broken)
    with pytest.raises(EncodingError):
        blech32_decode("ex", text)
    with pytest.raises(EncodingError):
        decode_destination(blech32_encode("el", 0, b"\x02" * 33 + b"x" * 20)[:-3],
                           ELEMENTS_REGTEST_ADDRESSES)


@given(st.integers(1, N - 1), st.integers(1, N - 1))
@settings(max_examples=10, deadline=None)
def test_rewind_nonce_is_shared_and_matches_libwally(e: int, b: int) -> None:
    big_b = ct.base_mul(b).to_bytes()
    big_e = ct.base_mul(e).to_bytes()
    assert rewind_nonce(e, big_b) == rewind_nonce(b, big_e)
    assert rewind_nonce(e, big_b) == bytes(wally.ecdh_nonce_hash(big_b, e.to_bytes(32, "big")))


# ------------------------------------------------------------------------------------------------
# Blinding algebra
# ------------------------------------------------------------------------------------------------

_amounts = st.integers(1, 2**40)
_blinds = st.integers(1, N - 1)


@given(st.lists(st.tuples(_amounts, _blinds, _blinds), min_size=1, max_size=3),
       st.lists(st.tuples(st.integers(1, 2**20), _blinds), min_size=1, max_size=3))
@settings(max_examples=15, deadline=None)
def test_final_value_blind_balances_the_tally(inputs, out_parts) -> None:
    """Σ v·abf + vbf balanced ⇒ pedersen tally holds (one asset, all amounts blinded)."""
    asset = b"\x05" * 32
    total_in = sum(v for v, _, _ in inputs)
    assume(total_in >= len(out_parts))  # every output keeps a positive value
    out_values = [v for v, _ in out_parts]
    if sum(out_values) >= total_in:
        out_values = [1] * len(out_parts)
    out_values[-1] += total_in - sum(out_values)
    out_terms = [(v, abf, (abf * 7 + 3) % N or 1) for v, (_, abf) in zip(out_values, out_parts)]
    last_v, last_abf, _ = out_terms[-1]
    last_vbf = final_value_blind(inputs, out_terms[:-1], last_v, last_abf)
    out_terms[-1] = (last_v, last_abf, last_vbf)

    def commitments(terms):
        return [commit(v, vbf, generator_generate_blinded(asset, abf.to_bytes(32, "big")))
                for v, abf, vbf in terms]

    assert verify_tally(commitments(inputs), commitments(out_terms))
    wrong = [(v + 1, abf, vbf) for v, abf, vbf in out_terms[:1]] + out_terms[1:]
    assert not verify_tally(commitments(inputs), commitments(wrong))


def test_asset_blinding_factor_is_a_nonzero_scalar() -> None:
    for i in range(20):
        abf = asset_blinding_factor(bytes([i]) * 32)
        assert 0 < abf < N


# ------------------------------------------------------------------------------------------------
# The wallet
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def funded() -> Wallet:
    wallet = Wallet(REGTEST_SEED)
    wallet.scan_block(select_chain(CTREGTEST).genesis)
    return wallet


def test_regtest_key_owns_the_genesis_coins(funded: Wallet) -> None:
    genesis = select_chain(CTREGTEST).genesis
    assert regtest_key().script_pubkey == genesis.transactions[0].outputs[0].script_pubkey
    assert funded.balance(POLICY_ASSET) == 21_000_000 * COIN


def test_payment_unblinds_only_for_the_receiver() -> None:
    alice = Wallet(REGTEST_SEED)
    alice.scan_block(select_chain(CTREGTEST).genesis)
    bob, eve = Wallet(b"bob seed for wallet tests"), Wallet(b"eve seed for wallet tests")
    tx = alice.build_transaction([Payment(123_456, bob.new_address())], fee=500, height=1)
    got = bob.scan_transaction(tx, 1)
    assert [(c.asset, c.value) for c in got] == [(POLICY_ASSET, 123_456)]
    coin = got[0]
    assert generator_generate_blinded(POLICY_ASSET, coin.abf.to_bytes(32, "big")).serialize() \
        == tx.outputs[0].asset
    assert commit(coin.value, coin.vbf, coin.generator).serialize() == tx.outputs[0].value
    assert eve.scan_transaction(tx, 1) == []
    # the same output under eve's script is not eve's either: the proof commits to the script
    assert eve.unblind(tx.outputs[0]) is None
    assert alice.balance(POLICY_ASSET) == 21_000_000 * COIN - 123_456 - 500
    fee_outputs = [o for o in tx.outputs if o.is_fee]
    assert [o.value for o in fee_outputs] == [500]
    assert all(len(o.range_proof) == 675 for o in tx.outputs if not o.is_fee)


def test_wallet_is_deterministic() -> None:
    def one() -> bytes:
        w = Wallet(REGTEST_SEED)
        w.scan_block(select_chain(CTREGTEST).genesis)
        return w.build_transaction([Payment(5 * COIN, Wallet(b"receiver seed 0001").new_address())],
                                   fee=900, height=1).serialize()

    assert one() == one()


def test_insufficient_funds_and_bad_requests(funded: Wallet) -> None:
    bob = Wallet(b"bob seed for wallet tests")
    with pytest.raises(WalletError):
        funded.build_transaction([Payment(10**18, bob.new_address())], fee=1, height=1)
    with pytest.raises(WalletError):
        Payment(0, bob.new_address())
    with pytest.raises(WalletError):
        funded.build_transaction([Payment(1, bob.new_address())], fee=0, height=1)


def test_issuance_pays_asset_and_tokens_to_the_issuer() -> None:
    alice = Wallet(REGTEST_SEED)
    alice.scan_block(select_chain(CTREGTEST).genesis)
    tx = alice.build_transaction([], fee=100, height=1, issuance=Issuance(7777, tokens=3))
    assert tx.inputs[0].issuance is not None
    (asset, token), = alice.token_of.items()
    assert alice.balance(asset) == 7777 and alice.balance(token) == 3
