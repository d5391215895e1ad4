"""Cross-check and test-data helpers shared by ``bench`` and ``tests`` (not installed: they run
from the checkout).

- ``harness.zkp``: the C reference, secp256k1-zkp as wallycore bundles it, called through ctypes
  (surjection proofs today; range proofs and signatures as they land), for cross-checks in tests
  and the ``*_ref`` rows of the benchmarks.
- ``harness.interop``: our model to and from wallycore and python-elementstx (test dependencies),
  through the consensus bytes.
- ``harness.elements_vectors``: loading the shared Elements vector files.

The product packages (``ctplugin``, ``validator``, ``regtest``, ``rpc``, ``replay``, ``apps``)
never import it: what a command needs lives there (the unit t: ``ctplugin.timing``; vector-file
checks: ``ctplugin.elements.vectors``, ``ctplugin.bulletproofs.vectors``; the node as a child
process: ``rpc.process``).
"""
