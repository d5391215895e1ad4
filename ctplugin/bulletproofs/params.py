"""Our chain's range-proof parameters (docs/design.md "Chain parameters"), as constants.

m = 1, nbits = 64, n_gens = 256 seeded from G (Grin-compatible), blinding generator G, value
generator = the output's asset generator, extra_commit = the output's scriptPubKey (always
passed: an empty script is an empty, non-null extra commit), no min_value, strict parsing. The
validator and the wallet use exactly these through ``ctplugin.bulletproofs.consensus``.
"""

from __future__ import annotations

from ctplugin.secp256k1 import G

CONSENSUS_NBITS = 64
CONSENSUS_M = 1
CONSENSUS_N_GENS = 256
CONSENSUS_BLINDING_GEN = G
CONSENSUS_PROOF_LENGTH = 675
