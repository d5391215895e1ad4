"""Elements parser: ctplugin vs wallycore (C) vs python-elementstx, in the same run.

Per transaction: the median over the shared vectors (unique hex blobs) of each transaction's
median parse time, all three libraries parsing from bytes (no hex decoding).  Rows
``parse_txid_*`` add computing the txid.  ``parse_block_*`` is the largest vector block
(Liquid testnet, 217 kB, one 265-in/1002-out transaction): ctplugin parses the whole block,
wallycore (which has no block reader) parses its transactions from pre-cut slices.

Targets: ctplugin at most 3x wallycore's time per transaction (aim 2x) and at least
50x faster than python-elementstx.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.common import Row, make_row
from ctplugin.elements import Transaction, parse_block, parse_transaction
from ctplugin.timing import median_time
from harness.elements_vectors import load_entries

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "elements-vectors"
FIXTURES = ROOT / "tests" / "fixtures"
WALLYCORE_REFERENCE_US = 7.5  # docs/design.md: wallycore parse, median over the shared vectors


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


@dataclass(frozen=True)
class _Timings:
    """One library's per-transaction medians (seconds) and its time for the whole set."""

    parse: float
    txid: float
    from_hex: float
    whole_set: float


def _time_ctplugin(raws: list[bytes], repeat: int, number: int) -> _Timings:
    hexes = {raw: raw.hex() for raw in raws}
    return _Timings(
        parse=_per_tx_median(parse_transaction, raws, repeat, number),
        txid=_per_tx_median(lambda r: parse_transaction(r).txid, raws, repeat, number),
        from_hex=_per_tx_median(lambda r: Transaction.from_hex(hexes[r]), raws, repeat, number),
        # throughput over the whole set (total bytes / total time), not per-tx medians
        whole_set=median_time(lambda: [parse_transaction(r) for r in raws], repeat=repeat))


def _wallycore_parser() -> Callable[[bytes], object] | None:
    """wallycore's ``tx_from_bytes`` for Elements transactions with witnesses, if installed."""
    try:
        import wallycore
    except ImportError:
        return None
    flags = wallycore.WALLY_TX_FLAG_USE_ELEMENTS | wallycore.WALLY_TX_FLAG_USE_WITNESS
    return lambda raw: wallycore.tx_from_bytes(raw, flags)


def _time_wallycore(wally_parse: Callable[[bytes], object], raws: list[bytes], repeat: int,
                    number: int) -> _Timings:
    import wallycore

    flags = wallycore.WALLY_TX_FLAG_USE_ELEMENTS | wallycore.WALLY_TX_FLAG_USE_WITNESS
    hexes = {raw: raw.hex() for raw in raws}

    def wally_txid(raw: bytes) -> object:
        tx = wallycore.tx_from_bytes(raw, flags)
        return wallycore.tx_get_txid(tx) if wallycore.tx_get_num_inputs(tx) else None

    parse = _per_tx_median(wally_parse, raws, repeat, number)
    from_hex = _per_tx_median(lambda r: wallycore.tx_from_hex(hexes[r], flags), raws, repeat,
                              number)
    txid = _per_tx_median(wally_txid, raws, repeat, number)
    whole_set = median_time(lambda: [wally_parse(r) for r in raws], repeat=repeat)
    return _Timings(parse=parse, txid=txid, from_hex=from_hex, whole_set=whole_set)


def _time_elementstx(subset: list[bytes], repeat: int) -> float | None:
    """python-elementstx's per-transaction median, if installed."""
    try:
        import elementstx  # noqa: F401  (registers the elements chain)
        from bitcointx import select_chain_params

        select_chain_params("elements")
        from elementstx.core import CElementsTransaction
    except ImportError:
        return None
    return _per_tx_median(CElementsTransaction.deserialize, subset, repeat, 1)


def run(quick: bool, t_us: float) -> list[Row]:
    raws, blocks = _vectors()
    total_bytes = sum(len(r) for r in raws)
    median_size = statistics.median(len(r) for r in raws)
    repeat, number = (5, 20) if quick else (9, 100)
    rows: list[Row] = []

    def add(name: str, seconds: float, n: int, note: str = "", ref: float | None = None) -> None:
        rows.append(make_row(name, n, seconds, t_us, reference_t=ref, note=note))

    ours = _time_ctplugin(raws, repeat, number)
    wally_parse = _wallycore_parser()
    wally = _time_wallycore(wally_parse, raws, repeat, number) if wally_parse else None
    etx_subset = raws if not quick else raws[::4]
    etx = _time_elementstx(etx_subset, 3 if quick else 5)

    note = (f"{len(raws)} txs, median {median_size:.0f} B, "
            f"{total_bytes / ours.whole_set / 1e6:.0f} MB/s")
    if wally is not None:
        note += f"; {wally.parse / ours.parse:.1f}x faster than wallycore (target: <= 3x its time)"
    if etx is not None:
        note += f"; {etx / ours.parse:.0f}x faster than elementstx (target >= 50x)"
    add("parse_ctplugin", ours.parse, len(raws), note,
        ref=3 * wally.parse * 1e6 / t_us if wally is not None else None)
    if wally is not None:
        add("parse_wallycore", wally.parse, len(raws),
            f"tx_from_bytes; {total_bytes / wally.whole_set / 1e6:.0f} MB/s; reference 7.5 us "
            "from hex", ref=WALLYCORE_REFERENCE_US / t_us)
    if etx is not None:
        add("parse_elementstx", etx, len(etx_subset), "CElementsTransaction.deserialize")
    add("parse_txid_ctplugin", ours.txid, len(raws), "parse + txid (SHA-256 in C)")
    if wally is not None:
        add("parse_txid_wallycore", wally.txid, len(raws), "tx_from_bytes + tx_get_txid")
    add("parse_hex_ctplugin", ours.from_hex, len(raws),
        "Transaction.from_hex (hex decoding included)")
    if wally is not None:
        add("parse_hex_wallycore", wally.from_hex, len(raws),
            "tx_from_hex, as docs/design.md's 7.5 us reference")
    if blocks:
        _add_block_rows(max(blocks, key=len), wally_parse, repeat, max(1, number // 20), add)
    return rows


def _add_block_rows(big: bytes, wally_parse: Callable[[bytes], object] | None, repeat: int,
                    number: int, add: Callable[..., None]) -> None:
    """The largest vector block: parsed whole, with every txid, and by wallycore from slices."""
    block = parse_block(big)
    n_tx = len(block.transactions)
    seconds = median_time(lambda: parse_block(big), repeat=repeat, number=number)
    add("parse_block_ctplugin", seconds, 1,
        f"{len(big)} B, {n_tx} txs, {len(big) / seconds / 1e6:.0f} MB/s (whole block)")
    seconds = median_time(lambda: [t.txid for t in parse_block(big).transactions],
                          repeat=repeat, number=number)
    add("parse_block_txids_ctplugin", seconds, 1, "parse block + every txid")
    if wally_parse is not None:
        slices = [t.serialize() for t in block.transactions]
        seconds = median_time(lambda: [wally_parse(s) for s in slices], repeat=repeat,
                              number=number)
        add("parse_block_wallycore", seconds, 1, "its transactions, from pre-cut slices")
