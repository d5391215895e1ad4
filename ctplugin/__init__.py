"""ctplugin: validate Elements-style confidential transactions, fast.

Layers (each depends only on the ones above it):

- ``ctplugin.secp256k1``  group arithmetic: value types, constant-time secret ops (coincurve),
  variable-time public-data kernel (native C: MSM, batch decoding, scalar vectors).
- ``ctplugin.pedersen``   Elements/secp256k1-zkp generators and Pedersen commitments.
- ``ctplugin.elements``   Elements consensus serialization (transactions, blocks, hashes).
- ``ctplugin.bulletproofs`` secp256k1-zkp production-format range proofs.
- ``ctplugin.surjection`` secp256k1-zkp asset surjection proofs.
- ``ctplugin.dlc``        numeric-outcome Discreet Log Contracts.

Everything in this package is a pure function over bytes: no I/O.
"""

__version__ = "0.1.0"
