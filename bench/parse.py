"""Elements parser: ctplugin vs wallycore (C) vs python-elementstx, in the same run.

Per transaction: the median over the shared vectors (unique hex blobs) of each transaction's
median parse time, all three libraries parsing from bytes (no hex decoding).  Rows
``parse_txid_*`` add computing the txid.  ``parse_block_*`` is the largest vector block
(Liquid testnet, 217 kB, one 265-in/1002-out transaction): ctplugin parses the whole block,
wallycore (which has no block reader) parses its transactions from pre-cut slices.

Targets (issue 4): ctplugin at most 3x wallycore's time per transaction (aim 2x) and at least
50x faster than python-elementstx.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

from bench.common import Row, make_row
from ctplugin.elements import Transaction, parse_block, parse_transaction
from harness.elements_vectors import load_entries
from harness.timing import median_time

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "elements-vectors"
FIXTURES = ROOT / "tests" / "fixtures"
WALLYCORE_REFERENCE_US = 7.5  # design.md: wallycore parse, median over the shared vectors


def _vectors() -> tuple[list[bytes], list[bytes]]:
    txs = load_entries([SHARED / "transactions.json", FIXTURES / "elements_transactions.json"],
                       "transactions")
    blocks = load_entries([SHARED / "blocks.json", FIXTURES / "elements_blocks.json"], "blocks")
    return ([bytes.fromhex(e["hex"]) for e in txs],
            [bytes.fromhex(e["hex"]) for e in blocks if e["kind"] == "block"])


def _per_tx_median(parse: Callable[[bytes], object], raws: list[bytes], repeat: int,
                   number: int) -> float:
    return statistics.median(
        median_time(lambda raw=raw: parse(raw), repeat=repeat, number=number) for raw in raws)


def run(quick: bool, t_us: float) -> list[Row]:
    raws, blocks = _vectors()
    total_bytes = sum(len(r) for r in raws)
    median_size = statistics.median(len(r) for r in raws)
    repeat, number = (5, 20) if quick else (9, 100)
    rows: list[Row] = []

    def add(name: str, seconds: float, n: int, note: str = "", ref: float | None = None) -> None:
        rows.append(make_row(name, n, seconds, t_us, reference_t=ref, note=note))

    ours = _per_tx_median(parse_transaction, raws, repeat, number)
    ours_txid = _per_tx_median(lambda r: parse_transaction(r).txid, raws, repeat, number)
    hexes = {raw: raw.hex() for raw in raws}
    ours_hex = _per_tx_median(lambda r: Transaction.from_hex(hexes[r]), raws, repeat, number)
    # throughput over the whole set (total bytes / total time), not per-tx medians
    all_ours = median_time(lambda: [parse_transaction(r) for r in raws], repeat=repeat)

    wally_row = None
    try:
        import wallycore

        flags = wallycore.WALLY_TX_FLAG_USE_ELEMENTS | wallycore.WALLY_TX_FLAG_USE_WITNESS

        def wally_parse(raw: bytes) -> object:
            return wallycore.tx_from_bytes(raw, flags)

        def wally_txid(raw: bytes) -> object:
            tx = wallycore.tx_from_bytes(raw, flags)
            return wallycore.tx_get_txid(tx) if wallycore.tx_get_num_inputs(tx) else None

        wally = _per_tx_median(wally_parse, raws, repeat, number)
        wally_hex = _per_tx_median(lambda r: wallycore.tx_from_hex(hexes[r], flags), raws,
                                   repeat, number)
        wally_t = _per_tx_median(wally_txid, raws, repeat, number)
        all_wally = median_time(lambda: [wally_parse(r) for r in raws], repeat=repeat)
        wally_row = wally
    except ImportError:
        wally = wally_t = all_wally = wally_hex = None

    etx = None
    try:
        import elementstx  # noqa: F401  (registers the elements chain)
        from bitcointx import select_chain_params

        select_chain_params("elements")
        from elementstx.core import CElementsTransaction

        subset = raws if not quick else raws[::4]
        etx = _per_tx_median(CElementsTransaction.deserialize, subset, 3 if quick else 5, 1)
    except ImportError:
        pass

    note = f"{len(raws)} txs, median {median_size:.0f} B, {total_bytes / all_ours / 1e6:.0f} MB/s"
    if wally_row is not None:
        note += f"; {wally_row / ours:.1f}x faster than wallycore (target: <= 3x its time)"
    if etx is not None:
        note += f"; {etx / ours:.0f}x faster than elementstx (target >= 50x)"
    add("parse_ctplugin", ours, len(raws), note,
        ref=3 * wally_row * 1e6 / t_us if wally_row is not None else None)
    if wally is not None and all_wally is not None and wally_t is not None:
        add("parse_wallycore", wally, len(raws),
            f"tx_from_bytes; {total_bytes / all_wally / 1e6:.0f} MB/s; reference 7.5 us from hex",
            ref=WALLYCORE_REFERENCE_US / t_us)
    if etx is not None:
        add("parse_elementstx", etx, len(raws) if not quick else len(raws[::4]),
            "CElementsTransaction.deserialize")
    add("parse_txid_ctplugin", ours_txid, len(raws), "parse + txid (SHA-256 in C)")
    if wally_t is not None:
        add("parse_txid_wallycore", wally_t, len(raws), "tx_from_bytes + tx_get_txid")
    add("parse_hex_ctplugin", ours_hex, len(raws), "Transaction.from_hex (hex decoding included)")
    if wally_hex is not None:
        add("parse_hex_wallycore", wally_hex, len(raws),
            "tx_from_hex, as design.md's 7.5 us reference")

    if blocks:
        big = max(blocks, key=len)
        block = parse_block(big)
        n_tx = len(block.transactions)
        seconds = median_time(lambda: parse_block(big), repeat=repeat, number=max(1, number // 20))
        add("parse_block_ctplugin", seconds, 1,
            f"{len(big)} B, {n_tx} txs, {len(big) / seconds / 1e6:.0f} MB/s (whole block)")
        seconds = median_time(lambda: [t.txid for t in parse_block(big).transactions],
                              repeat=repeat, number=max(1, number // 20))
        add("parse_block_txids_ctplugin", seconds, 1, "parse block + every txid")
        if wally is not None:
            slices = [t.serialize() for t in block.transactions]
            seconds = median_time(lambda: [wally_parse(s) for s in slices], repeat=repeat,
                                  number=max(1, number // 20))
            add("parse_block_wallycore", seconds, 1, "its transactions, from pre-cut slices")
    return rows
