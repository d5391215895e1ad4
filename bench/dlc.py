"""DLC benchmarks: adaptor points (the P2P Derivatives article's table), one 5 × 20 point, adaptor
signatures, and verifying every adaptor signature of the 3 × 10 contract including its points.

Inputs as the peers measured (docs/dlc.md §9): oracle i's key sk = SHA256("oracle-i"),
nonce k_ij = SHA256("nonce-i-j"), digit message SHA256("0" | "1") (rust-dlc's untagged hash).
Every ``dlc_points_*`` run starts from the decoded announcements (keys and nonces as points) and
includes building its tables. Rows are per job (``n`` says what a job is) except
``dlc_adaptor_sign`` and the ``dlc_contract_*`` rows (per signature). ``reference_t`` is the
issue's target (in µs) divided by the nominal t of 34 µs (docs/design.md §10), so "vs ref" compares
load-independent t figures with the target. Each row's t is the mean of a t measurement right
before and right after that row (the machine is shared: one t per run drifts with the load).
"""

from __future__ import annotations

import operator
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from bench.common import Row, make_row
from ctplugin.dlc import adaptor_points as ap
from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc.builder import Wallet, numeric_contract_info, numeric_offer
from ctplugin.dlc.contract import Contract
from ctplugin.dlc.digits import decompose
from ctplugin.dlc.messages import OfferDlc
from ctplugin.dlc.multi_oracle import DifferenceParams
from ctplugin.dlc.oracle import DigitDecompositionEvent, Oracle, OracleAnnouncement, OracleInfo
from ctplugin.dlc.payout import (
    PayoutFunction,
    PayoutPoint,
    PolynomialPiece,
    RoundingInterval,
    RoundingIntervals,
)
from ctplugin.elements import Transaction
from ctplugin.hashes import sha256
from ctplugin.secp256k1 import ct, kernel
from ctplugin.timing import measure_t_us, median_time
from regtest import wallet as regtest_wallet
from regtest.builder import ChainBuilder
from regtest.params import DEFAULT_CHAIN, REGTEST_SEED, select_chain
from regtest.wallet.dlc import DlcParty
from validator import Node

TARGET_US = {
    "dlc_points_memo": 3000.0,
    "dlc_points_memo_parallel": 3000.0,
    "dlc_point_5x20": 500.0,
    "dlc_adaptor_sign": 140.0,
    "dlc_verify_all": 300_000.0,
}
PEER_NOTE = {
    "dlc_points_naive": "rust-dlc article 1935 ms",
    "dlc_points_factorized": "article 519 ms",
    "dlc_points_precompute": "article 142 ms",
    "dlc_points_memo": "target 3 ms; article 42, node-dlc 54, coincurve 11 ms",
    "dlc_points_memo_parallel": "target 3 ms; article 24 ms",
    "dlc_point_5x20": "target 0.5 ms; ddk-ts 4.68 ms",
    "dlc_adaptor_sign": "target 0.14 ms; ddk-ts 0.143 ms",
    "dlc_verify_all": "target 300 ms; ddk-ts 1788 ms",
}


def peer_oracles(nb_oracles: int, nb_nonces: int) -> list[OracleInfo]:
    infos = []
    for i in range(nb_oracles):
        key = ct.base_mul(sha256(f"oracle-{i}".encode())).xonly()
        nonces = [ct.base_mul(sha256(f"nonce-{i}-{j}".encode())).xonly()
                  for j in range(nb_nonces)]
        infos.append(OracleInfo.from_xonly(key, nonces))
    return infos


def all_outcome_entries(nb_oracles: int, nb_digits: int) -> list[ap.Entry]:
    return [tuple((i, decompose(v, 2, nb_digits)) for i in range(nb_oracles))
            for v in range(1 << nb_digits)]


def _timed(fn: object, **kwargs: int) -> tuple[float, float]:
    """(median seconds of ``fn``, t in µs measured right before and after it). The machine is
    shared, so the unit is re-measured around every row rather than once per run."""
    before = measure_t_us(400)
    seconds = median_time(fn, **kwargs)  # type: ignore[arg-type]
    return seconds, (before + measure_t_us(400)) / 2


NOMINAL_T_US = 34.0
"""docs/design.md: t is about 34 µs on this machine kind when it is not shared."""


def _row(name: str, n: int, seconds: float, t_us: float) -> Row:
    target = TARGET_US.get(name)
    return make_row(name, n, seconds, t_us,
                    target_t=target / NOMINAL_T_US if target is not None else None,
                    note=PEER_NOTE.get(name, ""))


def _contract_rows(offer: OfferDlc, bob: Wallet, bob_collateral: int, repeat: int,
                   suffix: str = "") -> list[Row]:
    """``dlc_contract_build`` / ``_sign_all`` / ``_verify_all`` (per adaptor signature) of the
    Bitcoin contract: the accepter builds it and signs every CET; the offerer rebuilds it
    (points included) and batch-verifies every signature."""
    bob_params = bob.params(bob_collateral)
    build_seconds, t_build = _timed(lambda: Contract.build(offer, bob_params), repeat=repeat)
    contract = Contract.build(offer, bob_params)
    count = len(contract.entries)
    holder: list[list[ea.AdaptorSignature]] = []

    def sign() -> None:
        holder[:] = [contract.sign_adaptor_signatures(bob.funding_secret, offerer=False)]

    sign_seconds, t_sign = _timed(sign, repeat=repeat)
    sigs = holder[0]

    def verify() -> None:
        fresh = Contract.build(offer, bob_params)
        assert all(fresh.verify_adaptor_signatures(bob.funding_pubkey, sigs, offerer=False))

    verify_seconds, t_verify = _timed(verify, repeat=repeat)
    note = f"{len(contract.cets)} CETs, {count} adaptor signatures"
    return [make_row(f"dlc_contract_build{suffix}", count, build_seconds / count, t_build,
                     note=note),
            make_row(f"dlc_contract_sign_all{suffix}", count, sign_seconds / count, t_sign,
                     note=note),
            make_row(f"dlc_contract_verify_all{suffix}", count, verify_seconds / count, t_verify,
                     note=note + "; rebuild incl. points + batch verify, per signature")]


def _realistic_contract(quick: bool, t_us: float) -> list[Row]:
    """rust-dlc's dlc-manager bench contract, with coarser rounding so Python finishes in
    seconds: 3 oracles × 17 binary digits, threshold 2, bounded difference (minSupportExp 7,
    maxErrorExp 8), offer payout 0 → floor at 45000 → linear → cap at 55000 → max, 2 BTC,
    rounding modulus 1,000,000 sat (rust-dlc's bench: 1 sat)."""
    oracles = [Oracle(sha256(f"oracle-{i}".encode())) for i in range(3)]
    event = DigitDecompositionEvent(2, False, "usd/btc", 0, 17)
    announcements = [o.announce("btcusd", event) for o in oracles]
    total = 200_000_000
    top = (1 << 17) - 1
    function = PayoutFunction((
        PolynomialPiece((PayoutPoint(0, 0), PayoutPoint(45_000, 0))),
        PolynomialPiece((PayoutPoint(45_000, 0), PayoutPoint(55_000, total))),
        PolynomialPiece((PayoutPoint(55_000, total), PayoutPoint(top, total)))))
    rounding = RoundingIntervals((RoundingInterval(0, 1_000_000),))
    alice = Wallet(sha256(b"alice-fund"), sha256(b"alice-coin"), 150_000_000, 1)
    bob = Wallet(sha256(b"bob-fund"), sha256(b"bob-coin"), 150_000_000, 2)
    offer = numeric_offer(alice, announcements, 2, function, rounding, total_collateral=total,
                          offer_collateral=total // 2, num_digits=17,
                          params=DifferenceParams(8, 7, False))
    return _contract_rows(offer, bob, total // 2, 1 if quick else 3)


# --- on our chain ------------------------------------------------------------------------------

ONCHAIN_TOTAL = 200_000_000
ONCHAIN_DIGITS = 10


def onchain_contract(announcements: list[OracleAnnouncement]) -> tuple[
        PayoutFunction, RoundingIntervals]:
    """The issue's contract: 2 of 3 oracles, 10 binary digits, piecewise-linear offer payout
    (0 up to 200, linear to the whole collateral at 800, then flat), rounding 1,000,000 sat."""
    function = PayoutFunction((
        PolynomialPiece((PayoutPoint(0, 0), PayoutPoint(200, 0))),
        PolynomialPiece((PayoutPoint(200, 0), PayoutPoint(800, ONCHAIN_TOTAL))),
        PolynomialPiece((PayoutPoint(800, ONCHAIN_TOTAL), PayoutPoint(1023, ONCHAIN_TOTAL)))))
    return function, RoundingIntervals((RoundingInterval(0, 1_000_000),))


def _onchain(quick: bool) -> list[Row]:
    """``dlc_onchain_setup``: offer + accept + sign + finalize of the contract on our chain by
    two node wallets (every CET adaptor signature made and verified on both sides, both change
    outputs and the confidential funding output blinded and proven, funding inputs signed),
    reported per party (each party builds the contract, signs every CET and verifies every
    counterparty signature, as the three Bitcoin rows of the same contract add up to); the note
    gives the two-party total. ``dlc_execute``: from the attestations to a CET the validator's
    mempool accepted (trie look-up, decryption, co-signature, two Bulletproofs and surjection
    proofs, script check, mempool acceptance on a node without proof cache)."""
    oracles = [Oracle.from_seed(f"bench oracle {i}".encode()) for i in range(3)]
    event = DigitDecompositionEvent(2, False, "usd/btc", 0, ONCHAIN_DIGITS)
    announcements = [o.announce("btcusd", event, 1_700_000_000) for o in oracles]
    function, rounding = onchain_contract(announcements)
    repeat = 1 if quick else 3

    # The Bitcoin contract of the same shape, for the comparison rows.
    alice_btc = Wallet(sha256(b"alice-fund"), sha256(b"alice-coin"), 150_000_000, 1)
    bob_btc = Wallet(sha256(b"bob-fund"), sha256(b"bob-coin"), 150_000_000, 2)
    btc_offer = numeric_offer(alice_btc, announcements, 2, function, rounding,
                              total_collateral=ONCHAIN_TOTAL,
                              offer_collateral=ONCHAIN_TOTAL // 2, num_digits=ONCHAIN_DIGITS)
    rows = _contract_rows(btc_offer, bob_btc, ONCHAIN_TOTAL // 2, repeat, "_2of3x10")

    alice = regtest_wallet.Wallet(REGTEST_SEED)
    bob = regtest_wallet.Wallet(b"bench dlc bob")
    chain = ChainBuilder([alice, bob], miner_script=b"\x51")
    txs: dict[bytes, Transaction] = {tx.txid: tx for tx in chain.genesis.transactions}
    with tempfile.TemporaryDirectory() as tmp, Node.open(tmp, select_chain(DEFAULT_CHAIN),
                                                          use_cache=False) as node:
        def mine(*added: Transaction) -> None:
            for tx in added:
                node.accept_transaction(tx.serialize())
                chain.add(tx)
            block = chain.mine()
            node.submit_block(block.serialize()).connected()
            txs.update((tx.txid, tx) for tx in block.transactions)

        mine(alice.build_transaction([regtest_wallet.Payment(400_000_000, bob.new_address())],
                                     fee=1000, height=1))
        parties = DlcParty(alice, txs.get), DlcParty(bob, txs.get)
        info = numeric_contract_info(announcements, 2, function, rounding,
                                     total_collateral=ONCHAIN_TOTAL,
                                     num_digits=ONCHAIN_DIGITS)
        height = chain.next_height
        results: list[object] = []

        def setup() -> None:
            offer, alice_secrets = parties[0].offer(info, ONCHAIN_TOTAL // 2, fee_rate=1,
                                                    cet_locktime=height,
                                                    refund_locktime=height + 100, height=height)
            bob_view, accept, bob_secrets = parties[1].accept(offer, height=height)
            _, sign, _ = parties[0].sign(offer, accept, alice_secrets)
            funding = parties[1].finalize(bob_view, sign, bob_secrets)
            results[:] = [bob_view, bob_secrets, sign, funding]

        seconds, t_setup = _timed(setup, repeat=repeat)
        bob_view, bob_secrets, sign, funding = results
        count = len(bob_view.entries)  # type: ignore[attr-defined]
        rows.append(make_row(
            "dlc_onchain_setup", 2, seconds / 2, t_setup,
            note=f"per party; both parties {seconds * 1e3:.0f} ms; {len(bob_view.closings)} "  # type: ignore[attr-defined]
                 f"CETs, {count} adaptor signatures each way, confidential funding"))
        mine(funding)  # type: ignore[arg-type]
        outcomes = iter(range(230, 1023, 7))

        def execute() -> None:
            value = next(outcomes)
            attestations = {i: oracles[i].attest(announcements[i], value) for i in (0, 2)}
            cet = parties[1].execute(bob_view, bob_secrets,  # type: ignore[arg-type]
                                     sign.cet_adaptor_signatures,  # type: ignore[attr-defined]
                                     attestations)
            node.accept_transaction(cet)
            node.remove_transactions([cet.txid])

        seconds, t_execute = _timed(execute, repeat=5 if quick else 15)
        rows.append(make_row("dlc_execute", 1, seconds, t_execute,
                             target_t=50_000.0 / t_execute,
                             note="attestations -> CET accepted by the mempool (target 50 ms)"))
    by_name = {r.name: r for r in rows}
    bitcoin_t = sum(by_name[f"dlc_contract_{k}_2of3x10"].t * count
                    for k in ("build", "sign_all", "verify_all"))
    setup_row = by_name["dlc_onchain_setup"]
    rows[rows.index(setup_row)] = replace(
        setup_row, reference_t=bitcoin_t, target_t=1.5 * bitcoin_t,
        note=setup_row.note + "; ref = the three _2of3x10 rows, target 1.5 x them")
    return rows


def _subset_sums_worker(table: bytes, rows: list[int], prefixes: list[tuple[int, ...]]) -> bytes:
    return kernel.backend.subset_sums_var(table, [list(map(operator.add, rows, p))
                                                  for p in prefixes])


def _process_row(infos: list[OracleInfo], prefixes: list[tuple[int, ...]], repeat: int) -> Row:
    """The process-parallel alternative to ``memo_parallel``: the parent builds the digit table,
    two worker processes (started before timing) build their half of the paths and sum them.
    Pickling the table and prefixes and the result bytes is the cost threads do not pay."""
    with ProcessPoolExecutor(max_workers=2) as pool:
        pool.submit(_subset_sums_worker, b"", [], []).result()  # start the workers
        half = len(prefixes) // 2

        def job() -> bytes:
            points = ap.DigitPoints(infos, 2)
            offset = points.combined_offset((0, 1, 2))
            rows = [offset + 2 * j for j in range(10)]
            futures = [pool.submit(_subset_sums_worker, points.table, rows, part)
                       for part in (prefixes[:half], prefixes[half:])]
            return b"".join(f.result() for f in futures)

        assert job() == ap.compute_grouped_packed(ap.DigitPoints(infos, 2), (0, 1, 2), prefixes)
        seconds, local_t = _timed(job, repeat=repeat * 3)
    row = make_row("dlc_points_memo_processes", len(prefixes), seconds, local_t,
                   note="memo with the subset sums in 2 worker processes (comparison)")
    return row


def run(quick: bool, t_us: float) -> list[Row]:
    rows = []
    repeat = 3 if quick else 7
    infos = peer_oracles(3, 10)
    entries = all_outcome_entries(3, 10)
    prefixes = [decompose(v, 2, 10) for v in range(1 << 10)]
    for strategy in ap.STRATEGIES:
        slow = strategy in ("naive", "factorized")
        if strategy.startswith("memo"):
            # Exact t-of-n form: one oracle set, one prefix per point (what contracts produce).
            threads = 2 if strategy == "memo_parallel" else 1

            def job(threads: int = threads) -> object:
                return ap.compute_grouped_packed(ap.DigitPoints(infos, 2), (0, 1, 2), prefixes,
                                                 threads)
        else:
            def job(strategy: ap.Strategy = strategy) -> object:
                return ap.compute_packed(ap.DigitPoints(infos, 2), entries, strategy)

        seconds, local_t = _timed(job, repeat=1 if (slow and quick) else (
            3 if slow else repeat * 3))
        rows.append(_row(f"dlc_points_{strategy}", len(entries), seconds, local_t))

    rows.append(_process_row(infos, prefixes, repeat))

    big = peer_oracles(5, 20)
    outcome = decompose(0xA5A5A, 2, 20)
    entry = tuple((i, outcome) for i in range(5))
    seconds, local_t = _timed(lambda: ap.compute_packed(ap.DigitPoints(big, 2), [entry],
                                                        "factorized"), repeat=repeat, number=20)
    rows.append(_row("dlc_point_5x20", 1, seconds, local_t))

    points = [p for p in ap.compute(ap.DigitPoints(infos, 2), entries, "memo")]
    secret = sha256(b"funding key")
    messages = [sha256(v.to_bytes(4, "big")) for v in range(len(entries))]
    count = 64 if quick else 256
    # Per signature, signing a batch (ddk-ts's 0.143 ms is 1024 signatures in 146 ms); the
    # note gives a lone ``encrypt`` call too.
    batch = list(zip(points[:count], messages))
    seconds, local_t = _timed(lambda: ea.encrypt_many(secret, batch), repeat=repeat)
    single, _ = _timed(lambda: [ea.encrypt(secret, p, m) for p, m in batch], repeat=repeat)
    row = _row("dlc_adaptor_sign", 1, seconds / count, local_t)
    rows.append(Row(row.name, row.n, row.us, row.t, row.reference_t,
                    f"{row.note}; batch of {count}, one call each: {single / count * 1e6:.0f} us"))

    signatures = [ea.encrypt(secret, p, m) for p, m in zip(points, messages)]
    pubkey = ct.base_mul(secret)

    def verify_all() -> None:
        blob = ap.compute_grouped_packed(ap.DigitPoints(infos, 2), (0, 1, 2), prefixes, 2)
        fresh = [ap.Point.from_packed(blob[64 * i: 64 * i + 64]) for i in range(len(prefixes))]
        assert all(ea.verify_many(pubkey, list(zip(signatures, messages, fresh))))

    seconds, local_t = _timed(verify_all, repeat=max(3, repeat // 2))
    rows.append(_row("dlc_verify_all", len(signatures), seconds, local_t))
    rows += _realistic_contract(quick, t_us)
    rows += _onchain(quick)
    if not kernel.IS_NATIVE:
        rows.append(Row("note_pure_python_kernel", 0, 0.0, 0.0, None,
                        "the native kernel is not built: figures are for the reference backend"))
    return rows
