"""Chains as values (``ctplugin.elements.chainparams``, ``regtest.params``): a ``ChainParams``
owns its name and its genesis (the hash derived from the block), chains are selected by name
from one registry, a data directory keeps the chain it was made for, and every command line
selects the chain with ``--chain`` (the node also with elementsd's ``-chain=``)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from apps import chain as chain_cli
from apps.replay import main as replay_main
from ctplugin import borromean
from ctplugin.elements import parse_block
from ctplugin.elements.chainparams import (
    ChainParams,
    RangeProofKind,
    UnknownChainError,
    range_proof_kind,
)
from ctplugin.errors import EncodingError
from regtest.builder import build_demo_chain
from regtest.params import (
    CHAIN_NAMES,
    CTREGTEST,
    CTREGTEST_BORROMEAN,
    DEFAULT_CHAIN,
    ELEMENTSREGTEST,
    NETWORK_MAGIC,
    POLICY_ASSET,
    select_chain,
)
from rpc.config import parse_config
from rpc.context import NodeContext
from rpc.startup import close_node, open_node
from tests.conftest import REPO
from validator import Node, StoreError, read_chain, write_chain

# --- the registry ------------------------------------------------------------------------------


def test_the_registry_names_our_chains_the_bulletproof_one_first() -> None:
    assert CHAIN_NAMES == (CTREGTEST, CTREGTEST_BORROMEAN, ELEMENTSREGTEST) == (
        "ctregtest", "ctregtest-borromean", "elementsregtest")
    assert DEFAULT_CHAIN == CTREGTEST
    for name in CHAIN_NAMES:
        assert select_chain(name).name == name
        assert select_chain(name) is select_chain(name)  # one value per name


def test_the_two_chains_differ_only_in_their_range_proofs() -> None:
    bullet, borro = select_chain(CTREGTEST), select_chain(CTREGTEST_BORROMEAN)
    assert bullet.range_proofs == {RangeProofKind.BULLETPROOF}
    assert borro.range_proofs == {RangeProofKind.BORROMEAN}
    assert bullet.wallet_range_proof is RangeProofKind.BULLETPROOF
    assert borro.wallet_range_proof is RangeProofKind.BORROMEAN
    assert dataclasses.replace(borro, name=CTREGTEST, range_proofs=bullet.range_proofs) == bullet
    assert bullet.policy_asset == POLICY_ASSET and bullet.network_magic == NETWORK_MAGIC


@pytest.mark.parametrize("name", ["elementsregtest2", "", "CTREGTEST", None, ["ctregtest"]])
def test_an_unknown_chain_name_is_a_typed_error_listing_the_names(name: object) -> None:
    with pytest.raises(UnknownChainError) as caught:
        select_chain(name)  # type: ignore[arg-type]
    assert isinstance(caught.value, ValueError)
    assert "known chains: ctregtest, ctregtest-borromean, elementsregtest" in str(caught.value)


def test_range_proof_kinds_are_an_enum_spelled_as_on_the_command_line() -> None:
    assert [kind.value for kind in RangeProofKind] == ["bulletproof", "borromean"]
    assert RangeProofKind("borromean") is RangeProofKind.BORROMEAN
    assert range_proof_kind(bytes(675), frozenset(RangeProofKind)) is RangeProofKind.BULLETPROOF


# --- the genesis belongs to the params -----------------------------------------------------------


def test_the_genesis_hash_is_derived_from_the_genesis_block() -> None:
    params = select_chain(CTREGTEST)
    assert params.genesis_hash == params.genesis.hash == params.genesis.header.hash
    assert params.genesis.header.height == 0 and params.genesis.header.prev_hash == bytes(32)
    block_1 = build_demo_chain(n_blocks=1, txs_per_block=1).blocks[1]
    other = dataclasses.replace(params, genesis=block_1)
    assert other.genesis_hash == block_1.hash != params.genesis_hash
    assert "genesis_hash" not in {f.name for f in dataclasses.fields(ChainParams) if f.init}
    with pytest.raises(TypeError):
        ChainParams(genesis_hash=bytes(32), **_fields(params))  # type: ignore[call-arg]


def test_chain_params_are_frozen_and_every_field_is_explicit() -> None:
    params = select_chain(CTREGTEST)
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.genesis = params.genesis  # type: ignore[misc]
    assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(ChainParams)
               if f.init)  # no chain's values as defaults


@pytest.mark.parametrize(("change", "reason"), [
    ({"name": ""}, "length"), ({"range_proofs": frozenset()}, "length"),
    ({"range_proofs": frozenset({"bulletproof"})}, "type"), ({"genesis": b"\x00"}, "type"),
    ({"policy_asset": bytes(31)}, "length"), ({"network_magic": b"\xfa"}, "length"),
    ({"block_subsidy": -1}, "value-range"), ({"subsidy_halving_interval": 0}, "value-range"),
    ({"bip34_height": -1}, "value-range"), ({"ct_bits": 65}, "value-range"),
    ({"ct_exponent": 19}, "value-range")])
def test_bad_chain_params_are_encoding_errors(change: dict[str, object], reason: str) -> None:
    with pytest.raises(EncodingError) as caught:
        dataclasses.replace(select_chain(CTREGTEST), **change)  # type: ignore[arg-type]
    assert caught.value.reason == reason


def _fields(params: ChainParams) -> dict[str, object]:
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params) if f.init}


# --- a data directory keeps its chain ------------------------------------------------------------


def test_a_data_directory_made_for_one_chain_is_refused_under_another(tmp_path: Path) -> None:
    with Node.open(tmp_path / "d", select_chain(CTREGTEST)):
        pass
    assert (tmp_path / "d" / "chain").read_text() == "ctregtest\n"
    with pytest.raises(StoreError) as caught:
        Node.open(tmp_path / "d", select_chain(CTREGTEST_BORROMEAN))
    assert str(caught.value) == (f"data directory {tmp_path / 'd'} was made for chain "
                                 "'ctregtest', not 'ctregtest-borromean'")
    with Node.open(tmp_path / "d", select_chain(CTREGTEST)) as node:  # refused, not harmed
        assert node.tip.height == 0


def test_a_chain_of_the_same_name_with_another_genesis_is_refused(tmp_path: Path) -> None:
    params = select_chain(CTREGTEST)
    with Node.open(tmp_path / "d", params):
        pass
    impostor = dataclasses.replace(params, genesis=build_demo_chain(1, 1).blocks[1])
    with pytest.raises(StoreError, match="belongs to another chain"):
        Node.open(tmp_path / "d", impostor)


def test_a_directory_from_before_chains_had_names_is_adopted(tmp_path: Path) -> None:
    with Node.open(tmp_path / "d", select_chain(CTREGTEST)):
        pass
    (tmp_path / "d" / "chain").unlink()
    with Node.open(tmp_path / "d", select_chain(CTREGTEST)):
        pass
    assert (tmp_path / "d" / "chain").read_text() == "ctregtest\n"


# --- --chain on the command lines ----------------------------------------------------------------


def test_ctplugin_chain_builds_the_chain_it_is_told(tmp_path: Path) -> None:
    out = tmp_path / "borro.dat"
    assert chain_cli.main(["--chain", CTREGTEST_BORROMEAN, "--blocks", "1", "--txs", "1",
                           "--out", str(out), "--quiet"]) == 0
    magic = select_chain(CTREGTEST_BORROMEAN).network_magic
    blocks = [parse_block(raw) for raw in read_chain(out, magic)]
    assert blocks[0].hash == select_chain(CTREGTEST_BORROMEAN).genesis_hash
    proofs = [o.range_proof for tx in blocks[1].transactions for o in tx.outputs if o.range_proof]
    assert proofs and all(borromean.info(p) is not None for p in proofs)
    with pytest.raises(SystemExit) as caught:  # the transfer shapes' weights are Bulletproofs'
        chain_cli.main(["--chain", CTREGTEST_BORROMEAN, "--shape", "transfers", "--out",
                        str(tmp_path / "t.dat")])
    assert caught.value.code == 2


def test_ctplugin_replay_takes_the_chain_and_keeps_the_datadirs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chain = build_demo_chain(n_blocks=1, txs_per_block=1,
                             params=select_chain(CTREGTEST_BORROMEAN))
    write_chain(tmp_path / "borro.dat", chain.blocks, chain.params.network_magic)
    datadir = str(tmp_path / "d")
    assert replay_main([str(tmp_path / "borro.dat"), "--datadir", datadir, "--quiet",
                        "--chain", CTREGTEST_BORROMEAN]) == 0
    capsys.readouterr()
    assert replay_main([str(tmp_path / "borro.dat"), "--datadir", datadir, "--quiet"]) == 3
    assert ("was made for chain 'ctregtest-borromean', not 'ctregtest'"
            in capsys.readouterr().err)
    with pytest.raises(SystemExit) as caught:
        replay_main([str(tmp_path / "borro.dat"), "--datadir", datadir, "--chain", "liquidv1"])
    assert caught.value.code == 2
    assert "invalid choice: 'liquidv1'" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["-chain=ctregtest-borromean"],
                                  ["--chain", "ctregtest-borromean"]])
def test_the_node_selects_its_chain_by_name(tmp_path: Path, argv: list[str]) -> None:
    config = parse_config(["--datadir", str(tmp_path), "-disablewallet", *argv], "test", None)
    assert config.chain == CTREGTEST_BORROMEAN
    ctx = NodeContext(config)
    open_node(ctx)
    try:
        assert ctx.node.params is select_chain(CTREGTEST_BORROMEAN)
    finally:
        close_node(ctx)
    default = NodeContext(parse_config(["--datadir", str(tmp_path), "-disablewallet"], "t", None))
    assert default.config.chain == DEFAULT_CHAIN
    # One data directory, one subdirectory per chain (Core's GetDataDirNet): both chains open.
    open_node(default)
    try:
        assert default.node.params is select_chain(DEFAULT_CHAIN)
    finally:
        close_node(default)
    assert {p.name for p in tmp_path.iterdir()} == {DEFAULT_CHAIN, CTREGTEST_BORROMEAN}


def test_the_node_refuses_an_unknown_chain_before_starting(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "apps.main", "node", "-datadir=" + str(tmp_path),
                           "-chain=liquidv2"], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 1
    assert done.stderr == ("Error: Unknown chain liquidv2. Known chains: ctregtest, "
                           "ctregtest-borromean, elementsregtest\n")
    assert not (tmp_path / "chain").exists()
