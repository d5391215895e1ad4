"""Chain parameters: what validation needs to know about a chain, kept out of validation.

As Bitcoin Core's ``CChainParams`` (``src/kernel/chainparams.cpp``), one value per chain holds
its name, its genesis block and every chain-specific value the rules read; the rules are written
once. The chains we run are registered by name in ``regtest.params`` (``select_chain``); a new
chain is a new ``ChainParams`` value there, not new plumbing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ctplugin.elements.consensus import MAX_MONEY
from ctplugin.elements.model import Block
from ctplugin.errors import CtpluginError, EncodingError


class RangeProofKind(enum.Enum):
    """A kind of range proof a chain may accept; the value is its command-line spelling."""

    BULLETPROOF = "bulletproof"
    """A secp256k1-zkp Bulletproof (docs/design.md: m = 1, 64 bits, 256 generators)."""
    BORROMEAN = "borromean"
    """A secp256k1-zkp Borromean ``rangeproof``, what Elements and Liquid carry."""


ALL_RANGE_PROOFS = frozenset(RangeProofKind)
"""Both kinds: what the real-data audit reads (``range_proof_kind`` tells them apart)."""
ELEMENTS_RANGE_PROOFS = frozenset({RangeProofKind.BORROMEAN})
"""What Elements and Liquid accept (and what elementsd's decoder assumes every proof is)."""

CONSENSUS_BULLETPROOF_SIZE = 675
"""Bytes of a consensus Bulletproof (m = 1, 64 bits; ``bulletproofs.layout.proof_length``):
no Borromean proof has this size (theirs are 65, 73 or 2·32·rings + ... bytes, never 675)."""


class UnknownChainError(CtpluginError, ValueError):
    """No chain of that name is registered; the message lists the names there are."""


class ChainOptionError(CtpluginError, ValueError):
    """A chain option (elementsd's ``-con_*``, ``-initialfreecoins``, ...) with a value we cannot
    honour: malformed, out of range, or asking for something we do not have (dynafed, peg-in
    validation). ``option`` names it as elementsd spells it, without the dash."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"-{option}: {message}")
        self.option = option

    def __reduce__(self) -> tuple[object, ...]:
        text = str(self)
        return (type(self), (self.option, text[len(self.option) + 3:]))


@dataclass(frozen=True, slots=True)
class AddressParams:
    """A chain's address encodings (Elements ``kernel/chainparams.cpp`` ``base58Prefixes``,
    ``bech32_hrp``, ``blech32_hrp``; docs/elements-regtest.md §1.1): base58 version bytes of
    P2PKH, P2SH, WIF secret keys and the blinded-address prefix, the segwit HRPs of plain
    (bech32/bech32m) and confidential (blech32/blech32m) addresses, BIP32 version bytes.
    ``blinded_prefix`` None is Elements' empty prefix (Bitcoin's chains set none: a blinded
    address there is the P2PKH/P2SH version byte, the blinding pubkey and the hash). The
    encoders and decoders are ``ctplugin.elements.address`` (docs/elements-regtest.md §6)."""

    pubkey_prefix: int
    script_prefix: int
    secret_prefix: int
    blinded_prefix: int | None
    bech32_hrp: str
    blech32_hrp: str
    extpubkey_prefix: bytes
    extprvkey_prefix: bytes

    def __post_init__(self) -> None:
        prefixes = (self.pubkey_prefix, self.script_prefix, self.secret_prefix,
                    0 if self.blinded_prefix is None else self.blinded_prefix)
        if not all(isinstance(p, int) and 0 <= p <= 255 for p in prefixes):
            raise EncodingError("base58 prefixes are single bytes", reason="value-range")
        if len(self.extpubkey_prefix) != 4 or len(self.extprvkey_prefix) != 4:
            raise EncodingError("BIP32 version prefixes take 4 bytes", reason="length")
        if not all(h and h.isascii() and h == h.lower()
                   for h in (self.bech32_hrp, self.blech32_hrp)):
            raise EncodingError("HRPs are non-empty lower-case ASCII", reason="mixed-case")


ELEMENTS_REGTEST_ADDRESSES = AddressParams(
    pubkey_prefix=235, script_prefix=75, secret_prefix=239, blinded_prefix=4,
    bech32_hrp="ert", blech32_hrp="el",
    extpubkey_prefix=bytes.fromhex("043587cf"), extprvkey_prefix=bytes.fromhex("04358394"))
"""elementsregtest's defaults (a custom chain's), which our ctregtest chains reuse."""


def range_proof_kind(proof: bytes, accepted: frozenset[RangeProofKind]) -> RangeProofKind:
    """The kind a chain accepting ``accepted`` takes ``proof`` for: with one kind, that kind;
    with both, a proof of the consensus Bulletproof size is a Bulletproof, any other a
    Borromean proof."""
    if RangeProofKind.BORROMEAN in accepted and (
            RangeProofKind.BULLETPROOF not in accepted
            or len(proof) != CONSENSUS_BULLETPROOF_SIZE):
        return RangeProofKind.BORROMEAN
    return RangeProofKind.BULLETPROOF


@dataclass(frozen=True, slots=True)
class ChainParams:
    """The chain-specific values of the consensus rules, every one explicit (no defaults: a
    profile states all of its values).

    - ``name``: what selects the chain (``-chain=NAME``) and what its data directories record;
    - ``genesis``: the genesis block; ``genesis_hash`` (internal byte order) is derived from it.
      Taproot signature hashes commit to that hash twice, so signatures are bound to one chain
      (docs/sighash.md §2.1);
    - ``policy_asset``: the asset fees are paid in (32-byte id, internal byte order);
    - ``block_challenge``: the signed-block challenge script every header must carry;
    - ``coinbase_maturity``: blocks before a coinbase output may be spent;
    - ``range_proofs``: the range-proof kinds the chain accepts. With both, a proof of the
      consensus Bulletproof size is a Bulletproof and any other a Borromean proof (no Borromean
      proof has that size: ``range_proof_kind``);
    - ``network_magic``: the 4 message-start bytes that frame block-file records (Core's
      ``pchMessageStart``);
    - ``block_subsidy``, ``subsidy_halving_interval``: the subsidy of block h is
      ``block_subsidy >> (h // subsidy_halving_interval)`` (0 from 64 halvings), paid in the
      policy asset; a coinbase may claim it beside the block's fees (Elements
      ``GetBlockSubsidy``, ``-con_blocksubsidy``);
    - ``connect_genesis_outputs``: the genesis block's outputs enter the UTXO set at height 0,
      spendable at once (``-con_connect_genesis_outputs``); else the genesis adds nothing;
    - ``bip34_height``, ``bip65_height``, ``bip66_height``, ``csv_height``: the first height of
      the coinbase height push (and block version ≥ 2), CHECKLOCKTIMEVERIFY (≥ 4), strict DER
      (≥ 3) and BIP68/112 sequence locks (``-con_bip34height`` ...; Core's buried deployments);
    - ``sighash_rangeproof``: signatures may commit to range proofs (SIGHASH_RANGEPROOF);
      Elements enables it with dynamic federations, which are never active on our chains but
      our ctregtest chains always had it;
    - ``mandatory_coinbase``: every coinbase output of the policy asset with a non-zero value
      must pay exactly this script (``-con_mandatorycoinbase``); None: any script;
    - ``max_block_sig_size``: the most bytes a block's solution may take
      (``-con_max_block_sig_size``);
    - ``ct_bits``, ``ct_exponent``: what a wallet on this chain passes to its Borromean range
      proofs (``-ct_bits``, ``-ct_exponent``; not consensus: any valid proof is accepted);
    - ``addresses``: the chain's address encodings (``AddressParams``).
    """

    name: str
    genesis: Block
    policy_asset: bytes
    block_challenge: bytes
    coinbase_maturity: int
    range_proofs: frozenset[RangeProofKind]
    network_magic: bytes
    block_subsidy: int
    subsidy_halving_interval: int
    connect_genesis_outputs: bool
    bip34_height: int
    bip65_height: int
    bip66_height: int
    csv_height: int
    sighash_rangeproof: bool
    mandatory_coinbase: bytes | None
    max_block_sig_size: int
    ct_bits: int
    ct_exponent: int
    addresses: AddressParams
    genesis_hash: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.genesis, Block) or not all(
                isinstance(k, RangeProofKind) for k in self.range_proofs):
            raise EncodingError("genesis must be a Block and range_proofs RangeProofKind values",
                                reason="type")
        if not self.name or not self.range_proofs:
            raise EncodingError("a chain needs a name and at least one range-proof kind",
                                reason="length")
        if len(self.policy_asset) != 32 or len(self.network_magic) != 4:
            raise EncodingError("policy_asset takes 32 bytes and network_magic 4",
                                reason="length")
        if not 0 <= self.block_subsidy <= MAX_MONEY or self.subsidy_halving_interval < 1:
            raise EncodingError("the subsidy is an amount and halves at least every block",
                                reason="value-range")
        if min(self.bip34_height, self.bip65_height, self.bip66_height, self.csv_height,
               self.max_block_sig_size) < 0 or not 0 <= self.ct_bits <= 64 \
                or not -1 <= self.ct_exponent <= 18:
            raise EncodingError("heights and sizes are non-negative, ct_bits at most 64 and "
                                "ct_exponent in [-1, 18]", reason="value-range")
        # Derived once: the validator reads it for every taproot signature hash.
        object.__setattr__(self, "genesis_hash", self.genesis.hash)

    def block_subsidy_at(self, height: int) -> int:
        """The subsidy a block at ``height`` may claim (Elements ``GetBlockSubsidy``)."""
        halvings = height // self.subsidy_halving_interval
        return 0 if halvings >= 64 else self.block_subsidy >> halvings

    @property
    def wallet_range_proof(self) -> RangeProofKind:
        """The kind a wallet on this chain makes: a Bulletproof where the chain takes them
        (one batch item instead of a ring check), else the chain's kind."""
        if RangeProofKind.BULLETPROOF in self.range_proofs:
            return RangeProofKind.BULLETPROOF
        return min(self.range_proofs, key=lambda kind: kind.value)
