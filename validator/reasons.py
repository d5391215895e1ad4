"""Reject reasons: the stable strings a ``ValidationError.reason`` carries (one place for all).

Elements' own strings where Elements has one (so a client comparing against elementsd sees the
same reasons); where Elements folds a failure into ``bad-txns-in-ne-out`` without saying which
check failed (VerifyAmounts returns false for all of these), the check is named. Only the
validator judges: these come from ``validator`` (rules, block connection, mempool), never from
the store or the library. Layers above use them as ``validator.reasons.BAD_TXNS_IN_NE_OUT``
(exported by ``validator``).
"""

from __future__ import annotations

# --- transactions, context-free (CheckTransaction) --------------------------------------------

BAD_TXNS_VIN_EMPTY = "bad-txns-vin-empty"
BAD_TXNS_VOUT_EMPTY = "bad-txns-vout-empty"
BAD_TXNS_OVERSIZE = "bad-txns-oversize"
BAD_TXNS_VOUT_NEGATIVE = "bad-txns-vout-negative"
BAD_TXNS_VOUT_TOOLARGE = "bad-txns-vout-toolarge"
BAD_TXNS_TXOUTTOTAL_TOOLARGE = "bad-txns-txouttotal-toolarge"
BAD_TXNS_INPUTS_DUPLICATE = "bad-txns-inputs-duplicate"
BAD_TXNS_PREVOUT_NULL = "bad-txns-prevout-null"
BAD_CB_LENGTH = "bad-cb-length"
BAD_CB_FEE = "bad-cb-fee"
BAD_PEGIN_UNSUPPORTED = "bad-pegin-unsupported"
"""Peg-ins parse but are rejected on our chain (docs/design.md)."""

# --- transactions, contextual (CheckTxInputs, VerifyAmounts) ----------------------------------

BAD_TXNS_INPUTS_MISSINGORSPENT = "bad-txns-inputs-missingorspent"
BAD_TXNS_PREMATURE_SPEND_OF_COINBASE = "bad-txns-premature-spend-of-coinbase"
BAD_TXNS_FEE_OUTOFRANGE = "bad-txns-fee-outofrange"
BAD_TXNS_IN_NE_OUT = "bad-txns-in-ne-out"
"""The Pedersen balance: inputs + issuances ≠ outputs + fees."""
BAD_TXNS_RANGEPROOF_INVALID = "bad-txns-rangeproof-invalid"
"""A range proof that is malformed or does not verify, or (a Borromean proof, as in Elements) that
proves min_value 0 for a spendable output."""
BAD_TXNS_RANGEPROOF_MISSING = "bad-txns-rangeproof-missing"
"""A blinded value without a range proof."""
BAD_TXNS_RANGEPROOF_UNEXPECTED = "bad-txns-rangeproof-unexpected"
"""An explicit value with a non-empty range proof."""
BAD_TXNS_SURJECTIONPROOF_INVALID = "bad-txns-surjectionproof-invalid"
BAD_TXNS_SURJECTIONPROOF_MISSING = "bad-txns-surjectionproof-missing"
BAD_TXNS_SURJECTIONPROOF_UNEXPECTED = "bad-txns-surjectionproof-unexpected"
BAD_TXNS_ASSET_INVALID = "bad-txns-asset-invalid"
"""An asset generator that does not decode (x ≥ p, not on the curve)."""
BAD_TXNS_VALUE_INVALID = "bad-txns-value-invalid"
"""A value commitment that does not decode, or a spent explicit value outside (0, MAX_MONEY]."""
BAD_TXNS_VOUT_ZERO_SPENDABLE = "bad-txns-vout-zero-spendable"
"""An explicit zero value on a spendable script."""
BAD_TXNS_ISSUANCE_INVALID = "bad-txns-issuance-invalid"
"""An explicit issuance amount that is 0 or out of range, a blinded one without its proof, or a
non-empty proof on an explicit one."""
BAD_TXNS_REISSUANCE_TOKEN = "bad-txns-reissuance-token"
"""A reissuance whose spent input is not the blinded token."""
BAD_TXNS_REISSUANCE_INFLATION = "bad-txns-reissuance-inflation"
"""Inflation keys on a reissuance."""

VERIFY_AMOUNTS = frozenset({
    BAD_TXNS_IN_NE_OUT, BAD_TXNS_RANGEPROOF_INVALID, BAD_TXNS_RANGEPROOF_MISSING,
    BAD_TXNS_RANGEPROOF_UNEXPECTED, BAD_TXNS_SURJECTIONPROOF_INVALID,
    BAD_TXNS_SURJECTIONPROOF_MISSING, BAD_TXNS_SURJECTIONPROOF_UNEXPECTED, BAD_TXNS_ASSET_INVALID,
    BAD_TXNS_VALUE_INVALID, BAD_TXNS_VOUT_ZERO_SPENDABLE, BAD_TXNS_ISSUANCE_INVALID,
    BAD_TXNS_REISSUANCE_TOKEN, BAD_TXNS_REISSUANCE_INFLATION,
})
"""The checks of Elements' VerifyAmounts (src/confidential_validation.cpp): it returns false for
each of them alike, and CheckTxInputs (src/consensus/tx_verify.cpp) reports that false as
``bad-txns-in-ne-out`` ("value in != value out"). ``elementsd_reason`` folds them so."""


def elementsd_reason(reason: str) -> str:
    """The reason elementsd gives a client for ``reason``: one of ``VERIFY_AMOUNTS`` is
    ``bad-txns-in-ne-out`` (the named check stays in our own detail), any other is itself."""
    return BAD_TXNS_IN_NE_OUT if reason in VERIFY_AMOUNTS else reason

# --- blocks -------------------------------------------------------------------------------------

BAD_PREVBLK = "bad-prevblk"
"""The block does not extend the tip it is checked against, or its parent is known invalid."""
PREV_BLK_NOT_FOUND = "prev-blk-not-found"
"""The block's parent is unknown (Core's AcceptBlockHeader reason)."""
BAD_BLK_HEIGHT = "bad-blk-height"
TIME_TOO_OLD = "time-too-old"
"""The header's time is not after the median time of its previous 11 blocks (Core's
ContextualCheckBlockHeader); the header is invalid for good."""
TIME_TOO_NEW = "time-too-new"
"""The header's time is more than MAX_FUTURE_BLOCK_TIME ahead of the node's clock; not a verdict
on the block (it may be submitted again later), so it is not remembered."""
BLOCK_PROOF_INVALID = "block-proof-invalid"
"""The solution does not satisfy the challenge (with OP_TRUE: not empty), is longer than the
chain's ``max_block_sig_size``, or a dynafed header (never active on our chains)."""
BAD_DIFFBITS = "bad-diffbits"
"""The header's challenge is not the previous block's (Elements' CheckChallenge: "incorrect
proof of work"); before dynafed every block repeats the genesis challenge."""
BAD_VERSION = "bad-version"
"""Block version below 2, 3 or 4 once BIP34, BIP66 or BIP65 is active (Elements writes the
version into the reason, ``bad-version(0x00000001)``; here it is the detail)."""
BAD_COINBASE_TXOS = "bad-coinbase-txos"
"""A non-zero policy-asset coinbase output not paying ``-con_mandatorycoinbase``'s script."""
BAD_BLOCKREWARD_OUTOFRANGE = "bad-blockreward-outofrange"
"""Fees plus subsidy of an asset above MAX_MONEY (Elements' ConnectBlock)."""
BAD_CB_MISSING = "bad-cb-missing"
BAD_CB_MULTIPLE = "bad-cb-multiple"
BAD_CB_HEIGHT = "bad-cb-height"
"""The coinbase scriptSig does not start with the BIP34 height push."""
BAD_TXNS_DUPLICATE = "bad-txns-duplicate"
"""The same txid twice, or a mutated Merkle tree."""
BAD_TXNMRKLROOT = "bad-txnmrklroot"
BAD_BLK_WEIGHT = "bad-blk-weight"
BAD_WITNESS_MERKLE_MATCH = "bad-witness-merkle-match"
UNEXPECTED_WITNESS = "unexpected-witness"
"""Witness data but no witness commitment."""
BAD_TXNS_ACCUMULATED_FEE_OUTOFRANGE = "bad-txns-accumulated-fee-outofrange"
BAD_CB_AMOUNT = "bad-cb-amount"
"""A coinbase output that is not explicit, out of range, zero on a spendable script, or pays
more than the block's fees."""
BAD_CB_WITNESS = "bad-cb-witness"
BAD_TXNS_BIP30 = "bad-txns-BIP30"
"""An output the block creates already exists in the UTXO set."""

# --- scripts, signatures and timelocks (docs/sighash.md §5) -------------------------------------

MANDATORY_SCRIPT_VERIFY_FLAG_FAILED = "mandatory-script-verify-flag-failed"
"""A script or signature fails under the consensus flags. As in Elements, the reason carries the
script error after it: ``mandatory-script-verify-flag-failed (<ScriptErrorString>)``
(``validator.scripts.script_reason``)."""
NON_MANDATORY_SCRIPT_VERIFY_FLAG = "non-mandatory-script-verify-flag"
"""Mempool only: a script fails only because of policy flags (low S, NULLFAIL, MINIMALDATA...);
``non-mandatory-script-verify-flag (<ScriptErrorString>)``."""
BAD_TXNS_SCRIPT_UNSUPPORTED = "bad-txns-script-unsupported"
"""Ours (docs/design.md §3): a spend the interpreter does not evaluate (a Simplicity leaf,
``ScriptErrorCode.UNSUPPORTED``)."""
BAD_TXNS_NONFINAL = "bad-txns-nonfinal"
"""nLockTime not reached (time locks: against the parent's median time past, BIP113), or a
BIP68 relative lock (by height or by time) not reached."""
BAD_BLK_SIGOPS = "bad-blk-sigops"
"""The block's signature-operation cost is above MAX_BLOCK_SIGOPS_COST (80,000)."""

# --- mempool only (Bitcoin's) -------------------------------------------------------------------

NON_FINAL = "non-final"
"""nLockTime not reached for the next block."""
NON_BIP68_FINAL = "non-BIP68-final"
"""A BIP68 relative lock not reached for the next block."""
BAD_TXNS_TOO_MANY_SIGOPS = "bad-txns-too-many-sigops"
"""A transaction's signature-operation cost is above MAX_STANDARD_TX_SIGOPS_COST (16,000)."""

COINBASE = "coinbase"
"""A coinbase outside a block."""
TXN_ALREADY_IN_MEMPOOL = "txn-already-in-mempool"
TXN_ALREADY_KNOWN = "txn-already-known"
"""The transaction's outputs are already in the UTXO set."""
TXN_MEMPOOL_CONFLICT = "txn-mempool-conflict"

# --- mempool policy (Elements' IsStandardTx, AreInputsStandard, PreChecks; validator.policy) ---

VERSION = "version"
"""Transaction version outside 1..TX_MAX_STANDARD_VERSION (3)."""
TX_SIZE = "tx-size"
"""Weight above MAX_STANDARD_TX_WEIGHT (400,000)."""
TX_SIZE_SMALL = "tx-size-small"
"""Fewer than 65 bytes without the witness (CVE-2017-12842)."""
SCRIPTSIG_SIZE = "scriptsig-size"
"""A scriptSig above 1,650 bytes."""
SCRIPTSIG_NOT_PUSHONLY = "scriptsig-not-pushonly"
SCRIPTPUBKEY = "scriptpubkey"
"""An output script the Solver calls non-standard, bare multisig beyond x-of-3, an OP_RETURN
above the datacarrier size (or any with -datacarrier=0), OP_TRUE without anyonecanspendaremine."""
BARE_MULTISIG = "bare-multisig"
"""A bare multisig output with -permitbaremultisig=0."""
DUST = "dust"
"""More than one dust output, or one with a non-zero fee ("tx with dust output must be 0-fee")."""
MULTI_OP_RETURN = "multi-op-return"
"""A second OP_RETURN output without -multi_data_permitted."""
ISSUANCE_OUT_OF_RANGE = "issuance-out-of-range"
"""An explicit issuance above 21 million without -acceptunlimitedissuances."""
BAD_TXIN_EXTRA_ISSUANCE_RANGEPROOF = "bad-txin-extra-issuance-rangeproof"
"""An issuance range proof on an input whose issuance amount is not blinded (or absent)."""
BAD_TXIN_EXTRA_INFLATION_RANGEPROOF = "bad-txin-extra-inflation-rangeproof"
"""An inflation-keys range proof on an input whose token amount is not blinded (or absent)."""
BAD_TXNS_NONSTANDARD_INPUTS = "bad-txns-nonstandard-inputs"
"""A spent output of a non-standard or unknown-witness template, or a P2SH redeem script with
more than 15 sigops."""
BAD_WITNESS_NONSTANDARD = "bad-witness-nonstandard"
"""A witness beyond the P2WSH / tapscript limits, an annex, or a witness on a non-witness spend."""
MIN_RELAY_FEE_NOT_MET = "min relay fee not met"
"""The fee in the policy asset is below -minrelaytxfee for the (discounted) virtual size."""

ALL: frozenset[str] = frozenset(
    value for name, value in dict(globals()).items() if name.isupper() and isinstance(value, str))
"""Every reason above."""
