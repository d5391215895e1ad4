"""Consensus constants of Elements as our chain uses them (docs/elements-format.md §2).

One place for the numbers validation, the wallet and the node share. Chain-specific values
(policy asset, block challenge, coinbase maturity, genesis) are ``ChainParams`` fields
(``ctplugin.elements.chainparams``); these are the chain-independent ones.
"""

from __future__ import annotations

COIN = 100_000_000
"""Satoshis per coin (amounts are integers in satoshis)."""

MAX_MONEY = 21_000_000 * COIN
"""MoneyRange's upper bound for any single amount and any per-asset sum."""

WITNESS_SCALE_FACTOR = 4
"""Weight = base size × (WITNESS_SCALE_FACTOR − 1) + total size (BIP141)."""

MAX_BLOCK_WEIGHT = 4_000_000
"""A block's weight limit; also bounds a transaction's base size × WITNESS_SCALE_FACTOR."""

MAX_SCRIPT_SIZE = 10_000
"""Scripts longer than this are unspendable (CScript::IsUnspendable)."""

MAX_FUTURE_BLOCK_TIME = 2 * 60 * 60
"""Seconds a block's time may be ahead of the node's clock (Core's MAX_FUTURE_BLOCK_TIME)."""

MEDIAN_TIME_SPAN = 11
"""Blocks whose median time a new block's time must exceed (Core's CBlockIndex::nMedianTimeSpan)."""

DEFAULT_COINBASE_MATURITY = 100
"""Blocks before a coinbase output may be spent: Core's and Elements' ``COINBASE_MATURITY``
(``src/consensus/consensus.h``), the value our chains state (``regtest.params``)."""

WITNESS_COMMITMENT_HEADER = bytes.fromhex("6a24aa21a9ed")
"""OP_RETURN, push 36, then the BIP141 commitment magic: the start of a coinbase output that
commits to the block's witness root."""


def money_range(value: int) -> bool:
    """MoneyRange: 0 ≤ value ≤ MAX_MONEY."""
    return 0 <= value <= MAX_MONEY
