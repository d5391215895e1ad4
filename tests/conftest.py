"""Shared test fixtures and helpers.

Vectors live in ``../shared/`` beside the checkout (override with CTPLUGIN_SHARED). Standalone,
tests that need them skip with a clear reason when absent, and small fixtures copied into
``tests/fixtures`` run always. When the environment variable ``CI`` is set, missing shared vectors
are a FAILURE, never a skip: the whole run stops at start if ``../shared`` is absent, and
``shared_path`` / ``shared_file`` / ``shared_if_present`` fail for a missing file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from hypothesis import settings

# Hypothesis' per-example deadline (200 ms) measures the machine, not the code: on a loaded
# 2-core runner a slow example fails a correct property. Properties keep their example counts.
settings.register_profile("ctplugin", deadline=None)
settings.load_profile("ctplugin")

if TYPE_CHECKING:
    from ctplugin.elements import Block, Transaction
    from regtest.builder import ChainBuilder
    from validator import ConnectReport
    from validator.node import Node

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(os.environ.get("CTPLUGIN_SHARED", REPO.parent / "shared"))

CI = bool(os.environ.get("CI"))

# Slow property tests run at small size in CI; raise this locally for deeper runs.
SLOW_SCALE = float(os.environ.get("CTPLUGIN_SLOW_SCALE", "1"))


def pytest_sessionstart(session: pytest.Session) -> None:
    if CI and not SHARED.is_dir():
        raise pytest.UsageError(f"CI is set but the shared vectors are missing: {SHARED} "
                                "(set CTPLUGIN_SHARED)")


def shared_missing(path: Path) -> NoReturn:
    """A shared file the calling test needs is absent: fail under CI, else skip."""
    message = f"shared vectors not present: {path} (set CTPLUGIN_SHARED)"
    if CI:
        pytest.fail(f"CI: {message}")
    pytest.skip(message)


def shared_path(*parts: str) -> Path:
    """Path under ../shared, or skip the calling test (fail under CI) if it is missing."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        shared_missing(path)
    return path


def shared_if_present(*parts: str) -> Path | None:
    """Path under ../shared, or None when absent (a test that then runs on its fixture
    copy); under CI an absent file fails the calling test."""
    path = SHARED.joinpath(*parts)
    if path.exists():
        return path
    if CI:
        pytest.fail(f"CI: shared vectors not present: {path}")
    return None


def shared_file(*parts: str) -> Path:
    """Path under ../shared for module-level lists of vector files (read only if present);
    under CI an absent file is an error at collection."""
    path = SHARED.joinpath(*parts)
    if CI and not path.exists():
        raise FileNotFoundError(f"CI: shared vectors not present: {path}")
    return path


def load_json(path: Path) -> Any:
    with path.open() as handle:
        return json.load(handle)


# ------------------------------------------------------------------------------------------------
# Validator tests: a node on a fresh data directory, blocks rebuilt around changed transactions
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def node(tmp_path: Path) -> Iterator[Node]:
    """A validating node (chainstate + proof cache) on our regtest genesis, in tmp_path."""
    from regtest.params import CTREGTEST, select_chain
    from validator.node import Node

    with Node.open(tmp_path / "node", select_chain(CTREGTEST)) as n:
        yield n


def rebuild(block: Block, txs: list[Transaction]) -> Block:
    """The same block position with other transactions (new coinbase, Merkle root, commitment)."""
    from regtest.builder import make_block

    miner = block.transactions[0].outputs[0].script_pubkey
    return make_block(block.header.prev_hash, block.header.height, block.header.time, txs, miner)


def with_output(tx: Transaction, j: int, **changes: Any) -> Transaction:
    """``tx`` with fields of output j replaced."""
    from ctplugin.elements import Transaction

    outs = list(tx.outputs)
    outs[j] = replace(outs[j], **changes)
    return Transaction(version=tx.version, inputs=tx.inputs, outputs=outs, locktime=tx.locktime)


def connect_upto(node: Node, chain: ChainBuilder, height: int) -> None:
    """Submit ``chain``'s blocks 1..height."""
    for block in chain.blocks[1:height + 1]:
        connect_block(node, block.serialize())


def signed_by_regtest_key(tx: Transaction) -> Transaction:
    """``tx`` with every input that spends a genesis coin signed by the regtest key (its
    P2WPKH script); other inputs must be bare OP_TRUE spends."""
    from ctplugin.elements import TxOut
    from regtest.params import CTREGTEST, REGTEST_SEED, select_chain
    from regtest.wallet import KeyChain
    from regtest.wallet.signing import sign_transaction

    genesis = select_chain(CTREGTEST).genesis
    coins = {(t.txid, n): out for t in genesis.transactions for n, out in enumerate(t.outputs)}
    spent = [coins.get(txin.prevout) for txin in tx.inputs]
    outs = [out if out is not None else TxOut(asset=bytes(32), value=0, script_pubkey=b"\x51")
            for out in spent]
    keys = KeyChain(REGTEST_SEED)
    keys.key(0)  # derive the key owning the genesis coins
    return sign_transaction(tx, outs, keys, genesis.hash, lambda: bytes(32))


# ------------------------------------------------------------------------------------------------
# Replay tests
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def replay_blocks() -> list[bytes]:
    """A small regtest chain (genesis + 6 blocks of confidential payments, an issuance and a
    reissuance) as raw blocks, shared by the replay tests."""
    from regtest.builder import build_demo_chain

    chain = build_demo_chain(n_blocks=6, txs_per_block=2, seed=b"replay tests wallet seed")
    return [block.serialize() for block in chain.blocks]


def connect_block(node: Node, data: bytes | Block) -> ConnectReport:
    """Submit a block that must become the new tip: its ``ConnectReport``, or the
    ``ValidationError`` it was rejected with raised (the validator tests' way to name culprits)."""
    if isinstance(data, bytes):
        return node.submit_block(data).connected()
    return node.submit_block(data.serialize(), data).connected()


def native_kernels() -> list[Any]:
    """The native kernel builds that run here: the portable one, and the ADX one if the CPU has
    BMI2/ADX (empty without a build)."""
    builds = []
    for name in ("_native", "_native_adx"):
        try:
            module = __import__(f"ctplugin.secp256k1.{name}", fromlist=["cpu_supported"])
        except ImportError:
            continue
        if module.cpu_supported():
            builds.append(module)
    return builds


def _dmult_paths() -> list[str]:
    """The double-multiplication paths this machine has: "scalar", and "ifma" (AVX-512 IFMA)."""
    builds = native_kernels()
    if not builds:
        return []
    names = ["scalar"]
    previous = builds[0]._dmult_backend()
    try:
        builds[0]._dmult_backend("ifma")
        names.append("ifma")
    except RuntimeError:
        pass
    finally:
        builds[0]._dmult_backend(previous)
    return names


@pytest.fixture(params=_dmult_paths())
def dmult_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every native build's double multiplications (the ring kernel's steps) on one path, for
    the test; restored after."""
    builds = native_kernels()
    previous = [b._dmult_backend(request.param) for b in builds]
    try:
        yield request.param
    finally:
        for build, name in zip(builds, previous):
            build._dmult_backend(name)
