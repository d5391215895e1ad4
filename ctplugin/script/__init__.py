"""Scripts and signatures of our chain: Elements sighashes, taproot commitments, a
template-restricted interpreter with Elements' opcode sets, and the Schnorr batch claims.

Modules (one concern each):

- ``sighash``: ``PrecomputedTransaction`` (per-transaction hash streams shared by all inputs),
  ``segwit_v0_sighash``, ``taproot_sighash``, ``legacy_sighash``;
- ``taproot``: TapLeaf/TapBranch/TapTweak with the ``/elements`` tags, ``ControlBlock``,
  ``TaprootOutput`` (output key, scriptPubKey, control blocks of a script tree);
- ``interpreter``: ``verify_input`` (VerifyScript for our template set: bare OP_TRUE, P2WPKH,
  P2WSH, P2TR key and script path with leaf 0xC4; anything else UNSUPPORTED), ``eval_script``;
- ``checker``: ``SignatureChecker`` (digests, ECDSA/BIP340, CLTV/CSV), immediate or recording
  ``DeferredChecks`` for the block batch;
- ``flags``: Elements' ``SCRIPT_VERIFY_*`` bits and our chain's BLOCK / STANDARD sets;
- ``errors``: ``ScriptError`` with Elements' ScriptErrorString texts (and our UNSUPPORTED);
- ``standard``: Elements' Solver (``solve`` → ``TxoutType`` and solutions), ``is_push_only``,
  ``push_stack``: what the mempool policy classifies scripts with (docs/elements-regtest.md §8).

Facts and vectors: ``docs/sighash.md``; chain policy: ``docs/design.md`` "Scripts and
signatures (our chain)".
"""
