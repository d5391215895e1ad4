"""Block connection as stages: stage 5 (``validator.verify``) is a pure function of picklable
work, verifiable in another process and over several blocks in one batch; timings come from one
stage timer."""

from __future__ import annotations

import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from ctplugin.batch import Claim
from ctplugin.elements import Block
from ctplugin.elements.chainparams import RangeProofKind
from ctplugin.errors import ParseError, ValidationError
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import N
from regtest.builder import ChainBuilder, build_demo_chain
from regtest.params import CTREGTEST, select_chain
from tests.conftest import connect_block, connect_upto, rebuild, with_output
from validator.node import Node
from validator.rules import foreseen_ranges
from validator.timing import StageTimer
from validator.verify import Prefetch, ProofWork, verify, verify_blocks


@pytest.fixture(scope="module")
def demo() -> ChainBuilder:
    """3 blocks of 2 wallet txs (two blinded outputs each)."""
    return build_demo_chain(n_blocks=3, txs_per_block=2, seed=b"test_validator_stages")


@pytest.fixture
def uncached(tmp_path: Path):
    """A node without a proof cache (every item stays in the work)."""
    with Node.open(tmp_path / "n", select_chain(CTREGTEST), use_cache=False) as n:
        yield n


def work_of(node: Node, block: Block) -> ProofWork:
    """Stages 1-4 of ``block`` on ``node``'s tip: its proof work."""
    v = node.validator
    v.check_block(block, node.tip)
    inputs = v.resolve_inputs(block)
    plan = v.plan(block, inputs.spent, v.known_transactions(block))
    return v.cache_pass(plan).work


def _bump_s(proof: bytes, offset: int) -> bytes:
    """The proof with the scalar at ``offset`` changed (still in [1, n))."""
    s = (int.from_bytes(proof[offset: offset + 32], "big") % (N - 1) + 1).to_bytes(32, "big")
    return proof[:offset] + s + proof[offset + 32:]


def bad_range(block: Block, tx_index: int, j: int) -> Block:
    """``block`` with output j of transaction tx_index carrying a wrong (well-formed) proof."""
    txs = list(block.transactions[1:])
    tx = txs[tx_index - 1]
    txs[tx_index - 1] = with_output(tx, j, range_proof=_bump_s(tx.outputs[j].range_proof, 0))
    return rebuild(block, txs)


def bad_surjection(block: Block, tx_index: int, j: int) -> Block:
    txs = list(block.transactions[1:])
    tx = txs[tx_index - 1]
    proof = tx.outputs[j].surjection_proof
    txs[tx_index - 1] = with_output(tx, j, surjection_proof=_bump_s(proof, len(proof) - 32))
    return rebuild(block, txs)


def _where(error: ValidationError) -> tuple[str, int | None, int | None]:
    return error.reason, error.tx_index, error.output_index


def _verify_where(work: ProofWork) -> tuple[str, int | None, int | None] | int:
    """Run in a worker process: the culprit, or the number of batch claims."""
    try:
        return verify(work)
    except ValidationError as exc:
        return _where(exc)


def test_work_pickles_and_verifies_in_another_process(uncached: Node,
                                                      demo: ChainBuilder) -> None:
    connect_upto(uncached, demo, 1)
    good = work_of(uncached, demo.blocks[2])
    assert good.batch and good.checks and len(good.claims) == 2
    bad = work_of(uncached, bad_range(demo.blocks[2], 2, 1))
    copy = pickle.loads(pickle.dumps(good))
    assert verify(copy) == verify(good) == good.n_claims
    with pytest.raises(ValidationError) as err:
        verify(bad)
    assert _where(err.value) == ("bad-txns-rangeproof-invalid", 2, 1)
    with ProcessPoolExecutor(max_workers=1) as pool:
        assert list(pool.map(_verify_where, [good, bad])) == [
            good.n_claims, ("bad-txns-rangeproof-invalid", 2, 1)]


def _fields(item: object) -> tuple[object, ...]:
    """An item as (class, label class, field values), a surjection item's targets as encodings."""
    values = tuple(getattr(v, "encodings", v) for v in item)  # type: ignore[attr-defined]
    return (type(item), type(item.label), *values)  # type: ignore[attr-defined]


def test_work_pickles_to_the_same_values(uncached: Node, demo: ChainBuilder) -> None:
    """ProofWork pickles as plain tuples (``ProofWork.__reduce__``); it unpickles to items of
    the same classes and values, and the outputs of one transaction keep sharing one target
    list (decoded once per transaction in the worker)."""
    connect_upto(uncached, demo, 1)
    work = work_of(uncached, demo.blocks[2])
    kinds = {type(i).__name__ for i in (*work.batch, *work.checks)}
    assert {"RangeItem", "SurjectionItem"} <= kinds
    copy = pickle.loads(pickle.dumps(work, protocol=pickle.HIGHEST_PROTOCOL))
    assert copy.claims == work.claims
    assert [type(c.label) for c in copy.claims] == [type(c.label) for c in work.claims]
    assert [_fields(i) for i in copy.batch] == [_fields(i) for i in work.batch]
    assert [_fields(i) for i in copy.checks] == [_fields(i) for i in work.checks]
    by_tx: dict[int, set[int]] = {}
    for item in copy.checks:
        by_tx.setdefault(item.label.tx_index, set()).add(id(item.targets))
    assert by_tx and all(len(ids) == 1 for ids in by_tx.values())
    assert verify(copy) == verify(work) == work.n_claims


def test_errors_survive_pickling() -> None:
    err = ValidationError("bad-txns-in-ne-out", tx_index=3, input_index=1, detail="x")
    copy = pickle.loads(pickle.dumps(err))
    assert (type(copy), copy.reason, copy.tx_index, copy.input_index, copy.output_index,
            copy.detail, str(copy)) == (ValidationError, "bad-txns-in-ne-out", 3, 1, None, "x",
                                        str(err))
    perr = pickle.loads(pickle.dumps(ParseError(7, "truncated")))
    assert (perr.offset, perr.reason, str(perr)) == (7, "truncated", "truncated at offset 7")


def test_verify_blocks_names_the_first_failing_block(uncached: Node,
                                                     demo: ChainBuilder) -> None:
    connect_upto(uncached, demo, 1)
    block2 = demo.blocks[2]
    w2 = work_of(uncached, block2)
    w2_bad_range = work_of(uncached, bad_range(block2, 1, 0))
    w2_bad_surj = work_of(uncached, bad_surjection(block2, 2, 1))
    connect_block(uncached, block2.serialize())
    w3 = work_of(uncached, demo.blocks[3])
    w3_bad_range = work_of(uncached, bad_range(demo.blocks[3], 2, 0))
    timer = StageTimer()
    assert verify_blocks([w2, w3], timer) is None
    assert {"claims", "msm", "surjection"} <= timer.seconds.keys()
    failing = verify_blocks([w2, w3_bad_range])
    assert failing is not None and failing[0] == 1
    assert _where(failing[1]) == ("bad-txns-rangeproof-invalid", 2, 0)
    # a check failing in an earlier block comes before a batch failure in a later one
    failing = verify_blocks([w2_bad_surj, w3_bad_range])
    assert failing is not None and failing[0] == 0
    assert _where(failing[1]) == ("bad-txns-surjectionproof-invalid", 2, 1)
    # within one block, the batch culprit comes before its checks (as ``verify``)
    both = work_of_pair(w2_bad_range, w2_bad_surj)
    failing = verify_blocks([both, w3])
    assert failing is not None and failing[0] == 0
    assert _where(failing[1]) == ("bad-txns-rangeproof-invalid", 1, 0)
    with pytest.raises(ValidationError) as err:
        verify(both)
    assert _where(err.value) == _where(failing[1])


def work_of_pair(batch_from: ProofWork, checks_from: ProofWork) -> ProofWork:
    return ProofWork(batch_from.claims, batch_from.batch, checks_from.checks)


def test_malformed_item_and_false_claim_the_lowest_label_is_named(uncached: Node,
                                                                  demo: ChainBuilder) -> None:
    connect_upto(uncached, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    truncated = txs[1].outputs[0].range_proof[:-1]
    txs[1] = with_output(txs[1], 0, range_proof=truncated)  # malformed: tx 2
    bad = bad_range(rebuild(block, txs), 1, 1)  # well-formed but false: tx 1
    with pytest.raises(ValidationError) as err:
        verify(work_of(uncached, bad))
    assert _where(err.value) == ("bad-txns-rangeproof-invalid", 1, 1)
    with pytest.raises(ValidationError, match="malformed") as err:
        verify(work_of(uncached, rebuild(block, txs)))
    assert _where(err.value) == ("bad-txns-rangeproof-invalid", 2, 0)


@pytest.mark.parametrize("threads", [1, 2])
def test_report_timings_are_the_stages(node: Node, demo: ChainBuilder, threads: int) -> None:
    connect_upto(node, demo, 1)
    previous = kernel.set_threads(threads)
    try:
        report = connect_block(node, demo.blocks[2].serialize())
    finally:
        kernel.set_threads(previous)
    # the validator's stages, then the node's block storage (block file + index entry) and the
    # chain manager's bookkeeping (undo record, index, mempool, events); with more than one
    # kernel thread the surjection rings run beside the scripts and the MSM (verify.Prefetch),
    # and "prefetch" is the wait for their verdicts
    middle = ["claims", "msm", "surjection"] if threads == 1 else \
        ["claims", "msm", "prefetch", "surjection"]
    assert list(report.timings) == ["parse", "check", "resolve", "plan", "cache", "scripts",
                                    *middle, "commit", "store", "chain"]
    assert report.total_seconds == sum(report.timings.values())
    assert report.batch_seconds == report.timings["claims"] + report.timings["msm"]
    assert report.items == {"range": 4, "surjection": 4, "script": 2, "schnorr": 2}
    assert report.cached == {"script": 0}
    assert report.n_msm_items == report.n_balance + report.n_range_proofs + 2 == 8


def test_verify_of_empty_work_is_trivially_true() -> None:
    assert verify(ProofWork()) == 0
    assert verify_blocks([]) is None
    assert verify_blocks([ProofWork(), ProofWork()]) is None


def test_a_false_prebuilt_claim_is_named_from_its_label() -> None:
    from validator.items import KIND_BALANCE, ItemLabel

    one_g = Claim(ItemLabel(4, KIND_BALANCE), None, free_scalars=(1).to_bytes(32, "big"),
                     free_points=_generator_packed())
    with pytest.raises(ValidationError) as err:
        verify(ProofWork([one_g]))
    assert (err.value.reason, err.value.tx_index) == ("bad-txns-in-ne-out", 4)


def _generator_packed() -> bytes:
    from ctplugin.secp256k1 import G

    return G.packed


def test_an_output_that_already_exists_is_a_bip30_verdict(node: Node, demo: ChainBuilder) -> None:
    """The chainstate refuses to overwrite an unspent output with a store error; the validator's
    commit stage turns it into the consensus verdict and nothing is written."""
    from validator import reasons
    from validator.block import ResolvedInputs

    connect_upto(node, demo, 2)
    block = demo.blocks[3]
    v = node.validator
    inputs = v.resolve_inputs(block)
    unspent = next((o, e) for o, e in node.data.chainstate.iter_utxos()
                   if o not in inputs.spent_points)
    forged = ResolvedInputs(inputs.spent, inputs.spent_points, [*inputs.created, unspent],
                            inputs.view)
    chainstate = node.data.chainstate
    before = chainstate.best_block()
    with pytest.raises(ValidationError) as err:
        v.commit(block, forged)
    assert err.value.reason == reasons.BAD_TXNS_BIP30
    assert chainstate.best_block() == before and chainstate.get(unspent[0]) == unspent[1]
    v.commit(block, inputs)  # the genuine block still connects (stage 6 alone: the chainstate)
    tip = chainstate.best_block()
    assert tip is not None and tip.hash == block.hash


def test_bip34_implies_bip30_from_the_height_the_genesis_coinbase_indicates() -> None:
    """Core's BIP34_IMPLIES_BIP30_LIMIT for our chains: where BIP30's database reads are
    skipped (commit's ``check_created``) and where they come back."""
    from dataclasses import replace

    from ctplugin.elements.script import script_num
    from validator.block import BIP34_HEIGHT, bip34_implies_bip30_limit

    genesis = select_chain(CTREGTEST).genesis
    coinbase = genesis.transactions[0]

    def with_script_sig(script_sig: bytes) -> Block:
        txin = replace(coinbase.inputs[0], script_sig=script_sig)
        tx = replace(coinbase, inputs=[txin, *coinbase.inputs[1:]])
        return replace(genesis, transactions=[tx])

    assert bip34_implies_bip30_limit(genesis) is None  # its scriptSig indicates no height
    assert bip34_implies_bip30_limit(with_script_sig(b"")) is None
    assert bip34_implies_bip30_limit(with_script_sig(b"\x53rest")) == 3  # OP_3
    assert bip34_implies_bip30_limit(with_script_sig(script_num(70_000) + b"x")) == 70_000
    assert bip34_implies_bip30_limit(with_script_sig(b"\x02\x00\x01")) == 256
    assert bip34_implies_bip30_limit(with_script_sig(b"\x02\x05\x00")) is None  # not minimal
    extra = replace(genesis, transactions=[coinbase, coinbase])
    assert bip34_implies_bip30_limit(extra) == BIP34_HEIGHT  # unvalidated transactions


def test_timeless_transactions_pass_every_timelock() -> None:
    """``is_timeless`` (a mempool transaction's timelocks are not evaluated again by a block)
    implies ``check_final`` and ``check_sequence_locks`` at any height, time and coin height."""
    from hypothesis import given
    from hypothesis import strategies as st

    from ctplugin.elements import Transaction, TxIn
    from validator.timelocks import check_final, check_sequence_locks, is_timeless

    u32 = st.integers(0, 0xFFFFFFFF)
    special = st.sampled_from([0, 1, 0xFFFFFFFF, 0xFFFFFFFE, 1 << 31, (1 << 31) | 5, 1 << 22])

    @given(st.integers(-3, 3), st.one_of(u32, special),
           st.lists(st.one_of(u32, special), min_size=1, max_size=3), u32, u32)
    def check(version: int, locktime: int, sequences: list[int], height: int,
              when: int) -> None:
        tx = Transaction(version=version, locktime=locktime,
                         inputs=[TxIn(prevout_hash=bytes([n + 1]) * 32, prevout_index=n,
                                      sequence=s) for n, s in enumerate(sequences)],
                         outputs=[])
        if is_timeless(tx):
            check_final(tx, 1, height, when)
            check_sequence_locks(tx, 1, lambda n: height, height, lambda h: when)

    check()


def _connect_where(node: Node, block: Block, threads: int) -> object:
    previous = kernel.set_threads(threads)
    try:
        return connect_block(node, block.serialize()).n_msm_items
    except ValidationError as exc:
        return _where(exc)
    finally:
        kernel.set_threads(previous)


def test_prefetch_gives_the_culprit_of_verify_alone(uncached: Node, demo: ChainBuilder,
                                                    tmp_path: Path) -> None:
    """With more than one kernel thread, connect starts the Bulletproof setup and the surjection
    rings beside the scripts (verify.Prefetch): every verdict and culprit is the one-thread
    connect's (which has no prefetch), and the prefetch's own results equal verify's."""
    connect_upto(uncached, demo, 1)
    alone = Node.open(tmp_path / "alone", select_chain(CTREGTEST), use_cache=False)
    connect_upto(alone, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    malformed = rebuild(block, [with_output(txs[0], 1, surjection_proof=b"\x01"), *txs[1:]])
    variants = [
        bad_range(block, 2, 1),
        bad_surjection(block, 1, 0),
        bad_surjection(bad_range(block, 2, 0), 1, 1),  # the surjection's label is lower
        bad_surjection(bad_range(block, 1, 1), 2, 0),  # the range proof's batch culprit first
        malformed,
    ]
    with alone:
        for variant in variants:
            one = _connect_where(alone, variant, 1)
            assert _connect_where(uncached, variant, 2) == one and isinstance(one, tuple)
        assert _connect_where(alone, block, 1) == 8  # 2 balances, 4 ranges, 2 signatures
    work = work_of(uncached, bad_surjection(block, 2, 1))
    prefetch = Prefetch(work)
    with pytest.raises(ValidationError) as err:
        verify(work, None, prefetch)
    assert _where(err.value) == ("bad-txns-surjectionproof-invalid", 2, 1)
    assert prefetch.done_kinds(work.checks) == prefetch.prepared and prefetch.prepared
    assert _connect_where(uncached, block, 2) == 8


def test_a_prefetch_uses_only_the_items_the_work_still_holds(uncached: Node,
                                                             demo: ChainBuilder) -> None:
    """A prefetch starts before the cache pass, so it may have built claims the work no longer
    holds (the cache vouched for those items) and miss items the work has; and its items are
    a forecast (``rules.foreseen_ranges``), so one may differ from the plan's. ``verify`` takes
    from it only members whose label and proof inputs are the work's own, and builds the rest:
    its verdicts are those of ``verify`` alone."""
    connect_upto(uncached, demo, 1)
    bad = bad_range(demo.blocks[2], 2, 1)
    work = work_of(uncached, bad)
    false = [i for i in work.batch if (i.label.tx_index, i.label.index) == (2, 1)]
    assert len(false) == 1 and len(work.batch) == 4
    # the false proof "cached": not in the work any more, yet built by the prefetch
    rest = [i for i in work.batch if i not in false]
    held = ProofWork(work.claims, rest, work.checks)
    prefetch = Prefetch(ProofWork([], work.batch, []), 1)
    assert verify(held, None, prefetch) == verify(ProofWork(work.claims, rest, work.checks))
    # the prefetch built only part of the work, and the false proof is among the rest
    prefetch = Prefetch(ProofWork([], rest[:2], []), 1, checks_later=True)
    with pytest.raises(ValidationError) as err:
        verify(work, None, prefetch)
    assert _where(err.value) == ("bad-txns-rangeproof-invalid", 2, 1)
    assert not prefetch.wants_checks and prefetch.done_kinds(work.checks) == prefetch.prepared
    # a forecast of the false proof's label that differs from the plan's item (here: the
    # proof as it should be) is not taken for it
    good = work_of(uncached, demo.blocks[2])
    honest = [i for i in good.batch if (i.label.tx_index, i.label.index) == (2, 1)]
    prefetch = Prefetch(ProofWork([], honest, []), 1)
    with pytest.raises(ValidationError) as err:
        verify(work, None, prefetch)
    assert _where(err.value) == ("bad-txns-rangeproof-invalid", 2, 1)
    # a prefetch whose block failed before stage 5 is joined without its check items
    Prefetch(ProofWork([], rest, []), 1, checks_later=True).join()


def test_foreseen_ranges_are_the_planned_ones(uncached: Node, demo: ChainBuilder) -> None:
    """The Bulletproofs a block's prefetch starts on before the plan are the plan's items, up
    to the decoded commitment the planner adds."""
    connect_upto(uncached, demo, 1)
    block = demo.blocks[2]
    planned = work_of(uncached, block).batch
    kinds = uncached.validator.params.range_proofs
    foreseen = [r for i, tx in enumerate(block.transactions) if i
                for r in foreseen_ranges(tx, i, kinds)]
    assert [r[:5] for r in foreseen] == [r[:5] for r in planned] and len(planned) == 4
    assert all(r.commitment_point is None for r in foreseen)
    assert foreseen_ranges(block.transactions[1], 1,
                           frozenset({RangeProofKind.BORROMEAN})) == []


def test_the_cache_pass_without_balance_keys_keeps_every_balance(node: Node,
                                                                 demo: ChainBuilder) -> None:
    """Proofs all cached (the transactions were accepted first) but no balance keys given:
    every balance equation stays in the work, labelled with its transaction's position."""
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    for tx in block.transactions[1:]:
        node.accept_transaction(tx.serialize())
    v = node.validator
    knowns = v.known_transactions(block)
    inputs = v.resolve_inputs(block, knowns)
    plan = v.plan(block, inputs.spent, knowns)
    work = v.cache_pass(plan).work
    assert not work.batch and not work.checks
    assert [c.label.tx_index for c in work.claims] == list(range(1, len(block.transactions)))
    every = v.cache_pass(plan, v.balance_keys(block, inputs, knowns)).work
    assert not every.claims and not every.batch and not every.checks
