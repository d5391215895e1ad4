"""Measurement and cross-check harness shared by ``bench``, ``tests`` and ``apps``.

- ``harness.timing``: the unit t (one coincurve ``PublicKey.multiply``, measured in the same run)
  and median timing.
- ``harness.zkp``: the C reference, secp256k1-zkp as wallycore bundles it, called through ctypes
  (surjection proofs today; range proofs and signatures as they land), for cross-checks in tests
  and the ``*_ref`` rows of the benchmarks.
- ``harness.interop``: our model to and from wallycore and python-elementstx (test dependencies),
  through the consensus bytes.
- ``harness.elements_vectors``, ``harness.bulletproof_vectors``: loading and checking the shared
  vector files (tests, benchmarks, and the ``ctplugin elements|bulletproofs check`` commands).
- ``harness.node``: a regtest node subprocess (free port, given data directory, always stopped)
  for the integration tests and the rpc benchmark; HTTP only, it imports nothing of the node.

The product layers (``ctplugin``, ``validator``, ``regtest``, ``rpc``, ``replay``) never import it.
"""
