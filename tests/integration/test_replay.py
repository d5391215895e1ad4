"""``ctplugin replay``: every mode, from every source, ends in the chainstate of submitting the
blocks one by one; a corrupted block stops every mode with the same culprit; a killed replay
resumes; dead workers are replaced; a Dask KilledWorker is a clear error, never an acceptance."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctplugin.elements import Block, parse_block
from regtest.blocksdir import arrival_order, write_blocks_dir
from regtest.builder import make_block
from regtest.params import CTREGTEST, CTREGTEST_BORROMEAN, NETWORK_MAGIC, select_chain
from replay.cluster import DaskError
from replay.config import ReplayConfig, ReplayError, ReplayMode
from replay.driver import replay
from replay.engine import Engine
from replay.report import ReplayReport
from replay.sources import BlocksDirSource, ChainFileSource, SourceError
from replay.workers import WorkerError
from tests import replay_faults
from tests.conftest import REPO, rebuild, with_output
from validator import write_chain

XOR_KEY = bytes.fromhex("0badc0de5eedf00d")
FAST = {"window": 3, "workers": 2, "task_proofs": 6, "quiet": True, "log_every": 60.0,
        "dask_processes": False}


def config(mode: str, **changes: object) -> ReplayConfig:
    return replace(ReplayConfig(mode=mode, **FAST), **changes)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def reference(replay_blocks: list[bytes], tmp_path_factory: pytest.TempPathFactory
              ) -> list[tuple[str, str]]:
    """(tip hex, UTXO-set hash) at every height, submitting the blocks one by one."""
    states = []
    with Engine.open(tmp_path_factory.mktemp("reference"), select_chain(CTREGTEST)) as engine:
        states.append((engine.node.tip.hash[::-1].hex(), engine.utxo_summary().hash_hex))
        for raw in replay_blocks[1:]:
            engine.node.submit_block(raw).connected()
            states.append((engine.node.tip.hash[::-1].hex(), engine.utxo_summary().hash_hex))
    return states


@pytest.fixture(scope="module")
def sources(replay_blocks: list[bytes], tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sources")
    write_chain(root / "chain.dat", [parse_block(b) for b in replay_blocks], NETWORK_MAGIC)
    write_blocks_dir(root / "blocks", arrival_order(replay_blocks, seed=11), xor_key=XOR_KEY,
                     max_file_size=40_000, chunk_size=1 << 15)
    return {"chain file": root / "chain.dat", "blocks dir": root / "blocks"}


def _genesis() -> bytes:
    return select_chain(CTREGTEST).genesis_hash


def open_source(kind: str, path: Path) -> ChainFileSource | BlocksDirSource:
    if kind == "chain file":
        return ChainFileSource(path)
    return BlocksDirSource(path, _genesis())


@pytest.mark.parametrize("mode", list(ReplayMode))
@pytest.mark.parametrize("kind", ["chain file", "blocks dir"])
def test_every_mode_from_every_source_matches_one_by_one(
        mode: str, kind: str, sources: dict[str, Path], reference: list[tuple[str, str]],
        tmp_path: Path) -> None:
    report = replay(open_source(kind, sources[kind]), tmp_path / "d", config(mode))
    assert (report.tip, report.utxo_set_hash) == reference[-1]
    assert report.height == len(reference) - 1 and report.blocks == len(reference) - 1
    assert report.range_proofs > 0 and report.surjection_proofs > 0
    # blocks share the wall time between verdicts: positive, adding up to at most the total
    assert all(r.seconds > 0 for r in report.per_block)
    assert sum(r.seconds for r in report.per_block) <= report.seconds
    # each record carries the driver's resident memory then (a sample, so it can sit a little
    # above ru_maxrss, which the kernel updates lazily); the JSON report keeps it
    assert all(r.rss_mib > 0 for r in report.per_block)
    assert ReplayReport.from_json(report.to_json()).per_block == report.per_block
    assert not (tmp_path / "d" / "replay-verified").exists()
    # resuming a finished replay connects nothing and changes nothing
    again = replay(open_source(kind, sources[kind]), tmp_path / "d", config(mode))
    assert again.blocks == 0 and (again.tip, again.utxo_set_hash) == reference[-1]


def test_stop_at_height_then_resume_in_another_mode(
        sources: dict[str, Path], reference: list[tuple[str, str]], tmp_path: Path) -> None:
    first = replay(ChainFileSource(sources["chain file"]), tmp_path / "d",
                   config("window", stop_at_height=3))
    assert first.height == 3 and (first.tip, first.utxo_set_hash) == reference[3]
    rest = replay(ChainFileSource(sources["chain file"]), tmp_path / "d", config("workers"))
    assert rest.start_height == 4 and (rest.tip, rest.utxo_set_hash) == reference[-1]


def test_a_replay_validates_at_the_collectors_thresholds_and_restores_them(
        sources: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver (for the replay's duration) and each worker process (its warm-up) run the
    collector at ``VALIDATING_THRESHOLDS``; the caller's thresholds are back afterwards."""
    import gc

    import replay.driver as driver
    from replay.tasks import warm
    from validator import VALIDATING_THRESHOLDS

    seen: list[tuple[int, int, int]] = []
    make_mode = driver.make_mode

    def recording(*args: Any) -> Any:
        seen.append(gc.get_threshold())
        return make_mode(*args)

    monkeypatch.setattr(driver, "make_mode", recording)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        replay(ChainFileSource(sources["chain file"]), tmp_path / "d",
               config("block", stop_at_height=2))
        assert seen == [VALIDATING_THRESHOLDS] and gc.get_threshold() == (700, 10, 10)
        warm()
        assert gc.get_threshold() == VALIDATING_THRESHOLDS
    finally:
        gc.set_threshold(*before)


def test_resuming_checks_the_data_directory_holds_the_sources_chain(
        replay_blocks: list[bytes], sources: dict[str, Path], reference: list[tuple[str, str]],
        tmp_path: Path) -> None:
    """Resuming skips the source's blocks by height: a data directory of another chain is
    named, whether the source is as long as it or shorter; a shorter source of the same chain
    resumes to nothing."""
    datadir = tmp_path / "d"
    replay(ChainFileSource(sources["chain file"]), datadir, config("block"))
    blocks = [parse_block(b) for b in replay_blocks]
    other, _ = corrupt(blocks, "range")  # the same chain up to height 2, then another one
    write_chain(tmp_path / "other.dat", [parse_block(b) for b in other], NETWORK_MAGIC)
    write_chain(tmp_path / "other-short.dat", [parse_block(b) for b in other[:4]], NETWORK_MAGIC)
    write_chain(tmp_path / "short.dat", blocks[:4], NETWORK_MAGIC)
    for name, height in [("other.dat", len(reference) - 1), ("other-short.dat", 3)]:
        with pytest.raises(SourceError, match=f"source block {height} "
                                              f"{parse_block(other[height]).hash_hex} is not "
                                              f"this data directory's block {height} "
                                              rf"\({parse_block(replay_blocks[height]).hash_hex}\)"):
            replay(ChainFileSource(tmp_path / name), datadir, config("window"))
    again = replay(ChainFileSource(tmp_path / "short.dat"), datadir, config("block"))
    assert again.blocks == 0 and (again.tip, again.utxo_set_hash) == reference[-1]


def test_a_borromean_chain_replays_with_its_profile(tmp_path: Path) -> None:
    """A chain of Borromean range proofs (Elements' kind) replays as ``ctregtest-borromean``,
    in the node's mode and a deferred one, to the state of connecting it block by
    block under that profile."""
    from regtest.builder import build_demo_chain

    chain = build_demo_chain(n_blocks=3, txs_per_block=1,
                             params=select_chain(CTREGTEST_BORROMEAN))
    write_chain(tmp_path / "borro.dat", chain.blocks, NETWORK_MAGIC)
    with Engine.open(tmp_path / "ref", select_chain(CTREGTEST_BORROMEAN)) as engine:
        for block in chain.blocks[1:]:
            engine.node.submit_block(block.serialize()).connected()
        expected = (engine.node.tip.hash[::-1].hex(), engine.utxo_summary().hash_hex)
    for mode in ("block", "window"):
        report = replay(ChainFileSource(tmp_path / "borro.dat"), tmp_path / mode,
                        config(mode, chain=CTREGTEST_BORROMEAN))
        assert (report.tip, report.utxo_set_hash) == expected and report.range_proofs > 0
    with pytest.raises(ReplayError) as caught:  # the default profile wants Bulletproofs
        replay(ChainFileSource(tmp_path / "borro.dat"), tmp_path / "bp", config("block"))
    assert caught.value.reason == "bad-txns-rangeproof-invalid"


# ------------------------------------------------------------------------------------------------
# A corrupted block in the middle
# ------------------------------------------------------------------------------------------------


def relinked(blocks: list[Block], at: int, bad: Block) -> list[bytes]:
    """``blocks`` with ``bad`` at height ``at`` and the later blocks re-mined on top of it."""
    out = [*blocks[:at], bad]
    for block in blocks[at + 1:]:
        miner = block.transactions[0].outputs[0].script_pubkey
        out.append(make_block(out[-1].hash, block.header.height, block.header.time,
                              block.transactions[1:], miner))
    return [b.serialize() for b in out]


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def corrupt(blocks: list[Block], kind: str) -> tuple[list[bytes], tuple[str, int, None, int]]:
    """A chain whose block 3 breaks one rule (re-mined, so it is well-formed), and the
    culprit every mode must name."""
    block = blocks[3]
    txs = list(block.transactions[1:])
    if kind == "range":
        tx = txs[0]
        proof = tx.outputs[1].range_proof
        txs[0] = with_output(tx, 1, range_proof=flip(proof, len(proof) - 40))
        return relinked(blocks, 3, rebuild(block, txs)), ("bad-txns-rangeproof-invalid", 1,
                                                           None, 1)
    tx = txs[1]
    proof = tx.outputs[0].surjection_proof
    txs[1] = with_output(tx, 0, surjection_proof=flip(proof, len(proof) - 5))
    return relinked(blocks, 3, rebuild(block, txs)), ("bad-txns-surjectionproof-invalid", 2,
                                                       None, 0)


@pytest.mark.parametrize("kind", ["range", "surjection"])
def test_a_corrupted_block_stops_every_mode_with_the_same_culprit(
        kind: str, replay_blocks: list[bytes], reference: list[tuple[str, str]],
        tmp_path: Path) -> None:
    raw, culprit = corrupt([parse_block(b) for b in replay_blocks], kind)
    path = tmp_path / "corrupt.dat"
    write_chain(path, [parse_block(b) for b in raw], NETWORK_MAGIC)
    for mode in ReplayMode:
        datadir = tmp_path / mode
        with pytest.raises(ReplayError) as caught:
            replay(ChainFileSource(path), datadir, config(mode))
        err = caught.value
        assert err.culprit == culprit, mode
        assert err.height == 3 and err.where.startswith("corrupt.dat offset"), mode
        assert err.block_hash == parse_block(raw[3]).hash_hex
        assert err.report is not None and err.report.height == 2
        # every block before it is connected, nothing after it
        assert (err.report.tip, err.report.utxo_set_hash) == reference[2], mode
        with Engine.open(datadir, select_chain(CTREGTEST)) as engine:
            assert engine.node.tip.height == 2 and not engine.node.pending_blocks


def test_a_bad_input_after_bad_proofs_names_the_earlier_block(
        replay_blocks: list[bytes], tmp_path: Path) -> None:
    """Block 3 has a bad range proof and block 4 spends a coin that does not exist: the
    deferred modes meet block 4's error before block 3's proofs are verified, and must still
    report block 3."""
    blocks = [parse_block(b) for b in replay_blocks]
    raw, culprit = corrupt(blocks, "range")
    four = parse_block(raw[4])
    tx = four.transactions[1]
    bad_in = replace(tx.inputs[0], prevout_hash=bytes(31) + b"\x01")
    txs = [type(tx)(version=tx.version, inputs=(bad_in, *tx.inputs[1:]), outputs=tx.outputs,
                    locktime=tx.locktime), *four.transactions[2:]]
    raw[4] = rebuild(four, txs).serialize()
    path = tmp_path / "two.dat"
    write_chain(path, [parse_block(b) for b in raw], NETWORK_MAGIC)
    for mode in ("window", "workers"):
        with pytest.raises(ReplayError) as caught:
            replay(ChainFileSource(path), tmp_path / mode, config(mode, window=5))
        assert caught.value.culprit == culprit and caught.value.height == 3


# ------------------------------------------------------------------------------------------------
# Killed replays, dead workers, a lost Dask task
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(ReplayMode))
def test_a_sigkilled_replay_resumes_and_finishes_identically(
        mode: str, sources: dict[str, Path], reference: list[tuple[str, str]],
        tmp_path: Path) -> None:
    datadir = tmp_path / "d"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "tests.replay_faults",
                             str(sources["blocks dir"]), str(datadir), mode],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=REPO)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line == b"committed 4\n":
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    with Engine.open(datadir, select_chain(CTREGTEST)) as engine:
        # blocks committed before their proofs were verified were pending in the node, never
        # indexed or flushed: the reopened tip is the last verified block
        killed_at = engine.node.tip.height
        assert not engine.node.pending_blocks
    assert killed_at < len(reference) - 1  # killed mid-run
    if mode in ("single", "block"):  # these commit a block only once it is verified
        assert killed_at >= 4
    report = replay(BlocksDirSource(sources["blocks dir"], _genesis()), datadir, config(mode))
    assert (report.tip, report.utxo_set_hash) == reference[-1]
    assert report.start_height == killed_at + 1


@pytest.mark.parametrize("presses", [1, 2])
@pytest.mark.parametrize("mode", ["block", "window"])
def test_ctrl_c_in_the_middle_of_a_blocks_coins_update_loses_nothing(
        mode: str, presses: int, sources: dict[str, Path], reference: list[tuple[str, str]],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGINT lands while the coins cache is half updated (a block's spent coins gone, its new
    coins not yet added, the tip not moved): one press stops at the next block boundary, two
    abandon the node as a kill would. Either way nothing half-done reaches the disk (closing
    used to flush it: coins missing under the old tip) and the resumed replay ends in the
    one-by-one chainstate."""
    from validator.store.chainstate import Chainstate

    spend, add = Chainstate._spend_many, Chainstate._add_fresh_many
    spent: list[int] = []
    hit: list[int] = []

    def spending(self: Chainstate, points: Any, entries: Any) -> None:
        spent.append(len(points))
        spend(self, points, entries)

    def adding(self: Chainstate, *args: Any) -> None:
        if not hit and spent and spent[-1] and self.best_block() is not None \
                and self.best_block().height >= 2:  # type: ignore[union-attr]
            hit.append(self.best_block().height + 1)  # type: ignore[union-attr]
            for _ in range(presses):
                os.kill(os.getpid(), signal.SIGINT)  # the handler runs before the next line
        add(self, *args)

    monkeypatch.setattr(Chainstate, "_spend_many", spending)
    monkeypatch.setattr(Chainstate, "_add_fresh_many", adding)
    with pytest.raises(KeyboardInterrupt):
        replay(ChainFileSource(sources["chain file"]), tmp_path / "d", config(mode))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    monkeypatch.undo()
    with Engine.open(tmp_path / "d", select_chain(CTREGTEST)) as engine:
        height = engine.node.tip.height
        assert not engine.node.pending_blocks
        assert (engine.node.tip.hash[::-1].hex(), engine.utxo_summary().hash_hex) \
            == reference[height]
    # the interrupted block may be there: finished before the stop (one press), or stored
    # before its connection was cut short and connected, fully validated, on reopening
    assert hit and height <= hit[0]
    report = replay(ChainFileSource(sources["chain file"]), tmp_path / "d", config(mode))
    assert report.start_height == height + 1
    assert (report.tip, report.utxo_set_hash) == reference[-1]


def test_a_dead_worker_is_replaced_and_its_task_retried(
        sources: dict[str, Path], reference: list[tuple[str, str]], tmp_path: Path) -> None:
    shutil.rmtree(replay_faults.DIE_ONCE_DIR, ignore_errors=True)
    replay_faults.DIE_ONCE_DIR.mkdir()
    try:
        report = replay(ChainFileSource(sources["chain file"]), tmp_path / "d",
                        config("workers",
                               task_target="tests.replay_faults:die_once_verify_task"))
    finally:
        died = len(list(replay_faults.DIE_ONCE_DIR.iterdir()))
        shutil.rmtree(replay_faults.DIE_ONCE_DIR, ignore_errors=True)
    assert died >= 2  # every task's first attempt killed its worker
    assert report.worker_restarts == died and report.task_retries == died
    assert (report.tip, report.utxo_set_hash) == reference[-1]


def test_workers_that_always_die_stop_the_replay_without_accepting(
        sources: dict[str, Path], reference: list[tuple[str, str]], tmp_path: Path) -> None:
    with pytest.raises(WorkerError, match="its worker died 3 times"):
        replay(ChainFileSource(sources["chain file"]), tmp_path / "d",
               config("workers", task_target="tests.replay_faults:always_die"))
    with Engine.open(tmp_path / "d", select_chain(CTREGTEST)) as engine:
        # nothing unverified stayed: back at genesis (the first task never succeeded)
        assert engine.node.tip.height == 0 and not engine.node.pending_blocks
        assert engine.utxo_summary().hash_hex == reference[0][1]


def test_dask_killed_worker_is_a_clear_error_never_an_acceptance(
        sources: dict[str, Path], reference: list[tuple[str, str]], tmp_path: Path) -> None:
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            pytest.raises(DaskError, match="KilledWorker"):
        replay(ChainFileSource(sources["chain file"]), tmp_path / "d",
               config("dask", workers=1, dask_processes=True,
                      task_target="tests.replay_faults:always_die"))
    with Engine.open(tmp_path / "d", select_chain(CTREGTEST)) as engine:
        assert engine.node.tip.height == 0 and not engine.node.pending_blocks
