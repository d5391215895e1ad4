"""``make demo`` (``python -m validator.demo``) end to end on a small chain."""

from __future__ import annotations

import io

from apps.demo import run


def test_demo_reports_blocks_cache_hits_and_the_culprit() -> None:
    out = io.StringIO()
    assert run(n_blocks=2, txs_per_block=2, out=out) == 0
    text = out.getvalue()
    assert "cold: 2 blocks" in text
    assert "range proofs cached 4/4" in text
    assert "rejected" in text and "bad-txns-rangeproof-invalid" in text
    assert "culprit named correctly" in text


def test_demo_output_explains_itself() -> None:
    """What a first reader of ``make demo`` tripped over: a file name of a temporary file that
    is gone, t explained only in the first line, a "ms total" header read as one column, and
    "0 entries ... 66 inserts" looking contradictory."""
    out = io.StringIO()
    assert run(n_blocks=1, txs_per_block=1, out=out) == 0
    text = out.getvalue()
    assert ".dat" not in text and "->" not in text
    lines = text.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("height"))
    assert "ms total" not in header and "surj ms" not in header
    assert "milliseconds" in lines[lines.index(header) - 1]
    legend = lines[lines.index(header) + 2]  # after the one block's row
    assert legend.startswith("counts:") and "in t" in legend
    assert "secp256k1 point multiplication" in lines[0]
    cache = lines[-1]
    assert "consumed when its block connects" in cache and "entries" not in cache
