"""``ctplugin.parallel``: work spread over the shared threads gives the plain loop's results and
errors, and a wallet proving its outputs side by side builds the bytes it builds alone."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctplugin.elements.chainparams import RangeProofKind
from ctplugin.elements.consensus import COIN
from ctplugin.parallel import side_by_side
from ctplugin.secp256k1 import kernel
from regtest.params import CTREGTEST, REGTEST_SEED, select_chain
from regtest.wallet import Payment, Wallet


@given(st.lists(st.integers(), max_size=12), st.integers(0, 5))
def test_results_are_the_plain_loops(items: list[int], threads: int) -> None:
    assert side_by_side(lambda x: x * x - 1, items, threads) == [x * x - 1 for x in items]


def test_the_first_failing_item_in_order_is_raised_after_every_item_ran() -> None:
    ran: list[int] = []
    lock = threading.Lock()

    def work(x: int) -> int:
        with lock:
            ran.append(x)
        if x in (3, 4):
            raise ValueError(x)
        return x

    with pytest.raises(ValueError) as raised:
        side_by_side(work, list(range(8)), 3)
    assert raised.value.args == (3,)
    assert sorted(ran) == list(range(8))


def test_the_first_item_runs_in_the_calling_thread() -> None:
    caller = threading.get_ident()
    where = side_by_side(lambda _: threading.get_ident(), [0, 1], 2)
    assert where[0] == caller


@pytest.fixture
def kernel_threads() -> Iterator[None]:
    previous = kernel.set_threads(0)
    yield
    kernel.set_threads(previous)


@pytest.mark.parametrize("kind", [RangeProofKind.BULLETPROOF, RangeProofKind.BORROMEAN])
def test_a_send_proves_the_same_bytes_on_one_thread_or_several(kind: RangeProofKind,
                                                               kernel_threads: None) -> None:
    def build(threads: int) -> bytes:
        kernel.set_threads(threads)
        payer = Wallet(REGTEST_SEED, range_proofs=kind)
        payer.scan_block(select_chain(CTREGTEST).genesis)
        payee = Wallet(b"payee seed for the parallel test", range_proofs=kind)
        return payer.build_transaction([Payment(5 * COIN, payee.new_address())], fee=900,
                                       height=1).serialize()

    assert build(1) == build(2)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity (not Linux)")
def test_the_caller_gets_its_cpus_back_and_shares_run_on_allowed_cpus() -> None:
    before = os.sched_getaffinity(0)
    seen = side_by_side(lambda _: os.sched_getaffinity(0), [0, 1, 2, 3], 2)
    assert os.sched_getaffinity(0) == before
    # the caller's share ran on the first CPU only when there is a second one for the workers
    assert seen[0] == ({min(before)} if len(before) > 1 else before)
    assert all(cpus <= before for cpus in seen)


def test_a_refused_placement_changes_nothing_but_the_placement(monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    def refuse(pid: int, cpus: object) -> None:
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(os, "sched_setaffinity", refuse, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert side_by_side(lambda x: -x, [1, 2, 3], 2) == [-1, -2, -3]


def test_a_nested_call_from_a_pool_task_runs_there_instead_of_waiting_on_the_pool() -> None:
    def inner(x: int) -> list[int]:
        return side_by_side(lambda y: x * 10 + y, [0, 1, 2], 2)

    result: list[list[list[int]]] = []
    runner = threading.Thread(target=lambda: result.append(side_by_side(inner, [1, 2, 3], 3)),
                              daemon=True)
    runner.start()
    runner.join(30)  # a pool worker waiting on the pool it occupies would never return
    assert result == [[[10, 11, 12], [20, 21, 22], [30, 31, 32]]]
