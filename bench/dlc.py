"""DLC benchmarks: adaptor points (the P2P Derivatives article's table), one 5 × 20 point, adaptor
signatures, and verifying every adaptor signature of the 3 × 10 contract including its points.

Inputs as the peers measured (../shared/notes/dlc.md §9): oracle i's key sk = SHA256("oracle-i"),
nonce k_ij = SHA256("nonce-i-j"), digit message SHA256("0" | "1") (rust-dlc's untagged hash).
Every ``dlc_points_*`` run starts from the decoded announcements (keys and nonces as points) and
includes building its tables. Rows are per job (``n`` says what a job is) except
``dlc_adaptor_sign`` (per signature). ``reference_t`` is the issue's target in t units of this run.
"""

from __future__ import annotations

from bench.common import Row, make_row, median_time
from ctplugin.dlc import adaptor_points as ap
from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc.digits import decompose
from ctplugin.dlc.oracle import OracleInfo
from ctplugin.hashes import sha256
from ctplugin.secp256k1 import ct, kernel

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


def _row(name: str, n: int, seconds: float, t_us: float) -> Row:
    target = TARGET_US.get(name)
    return make_row(name, n, seconds, t_us,
                    reference_t=target / t_us if target is not None else None,
                    note=PEER_NOTE.get(name, ""))


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

        seconds = median_time(job, repeat=1 if (slow and quick) else (3 if slow else repeat * 3))
        rows.append(_row(f"dlc_points_{strategy}", len(entries), seconds, t_us))

    big = peer_oracles(5, 20)
    outcome = decompose(0xA5A5A, 2, 20)
    entry = tuple((i, outcome) for i in range(5))
    seconds = median_time(lambda: ap.compute_packed(ap.DigitPoints(big, 2), [entry],
                                                    "factorized"), repeat=repeat, number=20)
    rows.append(_row("dlc_point_5x20", 1, seconds, t_us))

    points = [p for p in ap.compute(ap.DigitPoints(infos, 2), entries, "memo")]
    secret = sha256(b"funding key")
    messages = [sha256(v.to_bytes(4, "big")) for v in range(len(entries))]
    count = 64 if quick else 256
    seconds = median_time(lambda: [ea.encrypt(secret, p, m) for p, m in
                                   zip(points[:count], messages)], repeat=repeat)
    rows.append(_row("dlc_adaptor_sign", 1, seconds / count, t_us))

    signatures = [ea.encrypt(secret, p, m) for p, m in zip(points, messages)]
    pubkey = ct.base_mul(secret)

    def verify_all() -> None:
        fresh = [ap.Point.from_packed(p) for p in ap.compute_grouped_packed(
            ap.DigitPoints(infos, 2), (0, 1, 2), prefixes, 2)]
        assert all(ea.verify_many(pubkey, list(zip(signatures, messages, fresh))))

    seconds = median_time(verify_all, repeat=max(3, repeat // 2))
    rows.append(_row("dlc_verify_all", len(signatures), seconds, t_us))
    if not kernel.IS_NATIVE:
        rows.append(Row("note_pure_python_kernel", 0, 0.0, 0.0, None,
                        "the native kernel is not built: figures are for the reference backend"))
    return rows
