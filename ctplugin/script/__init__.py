"""Scripts and signatures: Elements sighashes, taproot commitments, Elements' full script
interpreter, and the Schnorr batch claims.

Modules (one concern each):

- ``sighash``: ``PrecomputedTransaction`` (per-transaction hash streams shared by all inputs),
  ``segwit_v0_sighash``, ``taproot_sighash``, ``legacy_sighash``;
- ``taproot``: TapLeaf/TapBranch/TapTweak with the ``/elements`` tags, ``ControlBlock``,
  ``TaprootOutput`` (output key, scriptPubKey, control blocks of a script tree);
- ``interpreter``: ``verify_script`` / ``verify_input`` (Elements' VerifyScript: legacy,
  P2SH, segwit v0, taproot, Elements' tapscript opcodes, every flag), ``eval_script``;
- ``checker``: ``SignatureChecker`` (Elements digests, ECDSA/BIP340, CLTV/CSV), immediate or
  recording ``DeferredChecks`` for the block batch; ``BitcoinSignatureChecker`` for Elements'
  unit-test vectors (Elements mode off);
- ``flags``: Elements' ``SCRIPT_VERIFY_*`` bits and our chain's BLOCK / STANDARD sets;
- ``errors``: ``ScriptError`` with Elements' ScriptErrorString texts (and our UNSUPPORTED, for
  Simplicity leaves only);
- ``standard``: Elements' Solver (``solve`` → ``TxoutType`` and solutions), ``is_push_only``,
  ``push_stack``: what the mempool policy classifies scripts with (docs/elements-regtest.md §8).

Facts: ``docs/sighash.md`` and Elements ``src/script/interpreter.cpp``; chain policy:
``docs/design.md`` "Scripts and signatures (our chain)".
"""
