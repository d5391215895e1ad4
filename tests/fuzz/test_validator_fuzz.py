"""Hostile blocks and transactions: corrupted bytes give ParseError or ValidationError (never
another exception), and a rejected block leaves the chainstate untouched.

Random flips may hit bytes no rule covers (a scriptSig, the header time), so those tests accept
an accepted mutant. The consensus-covered mutants below may not be accepted: a block rebuilt
around a transaction whose range proof, surjection proof, value or asset commitment, explicit
amount, extra commit (scriptPubKey) or prevout changed, and a header whose prev hash, Merkle
root, height, challenge or solution changed, MUST be rejected — and
``test_the_mutant_tests_fail_on_a_validator_that_accepts_everything`` shows they would fail
on a validator whose checks are switched off."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.elements import Block, Transaction
from ctplugin.errors import EncodingError, ParseError, ValidationError
from regtest.builder import ChainBuilder, build_demo_chain
from regtest.params import CTREGTEST, select_chain
from tests.conftest import SLOW_SCALE, connect_block, rebuild, with_output
from validator import block as block_stage
from validator.node import Node
from validator.store import StoreError


@pytest.fixture(scope="module")
def chain():
    return build_demo_chain(n_blocks=2, txs_per_block=2, seed=b"validator fuzz wallet seed")


@pytest.fixture(scope="module")
def node(chain):
    with tempfile.TemporaryDirectory() as tmp, \
            Node.open(Path(tmp) / "n", select_chain(CTREGTEST)) as n:
        connect_block(n, chain.blocks[1].serialize())
        yield n


_flips = st.lists(st.tuples(st.integers(0, 10**9), st.integers(1, 255)), min_size=1,
                  max_size=4)


def _mutate(data: bytes, flips: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for pos, mask in flips:
        out[pos % len(out)] ^= mask
    return bytes(out)


@given(flips=_flips)
@settings(max_examples=int(40 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_corrupted_block_is_rejected_cleanly(node: Node, chain, flips) -> None:
    before = node.tip
    mutated = _mutate(chain.blocks[2].serialize(), flips)
    try:
        result = node.submit_block(mutated)
    except ParseError:
        assert node.tip == before
        return
    if not result.accepted:
        assert node.tip == before
        return
    # accepted: the flip hit bytes no rule covers (e.g. a scriptSig); undo for the next example
    assert node.tip.height == before.height + 1
    node.invalidate_block(node.tip.hash)
    assert node.tip == before


@given(flips=_flips)
@settings(max_examples=int(40 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_corrupted_transaction_is_rejected_cleanly(node: Node, chain, flips) -> None:
    mutated = _mutate(chain.blocks[2].transactions[1].serialize(), flips)
    try:
        node.accept_transaction(mutated)
    except (ParseError, ValidationError):
        return
    node.mempool.remove(list(node.mempool.entries))


@given(fraction=st.floats(0, 1, exclude_max=True))
@settings(max_examples=int(20 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_truncated_block_is_a_parse_error(node: Node, chain, fraction: float) -> None:
    raw = chain.blocks[2].serialize()
    with pytest.raises(ParseError):
        node.submit_block(raw[:int(fraction * len(raw))])


# ------------------------------------------------------------------------------------------------
# Consensus-covered mutants: each one MUST be rejected
# ------------------------------------------------------------------------------------------------

TX_FIELDS = ("range_proof", "surjection_proof", "value", "asset", "fee", "script_pubkey",
             "prevout")
HEADER_FIELDS = ("prev_hash", "merkle_root", "height", "challenge", "solution")


def _xor(data: bytes, pos: int, mask: int) -> bytes:
    out = bytearray(data)
    out[pos % len(out)] ^= mask
    return bytes(out)


def _commitment_flip(data: bytes, pos: int, mask: int) -> bytes:
    """Flip x-coordinate bits, or toggle the 08/09 (0a/0b) parity prefix: still well-formed."""
    pos %= len(data)
    return _xor(data, pos, mask if pos else 1)


def tx_mutant(chain: ChainBuilder, height: int, field: str, tx_pick: int, out_pick: int,
              pos: int, mask: int) -> bytes:
    """The block at ``height`` rebuilt (coinbase, Merkle root, witness commitment recomputed)
    around one transaction whose ``field`` changed, so only the rule covering it can catch it."""
    block = chain.blocks[height]
    txs = list(block.transactions[1:])
    i = tx_pick % len(txs)
    tx = txs[i]
    blinded = [j for j, o in enumerate(tx.outputs) if isinstance(o.value, bytes)]
    j = blinded[out_pick % len(blinded)]
    out = tx.outputs[j]
    if field == "range_proof":
        tx = with_output(tx, j, range_proof=_xor(out.range_proof, pos, mask))
    elif field == "surjection_proof":
        tx = with_output(tx, j, surjection_proof=_xor(out.surjection_proof, pos, mask))
    elif field == "value":
        assert isinstance(out.value, bytes)
        tx = with_output(tx, j, value=_commitment_flip(out.value, pos, mask))
    elif field == "asset":
        tx = with_output(tx, j, asset=_commitment_flip(out.asset, pos, mask))
    elif field == "script_pubkey":
        tx = with_output(tx, j, script_pubkey=_xor(out.script_pubkey, pos, mask))
    elif field == "fee":
        k = next(k for k, o in enumerate(tx.outputs) if o.is_fee)
        fee = tx.outputs[k].value
        assert isinstance(fee, int)
        tx = with_output(tx, k, value=fee + (mask if pos % 2 else -min(mask, fee - 1) or 1))
    else:  # prevout: another txid (another output INDEX of the same transaction may be an
        # equivalent coin, legitimately spendable while scripts are not executed)
        n = pos % len(tx.inputs)
        txin = tx.inputs[n]
        moved = replace(txin, prevout_hash=_xor(txin.prevout_hash, pos // 7, mask))
        tx = Transaction(version=tx.version, inputs=[*tx.inputs[:n], moved, *tx.inputs[n + 1:]],
                         outputs=tx.outputs, locktime=tx.locktime)
    txs[i] = tx
    return rebuild(block, txs).serialize()


def header_mutant(chain: ChainBuilder, height: int, field: str, pos: int, mask: int) -> bytes:
    block = chain.blocks[height]
    header = block.header
    if field in ("prev_hash", "merkle_root"):
        header = replace(header, **{field: _xor(getattr(header, field), pos, mask)})
    elif field == "height":
        header = replace(header, height=header.height + (mask if pos % 2 else -1))
    elif field == "challenge":
        header = replace(header, challenge=_xor(header.challenge, pos, mask))
    else:
        header = replace(header, solution=bytes((mask,)) * (1 + pos % 3))
    return Block(header=header, transactions=block.transactions).serialize()


def rejected(node: Node, raw: bytes) -> bool:
    """True iff the block is refused (a ParseError, or a verdict: not connected) and the tip
    did not move. An accepted mutant is invalidated again for the next example."""
    before = node.tip
    try:
        result = node.submit_block(raw)
    except ParseError:
        assert node.tip == before
        return True
    if not result.accepted:
        assert node.tip == before
        return True
    node.invalidate_block(result.hash)
    assert node.tip == before
    return False


_positions = st.integers(0, 10**6)
_masks = st.integers(1, 255)


def _tx_mutant_or_none(chain: ChainBuilder, *args: int | str) -> bytes | None:
    try:
        return tx_mutant(chain, 2, *args)  # type: ignore[arg-type]
    except EncodingError:  # the model refuses to build it (e.g. a script made oversize)
        return None


@given(field=st.sampled_from(TX_FIELDS), tx_pick=st.integers(0, 9), out_pick=st.integers(0, 9),
       pos=_positions, mask=_masks)
@settings(max_examples=int(60 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_consensus_covered_transaction_mutants_are_rejected(node: Node, chain: ChainBuilder,
                                                            field: str, tx_pick: int,
                                                            out_pick: int, pos: int,
                                                            mask: int) -> None:
    raw = _tx_mutant_or_none(chain, field, tx_pick, out_pick, pos, mask)
    if raw is not None:
        assert rejected(node, raw), f"a block with a changed {field} was accepted"


@given(field=st.sampled_from(HEADER_FIELDS), pos=_positions, mask=_masks)
@settings(max_examples=int(30 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_consensus_covered_header_mutants_are_rejected(node: Node, chain: ChainBuilder,
                                                       field: str, pos: int, mask: int) -> None:
    assert rejected(node, header_mutant(chain, 2, field, pos, mask)), \
        f"a block with a changed header {field} was accepted"


def test_the_mutant_tests_fail_on_a_validator_that_accepts_everything(
        chain: ChainBuilder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With stage 5 (every proof and balance) and the block checks switched off, mutants of
    every field class get accepted: the tests above can fail."""
    monkeypatch.setattr(block_stage, "verify", lambda work, timer=None, prefetch=None: 0)
    monkeypatch.setattr(block_stage.BlockValidator, "check_block",
                        lambda self, block, tip, checked=(): None)
    with Node.open(tmp_path / "lax", select_chain(CTREGTEST)) as lax:
        connect_block(lax, chain.blocks[1].serialize())
        accepted = set()
        for field in ("range_proof", "surjection_proof", "value", "asset", "fee",
                      "script_pubkey"):
            for pos in range(6):
                raw = _tx_mutant_or_none(chain, field, pos, pos, 40 + pos, 1 + pos)
                if raw is not None and not rejected(lax, raw):
                    accepted.add(field)
                    break
        for field in ("merkle_root", "height", "challenge", "solution"):
            try:
                if not rejected(lax, header_mutant(chain, 2, field, 3, 5)):
                    accepted.add(field)
            except StoreError:  # no verdict: only the store's own guard noticed
                accepted.add(field)
    # a height contradicting the parent is refused by the chain manager before any block
    # check (the block index keeps height = parent's + 1), so it stays rejected here
    assert accepted == {"range_proof", "surjection_proof", "value", "asset", "fee",
                        "script_pubkey", "merkle_root", "challenge", "solution"}
