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
