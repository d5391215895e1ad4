"""Surjection proofs inside block validation: a bad proof is named at its output, the output's
asset commitment is decoded once (shared with its range claim), and a transaction's target
list is decoded once for all its outputs."""

from __future__ import annotations

import pytest

from ctplugin.errors import ValidationError
from ctplugin.pedersen import generator_generate
from ctplugin.secp256k1.params import N
from regtest.builder import ChainBuilder, build_demo_chain
from tests.conftest import connect_block, connect_upto, rebuild, with_output
from validator.items import SurjectionTargets, VerifyContext
from validator.node import Node


@pytest.fixture(scope="module")
def demo() -> ChainBuilder:
    """3 blocks of 2 wallet txs (two blinded outputs each; later blocks spend blinded coins)."""
    return build_demo_chain(n_blocks=3, txs_per_block=2, seed=b"test_validator_surjection")


def _bump_last_s(proof: bytes) -> bytes:
    s = (int.from_bytes(proof[-32:], "big") % (N - 1) + 1).to_bytes(32, "big")
    return proof[:-32] + s


@pytest.mark.parametrize("height", [2, 3])
def test_bad_surjection_proof_is_named(node: Node, demo: ChainBuilder, height: int) -> None:
    connect_upto(node, demo, height - 1)
    block = demo.blocks[height]
    txs = list(block.transactions[1:])
    proof = txs[1].outputs[1].surjection_proof
    txs[1] = with_output(txs[1], 1, surjection_proof=_bump_last_s(proof))
    with pytest.raises(ValidationError) as err:
        connect_block(node, rebuild(block, txs).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.output_index) == \
        ("bad-txns-surjectionproof-invalid", 2, 1)
    assert node.tip.hash == demo.blocks[height - 1].hash  # nothing written
    connect_block(node, block.serialize())


def test_proofs_swapped_between_outputs_fail_at_the_first(node: Node,
                                                          demo: ChainBuilder) -> None:
    """Each output's proof is valid for the other output's commitment only: the output
    generator used must be the output's own (not one decoded for another output)."""
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    a, b = (txs[0].outputs[j].surjection_proof for j in (0, 1))
    txs[0] = with_output(with_output(txs[0], 0, surjection_proof=b), 1, surjection_proof=a)
    with pytest.raises(ValidationError) as err:
        connect_block(node, rebuild(block, txs).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.output_index) == \
        ("bad-txns-surjectionproof-invalid", 1, 0)


def test_malformed_surjection_proof_is_named(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    proof = txs[0].outputs[1].surjection_proof
    txs[0] = with_output(txs[0], 1, surjection_proof=proof[:-1])
    with pytest.raises(ValidationError, match="malformed") as err:
        connect_block(node, rebuild(block, txs).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.output_index) == \
        ("bad-txns-surjectionproof-invalid", 1, 1)


def test_targets_decoded_once_and_shared_decodes_agree(node: Node, demo: ChainBuilder) -> None:
    """Verifying with the range claims' decoded generators gives the same verdicts as decoding
    again; one prepared target list per transaction, equal to its generators."""
    connect_upto(node, demo, 2)
    block = demo.blocks[3]
    validator = node.validator
    spent, *_ = validator.resolve_inputs(block)
    plans = [validator.plan_transaction(tx, i, spent[i])
             for i, tx in enumerate(block.transactions) if i]
    ctx = VerifyContext()
    for plan in plans:
        for r in plan.ranges:
            r.claim(ctx)
    decoded = ctx.decoded
    for plan in plans:
        items = plan.surjections
        assert len(items) >= 2
        assert {s.output_encoding for s in items} <= decoded.keys()
        assert all(s.targets is items[0].targets for s in items)
        prepared = items[0].targets.prepared()
        assert prepared is not None and items[0].targets.prepared() is prepared
        generators = items[0].targets.generators()
        assert generators is not None
        assert [g.point.packed for g in generators] == list(prepared.packed)
        for item in items:
            assert decoded[item.output_encoding] == item.output_point()
            item.check(ctx)
            item.check(VerifyContext())


def test_target_list_with_repeats_and_an_undecodable_entry() -> None:
    asset = bytes(range(32))
    blinded = generator_generate(bytes(32)).serialize()
    targets = SurjectionTargets((b"\x01" + asset, blinded, b"\x01" + asset, blinded))
    prepared = targets.prepared()
    assert prepared is not None
    packed = generator_generate(asset).point.packed
    assert prepared.packed[0] == prepared.packed[2] == packed
    assert prepared.packed[1] == prepared.packed[3] != packed
    x_off_curve = next(x for x in range(1, 100)
                       if pow(x ** 3 + 7, (2 ** 256 - 2 ** 32 - 977 - 1) // 2,
                              2 ** 256 - 2 ** 32 - 977) != 1)
    bad = SurjectionTargets((b"\x01" + asset, b"\x0a" + x_off_curve.to_bytes(32, "big")))
    assert bad.prepared() is None and bad.generators() is None

