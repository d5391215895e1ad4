"""The benchmark's input blocks are valid blocks of their chain: a benchmark that measures the
rejection of a broken block measures nothing (``bench block``'s Elements rows once did: the
P2SH-P2WPKH inputs lost their redeem scripts when re-signed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import block as bench_block
from validator import Node


@pytest.mark.parametrize("chain", [bench_block.DEFAULT_CHAIN, bench_block.ELEMENTSREGTEST_BENCH])
def test_the_benchmark_blocks_connect(chain: str, tmp_path: Path) -> None:
    blocks = (bench_block.build_elements_blocks(3)
              if chain == bench_block.ELEMENTSREGTEST_BENCH
              else bench_block.build_blocks(3, chain))
    with Node.open(tmp_path / "node", bench_block.bench_params(chain)) as node:
        for raw in blocks[1:]:
            result = node.submit_block(raw)
            assert result.status == "connected", result.error
