"""Discreet Log Contracts for numeric outcomes (dlcspecs, interoperable with rust-dlc).

One module per concern:

- ``oracle``: announcements, attestations, BIP340 signature points, digit message hashing, a
  deterministic test oracle (``Oracle.from_seed``; ``ctplugin oracle``);
- ``digits``: digit decomposition of outcomes;
- ``payout``: payout curves (polynomial, hyperbola), rounding, the CET set (constant ranges);
- ``compression``: digit-prefix groupings of an outcome interval;
- ``multi_oracle``: t-of-n combinations and the bounded-difference prefix algorithm;
- ``trie``: outcome look-up at execution time;
- ``adaptor_points``: every CET's adaptor point, with selectable strategies;
- ``ecdsa_adaptor``: ECDSA adaptor signatures (secp256k1-zkp compatible);
- ``transactions``: funding, CETs, refund, fees, sighash, witnesses (python-bitcointx), the
  Bitcoin transactions of rust-dlc interop and its vectors;
- ``elements_tx``: the same contract's transactions on our (Elements) chain: explicit fee
  outputs, confidential payouts, Elements segwit v0 sighashes, Elements weights for fees;
- ``messages``: offer / accept / sign messages (rust-dlc JSON, read and written; the
  ``elements`` part of an offer for our chain);
- ``wire``: their byte serialization (identical to rust-dlc's for every dlcspecs vector);
- ``contract``: the chain-independent terms (``ContractTerms``: CETs, adaptor entries and
  points), the adaptor signatures over a contract's sighashes (``AdaptorSigned``), the Bitcoin
  contract and its offer / accept / sign flow and execution on attestation;
- ``elements_contract``: a contract on our chain (``ElementsContract``): its blinding comes from
  the wallet (``OutputBlinder``; ``regtest.wallet.dlc`` is the party);
- ``builder``: synthetic parties and offers (examples, tests, benchmarks);
- ``errors``: ``DlcError`` (a ``CtpluginError``) with a stable ``reason``.
"""
