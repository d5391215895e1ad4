"""Chain parameters: what validation needs to know about a chain, kept out of validation.

As in Bitcoin Core, the rules are written once and read their chain-specific values from a
``ChainParams``; ``regtest.params.chain_params()`` is our regtest chain's instance.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctplugin.elements.consensus import DEFAULT_COINBASE_MATURITY


@dataclass(frozen=True, slots=True)
class ChainParams:
    """The chain-specific values of the consensus rules.

    - ``policy_asset``: the asset fees are paid in (32-byte id, internal byte order);
    - ``block_challenge``: the signed-block challenge script every header must carry (our regtest
      chain: ``OP_TRUE`` with an empty solution);
    - ``coinbase_maturity``: blocks before a coinbase output may be spent.
    """

    policy_asset: bytes
    block_challenge: bytes = b"\x51"
    coinbase_maturity: int = DEFAULT_COINBASE_MATURITY
