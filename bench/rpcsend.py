"""The wallet's sends through the node (``python -m bench rpcsend [--quick] [--json]``), one
row per chain, each against the proving it does measured in the same run:

- ``rpc_sendtoaddress``: our Bulletproof chain (ctregtest): the default wallet sends to a
  confidential address of a second wallet (a payment and a change output, both blinded), one
  call at a time. Reference: proving two 64-bit Bulletproofs and two surjection proofs of the
  same shapes.
- ``rpc_sendtoaddress_elementsregtest``: the same send on ``ctplugin-elementsd
  -chain=elementsregtest`` with the CT tests' options (the wallet owns the genesis free coins
  with ``-anyonecanspendaremine``): Elements' Borromean range proofs (52 bits, exponent 0,
  docs/elements-regtest.md §7). Reference: two such Borromean proofs and two surjection proofs.

Each reference is timed in this process alternating with the sends (medians of each), so both
see the same machine load, and each starts on a quiet node (reference_t = the proving cost).
Targets (``TARGETS``, × the proving cost): ≤ 1.2 for ``rpc_sendtoaddress`` (the speed issue's),
≤ 1.3 for ``rpc_sendtoaddress_elementsregtest`` (the Elements-chain issue's).
Each row is expressed in the t measured around its own measurement (the machine is shared).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from bench.common import Row, make_row
from ctplugin import borromean, surjection
from ctplugin.bulletproofs import prove_output
from ctplugin.pedersen import commit, generator_generate_blinded
from ctplugin.timing import measure_t_us
from regtest.params import DEFAULT_CT_BITS, DEFAULT_CT_EXPONENT
from rpc.process import ELEMENTSD_COMMAND, NodeProcess

ELEMENTS_OPTIONS = ("-chain=elementsregtest", "-initialfreecoins=2100000000000000",
                    "-con_blocksubsidy=0", "-con_connect_genesis_outputs=1",
                    "-anyonecanspendaremine=1", "-blindedaddresses=1", "-fallbackfee=0.0002")
"""feature_confidential_transactions.py's options (docs/elements-regtest.md §9)."""
P2WPKH = b"\x00\x14" + bytes(20)
TARGETS = {"rpc_sendtoaddress": 1.2, "rpc_sendtoaddress_elementsregtest": 1.3}


def _surjections(asset: bytes, abf_in: bytes, r: int, k: int, gen_abf: bytes) -> None:
    in_gen = generator_generate_blinded(asset, abf_in)
    surjection.generate(input_assets=[asset], input_blinds=[abf_in], input_generators=[in_gen],
                        output_asset=asset, output_blind=gen_abf, seed=bytes([k, r % 256]) * 16,
                        output_generator=generator_generate_blinded(asset, gen_abf))


def bulletproof_proving(r: int) -> float:
    """Seconds to prove what a two-output send on our chain proves: two 64-bit Bulletproofs and
    two surjection proofs over one input."""
    asset = bytes(range(32))
    start = time.perf_counter()
    for k in range(2):
        abf = (1000 + 2 * r + k).to_bytes(32, "big")
        gen = generator_generate_blinded(asset, abf)
        prove_output(12345 + k, 99 + k, gen, bytes([r % 256, k]) * 16, P2WPKH,
                     message=asset[:20])
        _surjections(asset, (7).to_bytes(32, "big"), r, k, abf)
    return time.perf_counter() - start


def borromean_proving(r: int) -> float:
    """Seconds to prove what a two-output send on elementsregtest proves: two Borromean range
    proofs as Elements' wallet makes them (min value 1, exponent 0, 52 bits) and two surjection
    proofs over one input."""
    asset = bytes(range(32))
    start = time.perf_counter()
    for k in range(2):
        abf = (1000 + 2 * r + k).to_bytes(32, "big")
        vbf = (99 + k).to_bytes(32, "big")
        gen = generator_generate_blinded(asset, abf)
        value = 12345 + k
        borromean.elements.output_rangeproof(
            value, bytes([r % 256, k]) * 16, asset, abf, vbf, commit(value, 99 + k, gen), gen,
            P2WPKH, min_value=1, exp=DEFAULT_CT_EXPONENT, min_bits=DEFAULT_CT_BITS)
        _surjections(asset, (7).to_bytes(32, "big"), r, k, abf)
    return time.perf_counter() - start


def bench_sendtoaddress(node: NodeProcess, payer: str, sends: int,
                        proving: Callable[[int], float]) -> tuple[float, float]:
    """(median seconds of one send, median seconds of the proving it does); the two are timed
    alternately, so both see the same machine load."""
    node.call("createwallet", "bench")
    address = node.call("getnewaddress", path="/wallet/bench")
    node.call("sendtoaddress", address, Decimal("0.001"), path=payer)  # warm-up
    proving(0)
    sends_s, proves_s = [], []
    # one connection for the sends, as a client library keeps it (python-bitcoinrpc, the
    # test framework's AuthServiceProxy)
    node.call("getwalletinfo", path="/wallet/bench")  # the warm-up's deferred work is over
    with node.client(payer) as client:
        for r in range(sends):
            start = time.perf_counter()
            client.call("sendtoaddress", address, Decimal("0.001"))
            sends_s.append(time.perf_counter() - start)
            # A wallet call returns once the wallets have taken in every chain event before it
            # (docs/node-rpc.md §2.3): the node's deferred work for this send (the payee
            # wallet's scan and write) is over before the proving is timed, so it is charged
            # to neither.
            node.call("getwalletinfo", path="/wallet/bench")
            proves_s.append(proving(r + 1))
    sends_s.sort()
    proves_s.sort()
    return sends_s[len(sends_s) // 2], proves_s[len(proves_s) // 2]


def _row(name: str, sends: int, send: float, prove: float, t_here: float, what: str) -> Row:
    factor = TARGETS[name]
    return make_row(name, sends, send, t_here, reference_t=prove * 1e6 / t_here,
                    target_t=factor * prove * 1e6 / t_here,
                    note=f"proving {what}: {prove * 1e3:.1f} ms here; send/prove = "
                         f"{send / prove:.2f} (target <= {factor})")


def run(quick: bool, t_us: float) -> list[Row]:
    sends = 7 if quick else 25
    rows = []
    with tempfile.TemporaryDirectory(prefix="ctplugin-bench-rpcsend-") as tmp:
        root = Path(tmp)
        node = NodeProcess(root / "ctregtest").start()
        try:
            t_before = measure_t_us(300)
            send, prove = bench_sendtoaddress(node, "/wallet/", sends, bulletproof_proving)
            t_here = (t_before + measure_t_us(300)) / 2
        finally:
            node.stop()
        rows.append(_row("rpc_sendtoaddress", sends, send, prove, t_here,
                         "2 Bulletproofs + 2 surjection proofs"))
        node = NodeProcess(root / "elements", *ELEMENTS_OPTIONS,
                           command=ELEMENTSD_COMMAND).start(timeout=120)
        try:
            # a new wallet starts at the tip: a rescan finds the genesis free coins it owns
            # (-anyonecanspendaremine)
            node.call("createwallet", "payer")
            node.call("rescanblockchain", 0, path="/wallet/payer")
            t_before = measure_t_us(300)
            send, prove = bench_sendtoaddress(node, "/wallet/payer", sends, borromean_proving)
            t_here = (t_before + measure_t_us(300)) / 2
        finally:
            node.stop()
        rows.append(_row("rpc_sendtoaddress_elementsregtest", sends, send, prove, t_here,
                         "2 Borromean (52 bits, exp 0) + 2 surjection proofs"))
    return rows
