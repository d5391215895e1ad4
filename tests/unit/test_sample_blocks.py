"""The sample blocks ``bench block`` measures (``regtest.sample_blocks``) are valid blocks of
their chain: a benchmark that times the rejection of a broken block measures nothing (the
Elements rows once did: the P2SH-P2WPKH inputs lost their redeem scripts when re-signed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from regtest import sample_blocks
from regtest.params import DEFAULT_CHAIN
from validator import Node


@pytest.mark.parametrize("chain", [DEFAULT_CHAIN, sample_blocks.ELEMENTSREGTEST_BENCH])
def test_the_sample_blocks_connect(chain: str, tmp_path: Path) -> None:
    blocks = (sample_blocks.build_elements_blocks(3)
              if chain == sample_blocks.ELEMENTSREGTEST_BENCH
              else sample_blocks.build_blocks(3, chain))
    with Node.open(tmp_path / "node", sample_blocks.bench_params(chain)) as node:
        for raw in blocks[1:]:
            result = node.submit_block(raw)
            assert result.status == "connected", result.error
