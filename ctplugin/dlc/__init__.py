"""Discreet Log Contracts for numeric outcomes (dlcspecs, interoperable with rust-dlc).

One module per concern:

- ``oracle``: announcements, attestations, BIP340 signature points, digit message hashing;
- ``digits``: digit decomposition of outcomes;
- ``payout``: payout curves (polynomial, hyperbola), rounding, the CET set (constant ranges);
- ``compression``: digit-prefix groupings of an outcome interval;
- ``multi_oracle``: t-of-n combinations and the bounded-difference prefix algorithm;
- ``trie``: outcome look-up at execution time;
- ``adaptor_points``: every CET's adaptor point, with selectable strategies;
- ``ecdsa_adaptor``: ECDSA adaptor signatures (secp256k1-zkp compatible);
- ``transactions``: funding, CETs, refund, fees, sighash, witnesses (python-bitcointx);
- ``messages``: offer / accept / sign messages (rust-dlc JSON form);
- ``wire``: their byte serialization (identical to rust-dlc's for every dlcspecs vector);
- ``contract``: the offer / accept / sign flow and execution on attestation;
- ``builder``: synthetic parties and offers (examples, tests, benchmarks);
- ``errors``: ``DlcError`` (a ``CtpluginError``) with a stable ``reason``.
"""
