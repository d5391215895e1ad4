"""The block pipeline carries ONE prepared-block value from ``BlockValidator.prepare`` to
commit (docs/architecture.md "Block connection, in stages"): the node's stage API hands back
exactly what the validator made, the header time is judged once per block, and a block
submitted with its parsed form is neither parsed nor serialized again."""

from __future__ import annotations

import dataclasses
from unittest import mock

import pytest

from ctplugin.elements import parse_block
from validator import PreparedBlock, Stage, verify
from validator.block import BlockValidator
from validator.node import Node


def test_prepare_block_returns_the_validators_value_and_commit_takes_it(
        node: Node, replay_blocks: list[bytes]) -> None:
    """``Node.prepare_block`` returns what ``BlockValidator.prepare`` made (no copy field by
    field); its ``work`` verifies and ``commit_block`` connects it with the counts it holds."""
    raw = replay_blocks[1]
    made: list[PreparedBlock] = []
    prepare = BlockValidator.prepare

    def recording(self: BlockValidator, *args: object, **kwargs: object) -> PreparedBlock:
        prepared = prepare(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(prepared)
        return prepared

    with mock.patch.object(BlockValidator, "prepare", recording):
        prepared = node.prepare_block(raw)
    assert made == [prepared] and made[0] is prepared
    assert prepared.raw == raw and prepared.tip == node.tip
    assert prepared.hash == parse_block(raw).hash and prepared.height == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        prepared.work = prepared.work  # type: ignore[misc]
    verify(prepared.work, prepared.timer)
    report = node.commit_block(prepared)
    assert node.tip.hash == prepared.hash
    assert (report.items, report.cached) == (prepared.items, prepared.cached)
    assert report.n_range_proofs == prepared.n_range_proofs
    assert list(report.timings)[:2] == [Stage.PARSE, Stage.CHECK]


def test_the_header_time_is_judged_once_per_block(node: Node,
                                                   replay_blocks: list[bytes]) -> None:
    """Through the stage API (prepare, then commit: the replay's deferred modes) and through
    ``submit_block`` the header time is checked exactly once. (A block submitted on top of a
    block committed through the stage API connects: the chain manager once left it "stored".)"""
    calls: list[int] = []
    check = BlockValidator.check_block_time

    def counting(time: int, median_time_past: int, now: float) -> None:
        calls.append(time)
        check(time, median_time_past, now)

    with mock.patch.object(BlockValidator, "check_block_time", staticmethod(counting)):
        prepared = node.prepare_block(replay_blocks[1])
        node.commit_block(prepared, verified=False)
        node.mark_verified(prepared.hash)
        assert calls == [prepared.block.header.time]
        calls.clear()
        result = node.submit_block(replay_blocks[2])
        assert result.accepted, result.bip22
        assert calls == [parse_block(replay_blocks[2]).header.time]


def test_submit_block_with_its_parsed_block_parses_and_serializes_nothing(
        node: Node, replay_blocks: list[bytes]) -> None:
    """submitblock's way: the RPC decoded the block, the node stores those very bytes."""
    raw = replay_blocks[1]
    block = parse_block(raw)
    with mock.patch("validator.node.parse_block", side_effect=AssertionError("parsed again")), \
            mock.patch.object(type(block), "serialize",
                              side_effect=AssertionError("serialized again")):
        result = node.submit_block(raw, block)
    assert result.accepted
    assert node.read_block(block.hash) == raw


def test_commit_refuses_a_block_prepared_on_another_tip(node: Node,
                                                        replay_blocks: list[bytes]) -> None:
    from validator import ChainstateConflictError

    stale = node.prepare_block(replay_blocks[1])
    assert node.submit_block(replay_blocks[1]).accepted
    with pytest.raises(ChainstateConflictError, match="tip moved"):
        node.commit_block(stale)
