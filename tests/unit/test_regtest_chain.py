"""Regtest chain parameters, the block builder, chain files and ``ctplugin chain``."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.chain import main as chain_main
from ctplugin.elements import parse_block
from ctplugin.elements.consensus import MAX_BLOCK_WEIGHT
from ctplugin.elements.script import script_num
from ctplugin.errors import ParseError
from regtest.builder import (
    MAX_TRANSFER_TXS,
    TRANSFER_TX_WEIGHT,
    ChainBuilder,
    build_demo_chain,
    build_transfer_chain,
)
from regtest.params import (
    BLOCK_CHALLENGE,
    CTREGTEST,
    INITIAL_FREE_COINS,
    NETWORK_MAGIC,
    POLICY_ASSET,
    REGTEST_SEED,
    select_chain,
)
from regtest.wallet import Payment, Wallet
from validator import read_chain, write_chain


def test_genesis_pays_the_free_coins_to_the_regtest_key() -> None:
    genesis = select_chain(CTREGTEST).genesis
    assert genesis.header.height == 0 and genesis.header.prev_hash == bytes(32)
    assert genesis.header.challenge == BLOCK_CHALLENGE and genesis.header.solution == b""
    assert genesis.merkle_root_matches()
    (out,) = genesis.transactions[0].outputs
    assert (out.asset, out.value) == (POLICY_ASSET, INITIAL_FREE_COINS)
    assert parse_block(genesis.serialize()).hash == genesis.hash


@pytest.mark.parametrize(("n", "push"), [(0, "00"), (1, "51"), (16, "60"), (17, "0111"),
                                         (127, "017f"), (128, "028000"), (255, "02ff00"),
                                         (256, "020001"), (65536, "03000001")])
def test_bip34_height_push(n: int, push: str) -> None:
    assert script_num(n).hex() == push


def test_blocks_carry_fees_merkle_root_and_witness_commitment() -> None:
    alice, bob = Wallet(REGTEST_SEED), Wallet(b"regtest chain test receiver seed")
    chain = ChainBuilder([alice, bob])
    tx = chain.add(alice.build_transaction([Payment(50_000, bob.new_address())], fee=321,
                                           height=1))
    block = chain.mine()
    assert block.merkle_root_matches() and block.check_witness_commitment()
    coinbase = block.transactions[0]
    assert coinbase.outputs[0].value == 321 and coinbase.outputs[0].asset == POLICY_ASSET
    assert block.transactions[1].txid == tx.txid
    assert bob.balance(POLICY_ASSET) == 50_000


def test_chain_file_round_trip_and_reproducibility(tmp_path: Path) -> None:
    first = build_demo_chain(n_blocks=2, txs_per_block=1, seed=b"regtest chain file seed")
    second = build_demo_chain(n_blocks=2, txs_per_block=1, seed=b"regtest chain file seed")
    assert [b.serialize() for b in first.blocks] == [b.serialize() for b in second.blocks]
    path = tmp_path / "chain.dat"
    write_chain(path, first.blocks, NETWORK_MAGIC)
    raw = list(read_chain(path, NETWORK_MAGIC))
    assert raw == [b.serialize() for b in first.blocks]
    assert parse_block(raw[0]).hash == select_chain(CTREGTEST).genesis_hash
    data = path.read_bytes()
    (tmp_path / "bad").write_bytes(data[:-1])
    with pytest.raises(ParseError):
        list(read_chain(tmp_path / "bad", NETWORK_MAGIC))
    (tmp_path / "magic").write_bytes(b"\x00" * 4 + data[4:])
    with pytest.raises(ParseError):
        list(read_chain(tmp_path / "magic", NETWORK_MAGIC))
    assert data.startswith(NETWORK_MAGIC)


def test_transfer_transactions_weigh_what_the_chain_command_assumes(tmp_path: Path) -> None:
    """``ctplugin chain`` bounds --txs for the transfer shapes by TRANSFER_TX_WEIGHT: every such
    transaction weighs exactly that, so MAX_TRANSFER_TXS of them fit a block; one more is
    refused before anything is built, and an unwritable --out before any proving."""
    chain = build_transfer_chain(1, 3)
    weights = {tx.weight for tx in chain.blocks[2].transactions[1:]}
    assert weights == {TRANSFER_TX_WEIGHT}
    coinbase_and_header = chain.blocks[2].weight - 3 * TRANSFER_TX_WEIGHT
    assert MAX_TRANSFER_TXS * TRANSFER_TX_WEIGHT + coinbase_and_header <= MAX_BLOCK_WEIGHT
    assert (MAX_TRANSFER_TXS + 1) * TRANSFER_TX_WEIGHT + coinbase_and_header > MAX_BLOCK_WEIGHT
    with pytest.raises(SystemExit) as usage:
        chain_main(["--shape", "transfers", "--txs", str(MAX_TRANSFER_TXS + 1), "--out",
                    str(tmp_path / "big.dat"), "--quiet"])
    assert usage.value.code == 2 and not (tmp_path / "big.dat").exists()
    missing = tmp_path / "no such dir" / "c.dat"
    assert chain_main(["--blocks", "2", "--out", str(missing), "--quiet"]) == 2
