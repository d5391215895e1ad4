"""A deterministic confidential-transaction wallet for the regtest chain and the tests.

What it does: keys and confidential addresses (``keys``, ``address``), coin tracking by scanning
transactions and blocks, unblinding of received outputs, Bitcoin Core's coin selection with
Elements' per-asset rules (``coinselection``; the flow of a send in docs/node-rpc.md §1.9:
effective values, waste, change dropped to the fee), blinding (value and asset blinding factors,
the final balancing blind: ``blinding``), Bulletproof range proofs and surjection proofs,
explicit fee outputs, asset issuance and reissuance.

Determinism: every random choice (ephemeral keys, value blinds, surjection seeds) is
``tagged_hash("ctplugin/wallet/rng", seed ‖ rng_salt ‖ be64(counter))``, so a wallet built from a
seed and driven by the same calls produces the same transactions byte for byte (reproducible test
chains; ``rng_salt`` is empty); coin selection's generator is seeded from the same inputs
without using up a draw. A node's wallet draws a fresh random ``rng_salt`` every time it
is opened, so no crash or restore can ever make it repeat a blinding factor or ephemeral key.

Unblinding convention: see ``regtest.wallet.blinding`` (nonce from ECDH as in Elements; value and
value blind from the Bulletproof rewind; abf from the nonce; 20-byte message = asset id prefix).

Range-proof kind (``range_proofs``: the chain's ``ChainParams.wallet_range_proof``, see
``regtest.params``): Bulletproofs by default; ``RangeProofKind.BORROMEAN`` makes Borromean
proofs the way Elements' wallet does (``ctplugin.borromean.elements``: min_value 1, or 0 for an
unspendable script, exp 0, 52 bits, message asset ‖ abf, extra commit = scriptPubKey; issuance
proofs with min 0, no extra commit and the issuance blinding key as nonce) and unblinds them
Elements' way (asset and abf read from the message, the asset commitment recomputed).

Scripts and signatures: new addresses are P2TR key-path outputs by default (P2WPKH on request,
``new_address(kind="p2wpkh")``); every transaction the wallet builds is signed
(``regtest.wallet.signing``: BIP340 for P2TR, ECDSA for P2WPKH; taproot digests commit to the
chain's genesis hash, ``genesis_hash``). The wallet trusts its own bookkeeping: a transaction it
builds is applied to its coin set at once (its inputs leave, its own outputs arrive unconfirmed)
and a block confirms them.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import NamedTuple

from ctplugin import borromean, surjection
from ctplugin.bulletproofs import CONSENSUS_PROOF_LENGTH, prove_output, rewind_output
from ctplugin.elements import AssetIssuance, Block, Transaction, TxIn, TxOut
from ctplugin.elements.chainparams import ChainParams, RangeProofKind
from ctplugin.elements.issuance import (
    issuance_asset_id,
    issuance_entropy,
    reissuance_token_id,
)
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import CtpluginError, ProofError
from ctplugin.hashes import tagged_hash
from ctplugin.parallel import side_by_side
from ctplugin.pedersen import (
    Commitment,
    Generator,
    commit,
    generator_generate,
    generator_generate_blinded,
)
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import N
from ctplugin.surjection import WALLET_USED_INPUTS, serialized_size
from regtest.params import (
    COINBASE_MATURITY,
    DEFAULT_CHAIN,
    DEFAULT_CT_BITS,
    DEFAULT_CT_EXPONENT,
    POLICY_ASSET,
    select_chain,
)
from regtest.wallet import coinselection
from regtest.wallet.address import ConfidentialAddress
from regtest.wallet.blinding import (
    asset_blinding_factor,
    blinding_total,
    ephemeral_pubkey,
    final_value_blind,
    rewind_nonce,
)
from regtest.wallet.keys import (
    P2TR,
    AddressKind,
    HDScheme,
    KeyChain,
    KeyPair,
)
from regtest.wallet.signing import (
    multisig_templates,
    script_sig_template,
    sign_transaction,
    witness_template,
)

_ZERO32 = bytes(32)
OP_RETURN = b"\x6a"
LOOKAHEAD = 20
"""Keys derived ahead of the last address handed out, so scanning finds payments to them (our
chains' wallets; elementsd's keypool on elementsregtest is ``-keypool``, default
``DEFAULT_KEYPOOL_SIZE``)."""
DEFAULT_KEYPOOL_SIZE = 1000  # Core's src/wallet/scriptpubkeyman.h

Proven = Callable[[list[TxOut], Mapping[bytes, bytes]], None]
"""What ``Wallet.build`` calls once a transaction's range proofs are made: with its blinded
outputs and the signer's ring points of each Borromean range proof, by proof
(``Node.verify_ahead``)."""


class WalletError(CtpluginError):
    """The wallet cannot do what was asked (insufficient funds, unknown asset, ...)."""


class _Short(WalletError):
    """The chosen coins fall ``amount`` short of the policy asset's outputs and fee (coin
    selection tries again for more)."""

    def __init__(self, amount: int) -> None:
        super().__init__(f"insufficient funds: the inputs are {amount} short of the fee")
        self.amount = amount


@dataclass(frozen=True, slots=True)
class OwnedCoin:
    """An output the wallet can spend, with its opening (asset, value, blinding factors).

    ``height`` is None while the creating transaction is unconfirmed.
    """

    txid: bytes
    index: int
    out: TxOut
    asset: bytes
    value: int
    abf: int
    vbf: int
    height: int | None
    coinbase: bool = False

    @property
    def generator(self) -> Generator:
        if len(self.out.asset) == 33:
            return Generator.parse(self.out.asset)
        return generator_generate(self.out.asset)

    def mature_at(self, height: int, maturity: int) -> bool:
        """Spendable in a block at ``height``: a coinbase output once ``maturity`` blocks
        (consensus: COINBASE_MATURITY) separate that block from the coinbase's."""
        if not self.coinbase:
            return True
        return self.height is not None and height - self.height >= maturity


@dataclass(frozen=True, slots=True)
class Payment:
    """Pay ``amount`` of ``asset`` to a confidential address (blinded) or a bare script."""

    amount: int
    address: ConfidentialAddress | None = None
    script_pubkey: bytes = b""
    asset: bytes = POLICY_ASSET

    def __post_init__(self) -> None:
        if self.amount <= 0:
            raise WalletError("payment amount must be positive")
        if self.address is None and not self.script_pubkey:
            raise WalletError("a payment needs an address or a script")

    @property
    def script(self) -> bytes:
        return self.address.script_pubkey if self.address is not None else self.script_pubkey


@dataclass(frozen=True, slots=True)
class Issuance:
    """A new asset issuance on the first input: ``amount`` of the asset and ``tokens``
    reissuance tokens (either may be 0, not both), paid to the wallet's own new addresses.
    With ``blind_amount`` both issued amounts are Pedersen commitments under the unblinded
    asset (token) generator with a range proof whose extra commit is empty (Elements' issuance
    rule); a token-only issuance then commits to an asset amount of 0, unblinded it leaves the
    asset amount null (Elements' CreateTransactionInternal, src/wallet/spend.cpp)."""

    amount: int
    tokens: int = 0
    contract_hash: bytes = _ZERO32
    blind_amount: bool = False

    def __post_init__(self) -> None:
        if self.amount < 0 or self.tokens < 0 or not (self.amount or self.tokens):
            raise WalletError("an issuance needs a positive asset or token amount")


@dataclass(frozen=True, slots=True)
class Reissuance:
    """Reissue ``amount`` more of ``asset``: spends the wallet's token coin of that asset.
    ``blind_amount`` must match how the asset was issued: the token id of a blinded issuance
    is the one a reissuance with a blinded amount names (Elements' CalculateReissuanceToken)."""

    asset: bytes
    amount: int
    blind_amount: bool = False


@dataclass(frozen=True, slots=True)
class WalletState:
    """``Wallet.state()``: seed, key and randomness counters, assets it knows."""

    seed: bytes
    next_key: int
    rng_counter: int
    change_keys: frozenset[int]
    known_assets: dict[bytes, bytes]
    entropy: dict[bytes, bytes]
    token_of: dict[bytes, bytes]
    scheme: HDScheme = HDScheme.TAGGED
    master_blinding_key: bytes | None = None  # None (older records): the seed's SLIP-77 key
    imported: tuple[int, ...] = ()  # imported private keys (importprivkey, combo descriptors)
    next_change: int = 0  # the next change key of an HD key chain's internal chain
    blank: bool = False  # no keys to hand out (createwallet blank=true, until sethdseed)
    private_keys: bool = True  # False: a watch-only wallet (createwallet disable_private_keys)


class Opening(NamedTuple):
    """What opens an output's commitments: asset id, value, asset and value blinding factors
    (0 and 0 for explicit parts)."""

    asset: bytes
    value: int
    abf: int
    vbf: int


@dataclass(frozen=True, slots=True)
class BuiltTransaction:
    """``Wallet.build``'s result: the transaction, its fee, every output's opening, which
    outputs are the wallet's change, and the coins it spends."""

    tx: Transaction
    fee: int
    openings: dict[int, Opening]
    change: frozenset[int]
    spent: tuple[OwnedCoin, ...]
    issuance: Opening | None = None  # (re)issued asset, amount, 0, amount blind


@dataclass(frozen=True, slots=True)
class _Plan:
    """A transaction's shape before anything is drawn or proven (``Wallet._plan``)."""

    wallet: Wallet
    coins: list[OwnedCoin]
    payments: list[Payment]
    fee: int
    issuance: Issuance | None
    reissuance: Reissuance | None
    change: list[tuple[bytes, int]]
    blind_change: bool
    subtract: bool = False  # the payments pay the fee (their change is never dropped)
    dummy: bool = False
    """A zero-value blinded ``OP_RETURN`` output: blinded inputs and nothing else blinded to
    balance them (Elements' wallet does the same, spend.cpp ``may_need_blinded_dummy``)."""

    @property
    def needs_dummy(self) -> bool:
        """Blinded inputs, and no payment or change output would be blinded."""
        blinded_in = any(c.abf or c.vbf for c in self.coins)
        blinded_out = (any(p.address is not None for p in self.payments)
                       or (self.blind_change and bool(self.change)))
        return blinded_in and not blinded_out

    @property
    def lone_explicit(self) -> bool:
        """Nothing blinded comes in and just one output would be blinded: its blind would
        follow from the explicit rest, so it stays explicit (Elements' fillBlindDetails,
        src/wallet/spend.cpp: the lone change, or the lone payment, loses its blinding key)."""
        if any(c.abf or c.vbf for c in self.coins):
            return False
        if self.issuance is not None and self.issuance.blind_amount:
            return False  # blinded issuance values are blinds of their own
        outputs = (sum(p.address is not None for p in self.payments)
                   + (len(self.change) if self.blind_change else 0))
        return outputs == 1

    def vsize(self) -> int:
        """The finished transaction's virtual size, from a skeleton with placeholders of the
        exact sizes (commitments 33 bytes, Bulletproofs and surjection proofs fixed-size)."""
        n_targets = len(self.coins)
        txins = []
        for i, coin in enumerate(self.coins):
            record = None
            proof = b""
            token_proof = b""
            if i == 0 and self.issuance is not None:
                blind = self.issuance.blind_amount
                amount: int | bytes | None = self.issuance.amount or None
                tokens: int | bytes | None = self.issuance.tokens or None
                if blind:
                    amount, proof = _COMMITMENT, bytes(self.wallet.issuance_proof_size())
                    if tokens is not None:
                        tokens = _COMMITMENT
                        token_proof = bytes(self.wallet.issuance_proof_size())
                n_targets += (amount is not None) + (tokens is not None)
                record = AssetIssuance(_ZERO32, self.issuance.contract_hash, amount, tokens)
            if i == 0 and self.reissuance is not None:
                n_targets += 1
                reissued: int | bytes = self.reissuance.amount
                if self.reissuance.blind_amount:
                    reissued, proof = _COMMITMENT, bytes(self.wallet.issuance_proof_size())
                record = AssetIssuance(b"\x01" * 32, _ZERO32, reissued, None)
            txins.append(TxIn(prevout_hash=coin.txid, prevout_index=coin.index, issuance=record,
                              issuance_amount_rangeproof=proof,
                              inflation_keys_rangeproof=token_proof,
                              script_sig=self.wallet.script_sig_estimate(coin),
                              script_witness=self.wallet.witness_estimate(coin)))
        surjection_size = serialized_size(n_targets, min(WALLET_USED_INPUTS, n_targets))
        change_script = self.wallet.next_change_script()

        def blinded(script: bytes) -> TxOut:
            return TxOut(asset=_GENERATOR, value=_COMMITMENT, nonce=_NONCE, script_pubkey=script,
                         surjection_proof=bytes(surjection_size),
                         range_proof=bytes(self.wallet.output_proof_size(script)))

        lone = self.lone_explicit
        outs = [blinded(p.script) if p.address is not None and not lone
                else TxOut(asset=p.asset, value=p.amount, script_pubkey=p.script)
                for p in self.payments]
        outs += [blinded(change_script) if self.blind_change and not lone
                 else TxOut(asset=asset, value=amount, script_pubkey=change_script)
                 for asset, amount in self.change]
        if self.dummy:
            outs.append(blinded(OP_RETURN))
        outs.append(TxOut(asset=self.wallet.policy_asset, value=self.fee))
        return Transaction(version=2, inputs=tuple(txins), outputs=tuple(outs)).vsize


@cache
def _borromean_proof_size(min_value: int, output: bool, exp: int, bits: int) -> int:
    """Size of an Elements-style Borromean proof (fixed for values below 2^bits with exponent
    ``exp``): measured once on a throwaway proof."""
    asset = bytes(range(32))
    gen = generator_generate(asset)
    value, blind = 1, (1).to_bytes(32, "big")
    if output:
        return len(borromean.elements.output_rangeproof(
            value, bytes(32), asset, bytes(32), blind, commit(value, blind, gen), gen, b"\x51",
            min_value=min_value, exp=exp, min_bits=bits))
    return len(borromean.elements.issuance_rangeproof(value, bytes(32), blind,
                                                      commit(value, blind, gen), asset,
                                                      exp=exp, min_bits=bits))


_COMMITMENT = b"\x08" + b"\x01" * 32  # placeholders of the sizes of real commitments
_GENERATOR = b"\x0a" + b"\x01" * 32
_NONCE = b"\x02" + b"\x01" * 32


def _fee_for_rate(plan: Callable[[int], _Plan], fee_rate: int) -> int:
    """The fee that pays ``fee_rate`` (sat/kvB, rounded up, at least 1) for the transaction the
    plan makes; converges in a round or two (only a change output can appear or vanish)."""
    fee = 1
    for _ in range(8):
        needed = max(1, -(-fee_rate * plan(fee).vsize() // 1000))
        if needed == fee:
            break
        fee = needed
    return fee


def _subtract_fee(payments: list[Payment], fee: int, indexes: tuple[int, ...],
                  policy_asset: bytes) -> list[Payment]:
    """The payments with ``fee`` taken out of those at ``indexes`` (Core's
    subtractfeefromamount: equal shares, the remainder from the first)."""
    if any(not 0 <= i < len(payments) for i in indexes):
        raise WalletError("subtract-fee-from index out of range")
    chosen = sorted(set(indexes))
    share, remainder = divmod(fee, len(chosen))
    out = list(payments)
    for k, i in enumerate(chosen):
        p = out[i]
        amount = p.amount - share - (remainder if k == 0 else 0)
        if p.asset != policy_asset:
            raise WalletError("only payments of the fee asset can pay the fee")
        if amount <= 0:
            raise WalletError("The transaction amount is too small to pay the fee")
        out[i] = Payment(amount, p.address, p.script_pubkey, p.asset)
    return out


@dataclass(slots=True)
class _OutSpec:
    script: bytes
    asset: bytes
    amount: int
    blinding_pubkey: bytes | None
    fee: bool = False


@dataclass(slots=True)
class _InSpec:
    """One entry of the surjection target list with its opening."""

    asset: bytes
    abf: int
    generator: Generator
    value: int = 0
    vbf: int = 0
    known: bool = True  # False: another party's input, only a surjection target


class Wallet:
    """A deterministic wallet (see the module docstring)."""

    def __init__(self, seed: bytes, *, policy_asset: bytes = POLICY_ASSET,
                 range_proofs: RangeProofKind = RangeProofKind.BULLETPROOF,
                 genesis_hash: bytes | None = None, ct_bits: int = DEFAULT_CT_BITS,
                 ct_exponent: int = DEFAULT_CT_EXPONENT, scheme: HDScheme = HDScheme.TAGGED,
                 master_blinding_key: bytes | None = None, lookahead: int = LOOKAHEAD,
                 change_kind: AddressKind = P2TR, blank: bool = False,
                 private_keys: bool = True) -> None:
        """``ct_bits`` / ``ct_exponent``: the Borromean proofs' minimum bits and exponent
        (Elements' ``-ct_bits`` / ``-ct_exponent``, the chain's ``ChainParams`` values).
        ``scheme`` / ``master_blinding_key``: the key chain's (``regtest.wallet.keys``);
        ``lookahead``: keys derived beyond the last one handed out (elementsd's keypool);
        ``change_kind``: the script change pays; ``blank``: no keys are derived (elementsd's
        blank wallet, until ``set_seed``); ``private_keys`` False: a watch-only wallet, which
        derives and imports no private keys."""
        if not isinstance(range_proofs, RangeProofKind):
            raise WalletError(f"unknown range-proof kind {range_proofs!r}")
        if lookahead < 1:
            raise WalletError("the keypool holds at least one key")
        self.keys = KeyChain(seed, scheme=scheme, master_blinding_key=master_blinding_key)
        self.lookahead = lookahead
        self.change_kind = change_kind
        self.blank = blank
        self.private_keys = private_keys
        self.policy_asset = policy_asset
        self.range_proofs = range_proofs
        self.ct_bits = ct_bits
        self.ct_exponent = ct_exponent
        self.genesis_hash = (genesis_hash if genesis_hash is not None
                             else select_chain(DEFAULT_CHAIN).genesis_hash)
        self._coins: dict[tuple[bytes, int], OwnedCoin] = {}
        self._coins_source: Callable[[], dict[tuple[bytes, int], OwnedCoin]] | None = None
        self.coinbase_maturity = COINBASE_MATURITY
        """Blocks between a coinbase and the block that may spend it, for coin selection:
        consensus' COINBASE_MATURITY here; a node's wallet waits one block more, as Core's
        (``NodeWallet``), so that it spends exactly the coins its balance counts."""
        self.locked: set[tuple[bytes, int]] = set()
        """Coins that coin selection leaves alone (committed to a DLC not funded yet); they
        still count in balances, as Core's locked coins do."""
        self.known_assets: dict[bytes, bytes] = {}  # 20-byte prefix -> asset id
        self.entropy: dict[bytes, bytes] = {}  # asset or token id -> issuance entropy
        self.token_of: dict[bytes, bytes] = {}  # asset id -> its reissuance token id
        self._next_key = 0
        self._rng_counter = 0
        self.rng_salt = b""
        self.change_keys: set[int] = set()
        """Change keys among the others (a ``TAGGED`` key chain has no internal chain)."""
        self._next_change = 0
        self.add_known_asset(policy_asset)
        if self.derives_keys:
            self.keys.extend(lookahead)
            self.keys.extend(lookahead, internal=True)

    # --- randomness and addresses ---------------------------------------------------------

    def _random(self) -> bytes:
        self._rng_counter += 1
        return tagged_hash("ctplugin/wallet/rng",
                           self.keys.seed + self.rng_salt + self._rng_counter.to_bytes(8, "big"))

    def random_bytes(self) -> bytes:
        """32 bytes of the wallet's randomness (BIP340 auxiliary randomness for signing)."""
        return self._random()

    def _random_scalar(self) -> int:
        while True:
            value = int.from_bytes(self._random(), "big")
            if 0 < value < N:
                return value

    def new_address(self, kind: AddressKind = P2TR, *, change: bool = False) -> ConfidentialAddress:
        """The next unused key's address of ``kind``; ``change``: a change address (the next
        key of an HD chain's internal chain, else marked among the others). ``WalletError``
        with elementsd's words from a watch-only or blank wallet."""
        if not self.private_keys:
            raise WalletError("Error: Private keys are disabled for this wallet")
        if self.blank:
            raise WalletError("Error: This wallet has no available keys")
        if change and self.keys.has_internal_chain:
            pair = self.keys.key(self._next_change, kind, internal=True)
            self._next_change += 1
            self.keys.extend(self._next_change + self.lookahead, internal=True)
            return ConfidentialAddress(pair.script_pubkey, pair.blinding_pubkey)
        pair = self.keys.key(self._next_key, kind)
        if change:
            self.change_keys.add(self._next_key)
        self._next_key += 1
        self.keys.extend(self._next_key + self.lookahead)
        return ConfidentialAddress(pair.script_pubkey, pair.blinding_pubkey)

    def address(self, index: int, kind: AddressKind = P2TR) -> ConfidentialAddress:
        """The address of key ``index`` (key 0 of ``REGTEST_SEED`` owns the genesis coins, at
        its P2WPKH address)."""
        pair = self.keys.key(index, kind)
        self._next_key = max(self._next_key, index + 1)
        return ConfidentialAddress(pair.script_pubkey, pair.blinding_pubkey)

    @property
    def next_key(self) -> int:
        """The index of the next key ``new_address`` hands out."""
        return self._next_key

    @property
    def derives_keys(self) -> bool:
        """The wallet has a key chain to hand out (neither blank nor watch-only)."""
        return self.private_keys and not self.blank

    @property
    def next_change(self) -> int:
        """The index of the next change key on an HD chain's internal chain."""
        return self._next_change

    def is_change_key(self, pair: KeyPair) -> bool:
        """Core's IsChange for the wallet's own keys: an internal-chain key, or one marked as
        change in a chain without an internal one."""
        return pair.internal or (pair.index is not None and pair.index in self.change_keys)

    def set_seed(self, seed: bytes) -> None:
        """sethdseed: a new HD seed (a blank wallet's first); the keys handed out so far stay
        the wallet's."""
        if not self.private_keys:
            raise WalletError("Cannot set a HD seed to a wallet with private keys disabled")
        self.blank = False
        self.keys.replace_seed(seed, self._next_key, self._next_change)
        self._next_key = 0
        self._next_change = 0
        self.change_keys = set()
        self.keys.extend(self.lookahead)
        self.keys.extend(self.lookahead, internal=True)

    def add_known_asset(self, asset: bytes) -> None:
        """Assets the wallet can recognise in a Bulletproof message (its 20-byte prefix)."""
        self.known_assets[asset[:20]] = asset

    # --- balances --------------------------------------------------------------------------

    def balance(self, asset: bytes | None = None) -> int | dict[bytes, int]:
        totals: dict[bytes, int] = {}
        for coin in self.coins.values():
            totals[coin.asset] = totals.get(coin.asset, 0) + coin.value
        return totals if asset is None else totals.get(asset, 0)

    def spendable(self, asset: bytes, height: int) -> list[OwnedCoin]:
        """Coins of ``asset`` spendable in a block at ``height``, largest first (deterministic),
        locked ones left out."""
        coins = [c for c in self.coins.values()
                 if c.asset == asset and c.mature_at(height, self.coinbase_maturity)
                 and (c.txid, c.index) not in self.locked]
        coins.sort(key=lambda c: (-c.value, c.txid, c.index))
        return coins

    # --- scanning --------------------------------------------------------------------------

    def unblind(self, out: TxOut, *, known_valid: bool = False
                ) -> tuple[bytes, int, int, int] | None:
        """(asset id, value, abf, vbf) of an output paying one of our scripts, else None."""
        pair = self.keys.owner_of(out.script_pubkey)
        if pair is None:
            return None
        return self.open_output(out, pair.blinding_secret, known_valid=known_valid)

    def open_output(self, out: TxOut, blinding_secret: int, *, known_valid: bool = False
                    ) -> tuple[bytes, int, int, int] | None:
        """(asset id, value, abf, vbf) of ``out`` opened with a blinding key (ours, or one
        imported for someone else's address), or None when it does not open.

        ``known_valid``: ``out`` is in a transaction the node accepted, so its range proof is
        known to verify and is not verified again (``borromean.rewind_known_valid``: Elements'
        chain; openings are checked either way)."""
        if isinstance(out.value, int):
            if len(out.asset) != 32:
                return None  # explicit value under a blinded asset: not made by this wallet
            return out.asset, out.value, 0, 0
        if len(out.nonce) != 33 or out.nonce[0] not in (2, 3):
            return None
        try:
            nonce = rewind_nonce(blinding_secret, out.nonce)
        except ValueError:  # not a point on the curve
            return None
        value_gen = (out.asset if len(out.asset) == 33
                     else generator_generate(out.asset).serialize())
        if self.range_proofs == RangeProofKind.BORROMEAN:
            return self._unblind_borromean(out, nonce, value_gen, known_valid)
        try:
            opened = rewind_output(out.range_proof, out.value, value_gen, nonce,
                                   out.script_pubkey)
        except (ProofError, CtpluginError):
            return None
        if opened is None:
            return None
        vbf = int.from_bytes(opened.blind, "big")
        if len(out.asset) == 32:
            return out.asset, opened.value, 0, vbf
        asset = self.known_assets.get(opened.message)
        if asset is None:
            return None
        abf = asset_blinding_factor(nonce)
        try:
            expected = generator_generate_blinded(asset, abf.to_bytes(32, "big")).serialize()
        except CtpluginError:
            return None
        if expected != out.asset:
            return None
        return asset, opened.value, abf, vbf

    def _unblind_borromean(self, out: TxOut, nonce: bytes, value_gen: bytes,
                           known_valid: bool) -> tuple[bytes, int, int, int] | None:
        """Elements' unblinding: the proof's message is asset ‖ abf, checked against the
        output's asset commitment (an explicit asset has abf 0 and no check)."""
        assert isinstance(out.value, bytes)
        try:
            if len(out.asset) == 32:
                rewind = borromean.rewind_known_valid if known_valid else borromean.rewind
                opened = rewind(out.range_proof, out.value, value_gen, out.script_pubkey, nonce)
                if opened is None:
                    return None
                return out.asset, opened.value, 0, int.from_bytes(opened.blind, "big")
            found = borromean.elements.unblind_with_nonce(nonce, out.range_proof, out.value,
                                                          out.asset, out.script_pubkey,
                                                          known_valid=known_valid)
        except CtpluginError:
            return None
        if found is None:
            return None
        return (found.asset, found.value, int.from_bytes(found.asset_blind, "big"),
                int.from_bytes(found.value_blind, "big"))

    def _output_proof(self, value: int, vbf: int, asset: bytes, abf: bytes, asset_gen: Generator,
                      nonce: bytes, script: bytes, commitment: Commitment | None = None) -> bytes:
        """The range proof of a blinded output, of this wallet's kind (``commitment``: its
        value commitment when the caller has it already)."""
        return self._output_proof_signed(value, vbf, asset, abf, asset_gen, nonce, script,
                                         commitment)[0]

    def _output_proof_signed(self, value: int, vbf: int, asset: bytes, abf: bytes,
                             asset_gen: Generator, nonce: bytes, script: bytes,
                             commitment: Commitment | None = None) -> tuple[bytes, bytes | None]:
        """``_output_proof`` and, for a Borromean proof, its signer's ring points
        (``borromean.SignedRangeProof``: a node verifies the proof with them faster)."""
        if self.range_proofs == RangeProofKind.BORROMEAN:
            signed = borromean.elements.output_rangeproof_with_ring_points(
                value, nonce, asset, abf, vbf.to_bytes(32, "big"),
                commit(value, vbf, asset_gen) if commitment is None else commitment,
                asset_gen, script, min_value=0 if is_unspendable(script) else 1,
                exp=self.ct_exponent, min_bits=self.ct_bits)
            return signed.proof, signed.ring_points
        return prove_output(value, vbf, asset_gen, nonce, script, message=asset[:20]), None

    def output_proof_size(self, script: bytes) -> int:
        """Bytes of the range proof ``_output_proof`` makes for an output paying ``script``
        (fee estimation before proving)."""
        if self.range_proofs == RangeProofKind.BORROMEAN:
            return _borromean_proof_size(0 if is_unspendable(script) else 1, True,
                                         self.ct_exponent, self.ct_bits)
        return CONSENSUS_PROOF_LENGTH

    def issuance_proof_size(self) -> int:
        if self.range_proofs == RangeProofKind.BORROMEAN:
            return _borromean_proof_size(0, False, self.ct_exponent, self.ct_bits)
        return CONSENSUS_PROOF_LENGTH

    def _issuance_proof(self, value: int, vbf: int, asset: bytes, blinding_key: int) -> bytes:
        """The range proof of a blinded issuance amount (extra commit: an EMPTY script); its
        rewind nonce is the issuance blinding key itself (Elements' blind.cpp), so whoever holds
        the key (``importissuanceblindingkey``) opens the amount."""
        asset_gen = generator_generate(asset)
        nonce = blinding_key.to_bytes(32, "big")
        if self.range_proofs == RangeProofKind.BORROMEAN:
            return borromean.elements.issuance_rangeproof(
                value, nonce, vbf.to_bytes(32, "big"), commit(value, vbf, asset_gen),
                asset, exp=self.ct_exponent, min_bits=self.ct_bits)
        return prove_output(value, vbf, asset_gen, nonce, b"")

    def _issued(self, value: int, asset: bytes, blind: bool,
                blinding_key: int) -> tuple[int | bytes | None, int, bytes]:
        """An issued amount of a new issuance as its record carries it, with its value blind and
        range proof: blinded, a commitment (to 0 too: a blinded token-only issuance commits to
        no asset); explicit, the value, or null for 0."""
        if not blind:
            return (value or None), 0, b""
        vbf = self._random_scalar()
        return (commit(value, vbf, generator_generate(asset)).serialize(), vbf,
                self._issuance_proof(value, vbf, asset, blinding_key))

    def open_issuance(self, amount: bytes, proof: bytes, asset: bytes,
                      blinding_key: int) -> tuple[int, int] | None:
        """(value, value blind) of a blinded issuance amount under ``blinding_key``, or None."""
        gen = generator_generate(asset).serialize()
        nonce = blinding_key.to_bytes(32, "big")
        try:
            if self.range_proofs == RangeProofKind.BORROMEAN:
                found = borromean.rewind(proof, amount, gen, b"", nonce)
                return (None if found is None
                        else (found.value, int.from_bytes(found.blind, "big")))
            opened = rewind_output(proof, amount, gen, nonce, b"")
        except CtpluginError:
            return None
        return None if opened is None else (opened.value, int.from_bytes(opened.blind, "big"))

    # --- persistence ----------------------------------------------------------------------

    def state(self) -> WalletState:
        """Everything besides the coins that a restart must restore (the coins follow from the
        transactions, which the node-side wallet keeps)."""
        return WalletState(self.keys.seed, self._next_key, self._rng_counter,
                           frozenset(self.change_keys), dict(self.known_assets),
                           dict(self.entropy), dict(self.token_of), self.keys.scheme,
                           self.keys.master_blinding_key,
                           tuple(self.keys.imported.values()), self._next_change, self.blank,
                           self.private_keys)

    @classmethod
    def for_chain(cls, seed: bytes, params: ChainParams, *, scheme: HDScheme = HDScheme.TAGGED,
                  master_blinding_key: bytes | None = None, lookahead: int = LOOKAHEAD,
                  change_kind: AddressKind = P2TR, blank: bool = False,
                  private_keys: bool = True) -> Wallet:
        """A wallet for the chain ``params``: its policy asset, range-proof kind and
        parameters, and the genesis hash its taproot signatures commit to (the keyword
        arguments as ``Wallet``'s)."""
        return cls(seed, policy_asset=params.policy_asset, range_proofs=params.wallet_range_proof,
                   genesis_hash=params.genesis_hash, ct_bits=params.ct_bits,
                   ct_exponent=params.ct_exponent, scheme=scheme,
                   master_blinding_key=master_blinding_key, lookahead=lookahead,
                   change_kind=change_kind, blank=blank, private_keys=private_keys)

    @classmethod
    def restore(cls, state: WalletState, *, policy_asset: bytes = POLICY_ASSET,
                range_proofs: RangeProofKind = RangeProofKind.BULLETPROOF,
                genesis_hash: bytes | None = None, ct_bits: int = DEFAULT_CT_BITS,
                ct_exponent: int = DEFAULT_CT_EXPONENT, lookahead: int = LOOKAHEAD,
                change_kind: AddressKind = P2TR) -> Wallet:
        wallet = cls(state.seed, policy_asset=policy_asset, range_proofs=range_proofs,
                     genesis_hash=genesis_hash, ct_bits=ct_bits, ct_exponent=ct_exponent,
                     scheme=state.scheme, master_blinding_key=state.master_blinding_key,
                     lookahead=lookahead, change_kind=change_kind, blank=state.blank,
                     private_keys=state.private_keys)
        for secret in state.imported:
            wallet.keys.import_secret(secret)
        wallet._rng_counter = state.rng_counter
        wallet.change_keys = set(state.change_keys)
        wallet.known_assets.update(state.known_assets)
        wallet.entropy.update(state.entropy)
        wallet.token_of.update(state.token_of)
        wallet._next_change = state.next_change
        if wallet.derives_keys:
            if state.next_key:
                wallet.address(state.next_key - 1)
            wallet.keys.extend(wallet._next_key + lookahead)
            wallet.keys.extend(state.next_change + lookahead, internal=True)
        return wallet

    @property
    def coins(self) -> dict[tuple[bytes, int], OwnedCoin]:
        """The coins coin selection may spend, by outpoint (``coins_from``: made from their
        source when first read after it was named)."""
        source = self._coins_source
        if source is not None:
            self._coins = source()
            self._coins_source = None
        return self._coins

    @coins.setter
    def coins(self, coins: dict[tuple[bytes, int], OwnedCoin]) -> None:
        self._coins = coins
        self._coins_source = None

    def coins_from(self, source: Callable[[], dict[tuple[bytes, int], OwnedCoin]]) -> None:
        """The coins are ``source()`` from now on, computed when next read: a node's wallet
        hears of each pool transaction on its own, and making the view once per event would
        cost a pass over the whole ledger each time (quadratic in a burst of sends)."""
        self._coins_source = source

    def scan_transaction(self, tx: Transaction, height: int | None = None,
                         openings: Mapping[int, Opening] | None = None) -> list[OwnedCoin]:
        """Drop the coins ``tx`` spends, add the outputs it pays us; returns the new coins.
        ``openings`` (output index → opening, known when this wallet built ``tx``) spare the
        rewinds of our own outputs."""
        for txin in tx.inputs:
            self.coins.pop((txin.prevout_hash, txin.prevout_index), None)
        found = []
        txid = tx.txid
        for j, out in enumerate(tx.outputs):
            if (txid, j) in self.coins:
                coin = self.coins[(txid, j)]
                if coin.height is None and height is not None:
                    self.coins[(txid, j)] = _with_height(coin, height)
                continue
            known = openings.get(j) if openings is not None else None
            if known is not None and self.keys.owner_of(out.script_pubkey) is not None:
                asset, value, abf, vbf = known
            else:
                opened = self.unblind(out)
                if opened is None:
                    continue
                asset, value, abf, vbf = opened
            coinbase = tx.is_coinbase and height != 0  # genesis coins mature at once
            coin = OwnedCoin(txid, j, out, asset, value, abf, vbf, height, coinbase)
            self.coins[(txid, j)] = coin
            found.append(coin)
        return found

    def scan_block(self, block: Block) -> None:
        for tx in block.transactions:
            self.scan_transaction(tx, block.header.height)

    # --- building transactions -------------------------------------------------------------

    def _selection_rng(self) -> random.Random:
        """Coin selection's randomness (``coinselection`` docstring): derived from the wallet's
        without using up a draw, so a plan evaluated twice chooses the same coins."""
        return random.Random(tagged_hash(
            "ctplugin/wallet/coinselection",
            self.keys.seed + self.rng_salt + self._rng_counter.to_bytes(8, "big")))

    def input_vsize(self, coin: OwnedCoin, blinded_outputs: int) -> int:
        """What spending ``coin`` adds to a transaction's vsize: outpoint, sequence and empty
        scriptSig (41 bytes), its witness (one quarter), and 32 more witness bytes in each
        blinded output's surjection proof while the ring grows (``WALLET_USED_INPUTS``)."""
        witness = self.witness_estimate(coin)
        witness_bytes = 4 + len(witness) + sum(len(item) + 1 for item in witness)
        return 41 + -(-(witness_bytes + 32 * blinded_outputs) // 4)

    def _choose(self, targets: dict[bytes, int], height: int, used: set[tuple[bytes, int]],
                fee_rate: int, *, fixed_fee: bool, payment_value: int, n_payments: int,
                blinded_outputs: int, subtract_fee: bool = False) -> list[OwnedCoin]:
        """Core's coin selection (``coinselection.choose_selection``) for ``targets`` (per asset,
        the policy asset's including the fee of everything but the inputs) among the spendable
        coins not in ``used``. ``fixed_fee``: the caller fixed the fee, so inputs cost nothing
        and only exact or change-making selections qualify (no change dropped to fees)."""
        wanted = {a: v for a, v in targets.items() if v > 0}
        if not wanted:
            return []
        pool: list[coinselection.Candidate] = []
        coins: dict[tuple[bytes, int], OwnedCoin] = {}
        for asset in sorted(wanted):
            for coin in self.spendable(asset, height):
                key = (coin.txid, coin.index)
                if key in used:
                    continue
                size = self.input_vsize(coin, blinded_outputs)
                rate = 0 if fixed_fee else fee_rate
                long_term = 0 if fixed_fee else coinselection.DEFAULT_CONSOLIDATE_FEERATE
                pool.append(coinselection.Candidate(
                    key, coin.asset, coin.value, coinselection.fee_at(rate, size),
                    coinselection.fee_at(long_term, size), 4 * size))
                coins[key] = coin
        params = self.selection_params(fee_rate, fixed_fee=fixed_fee,
                                       payment_value=payment_value, n_payments=n_payments,
                                       subtract_fee=subtract_fee)
        # Core's eligibility filters, strictest first (spend.cpp AutomaticCoinSelection):
        # confirmed coins only, then also the unconfirmed ones the wallet trusts (its change)
        confirmed = [c for c in pool if coins[c.key].height is not None]  # type: ignore[index]
        found = None
        for tier in (confirmed, pool):
            found = coinselection.choose_selection(tier, wanted, params, self._selection_rng())
            if found is not None:
                break
        if found is None:
            have: dict[bytes, int] = {}
            for c in pool:
                have[c.asset] = have.get(c.asset, 0) + c.value
            asset = next((a for a, v in sorted(wanted.items()) if have.get(a, 0) < v),
                         self.policy_asset)
            raise WalletError(f"insufficient funds in asset {asset[::-1].hex()[:16]}…: "
                              f"need {wanted.get(asset, 0)}, have {have.get(asset, 0)}")
        return [coins[c.key] for c in found.coins]  # type: ignore[index]

    def change_output_vsize(self) -> int:
        """vsize of a blinded change output: asset and value commitments, nonce, script, and
        the range and surjection proofs (Elements counts the maximal proofs)."""
        script = self.next_change_script()
        proofs = self.output_proof_size(script) + serialized_size(WALLET_USED_INPUTS,
                                                                  WALLET_USED_INPUTS)
        return 33 + 33 + 33 + 1 + len(script) + -(-(proofs + 6) // 4)

    def selection_params(self, fee_rate: int, *, fixed_fee: bool = False,
                         payment_value: int = 0, n_payments: int = 1,
                         subtract_fee: bool = False) -> coinselection.SelectionParams:
        """Core's ``CoinSelectionParams`` for one transaction (spend.cpp
        ``CreateTransactionInternal``): change costs at the effective rate to create and at
        the discard rate (``DEFAULT_DISCARD_FEE``) to spend later; the smallest viable change
        is above both that spending cost and the change output's dust threshold."""
        if fixed_fee:
            return coinselection.SelectionParams(self.policy_asset, change_fee=0,
                                                 cost_of_change=0, min_change_target=0,
                                                 min_viable_change=1)
        change_vsize = self.change_output_vsize()
        change_fee = coinselection.fee_at(fee_rate, change_vsize)
        spend_vsize = 41 + -(-(4 + sum(1 + len(i) for i in witness_template(
            self.next_change_script()))) // 4)
        discard = coinselection.DEFAULT_DISCARD_FEE
        spend_fee = coinselection.fee_at(discard, spend_vsize)
        # GetDustThreshold of the change output (explicit value, blinding key in the nonce:
        # 33 + 9 + 33 + script) plus the 67 bytes of a witness input spending it
        script = self.next_change_script()
        dust = coinselection.fee_at(discard, 33 + 9 + 33 + 1 + len(script) + 67)
        target = coinselection.change_target(payment_value // max(1, n_payments), change_fee,
                                             self._selection_rng())
        return coinselection.SelectionParams(
            self.policy_asset, change_fee=change_fee, cost_of_change=change_fee + spend_fee,
            min_change_target=target, min_viable_change=max(spend_fee + 1, dust),
            subtract_fee_outputs=subtract_fee)

    def witness_estimate(self, coin: OwnedCoin) -> tuple[bytes, ...]:
        """A witness of the size signing ``coin``'s input will give (fee estimation)."""
        owned = self.keys.multisig_of(coin.out.script_pubkey)
        if owned is not None:
            return multisig_templates(owned)[1]
        return witness_template(coin.out.script_pubkey)

    def script_sig_estimate(self, coin: OwnedCoin) -> bytes:
        """A scriptSig of the size signing ``coin``'s input will give (fee estimation)."""
        owned = self.keys.multisig_of(coin.out.script_pubkey)
        if owned is not None:
            return multisig_templates(owned)[0]
        return script_sig_template(coin.out.script_pubkey)

    def next_change_script(self) -> bytes:
        """The script ``new_address(change=True)`` will pay next (fee estimation)."""
        if self.keys.has_internal_chain:
            return self.keys.key(self._next_change, self.change_kind, internal=True).script_pubkey
        return self.keys.key(self._next_key, self.change_kind).script_pubkey

    def build_transaction(self, payments: Sequence[Payment], *, fee: int | None = None,
                          height: int, issuance: Issuance | None = None,
                          reissuance: Reissuance | None = None,
                          blind_change: bool = True,
                          inputs: Sequence[OwnedCoin] | None = None,
                          fee_rate: int | None = None) -> Transaction:
        """A complete, blinded transaction paying ``payments`` plus an explicit fee output
        (``build`` with the same arguments; this returns only the transaction)."""
        return self.build(payments, fee=fee, height=height, issuance=issuance,
                          reissuance=reissuance, blind_change=blind_change, inputs=inputs,
                          fee_rate=fee_rate).tx

    def build(self, payments: Sequence[Payment], *, fee: int | None = None, height: int,
              issuance: Issuance | None = None, reissuance: Reissuance | None = None,
              blind_change: bool = True, inputs: Sequence[OwnedCoin] | None = None,
              fee_rate: int | None = None,
              subtract_fee_from: Sequence[int] = (),
              proven: Proven | None = None) -> BuiltTransaction:
        """A complete, blinded transaction paying ``payments`` plus an explicit fee output.

        The fee is ``fee`` satoshis, or ``fee_rate`` satoshis per 1000 virtual bytes of the
        finished transaction (its size is computed exactly before anything is proven: proofs
        have fixed sizes). ``subtract_fee_from``: indexes of payments that pay the fee out of
        their amount (equal shares, the remainder on the first). ``height`` is the height of
        the block that will include it (coin maturity). Change goes to new own addresses
        (blinded unless ``blind_change`` is False). The transaction is applied to the wallet at
        once (see the module docstring). ``proven`` is called with the blinded outputs as soon
        as their range proofs are made (a surjection proof may still be missing), before the
        signatures, and with the signer's ring points of each Borromean proof (by proof): a
        node starts verifying them then (``Node.verify_ahead``).
        """
        if (fee is None) == (fee_rate is None):
            raise WalletError("give exactly one of fee and fee_rate")
        return self._realize(self._select_and_plan(
            list(payments), fee=fee, fee_rate=fee_rate, height=height, issuance=issuance,
            reissuance=reissuance, blind_change=blind_change, inputs=inputs,
            subtract_fee_from=tuple(subtract_fee_from)), proven)

    def _preselected(self, reissuance: Reissuance | None, inputs: Sequence[OwnedCoin] | None,
                     height: int) -> list[OwnedCoin]:
        """The coins a transaction spends whatever selection adds: the reissuance token coin
        first (the reissuance rides on input 0), then the caller's inputs."""
        coins: list[OwnedCoin] = []
        if reissuance is not None:
            token = self.token_of.get(reissuance.asset)
            token_coins = self.spendable(token, height) if token else []
            if not token_coins:
                raise WalletError("no reissuance token for this asset")
            coins.append(token_coins[0])
        if inputs is not None:
            coins.extend(inputs)
        return coins

    def _select_and_plan(self, payments: list[Payment], *, fee: int | None,
                         fee_rate: int | None, height: int, issuance: Issuance | None,
                         reissuance: Reissuance | None, blind_change: bool,
                         inputs: Sequence[OwnedCoin] | None,
                         subtract_fee_from: tuple[int, ...]) -> _Plan:
        """Core's CreateTransactionInternal in our terms: choose the coins once
        (``coinselection``) for the payments plus the fee of everything but the inputs, make
        the exact fee for the chosen coins (``_fee_for_rate``), then drop policy-asset change
        to the fee when it is dust or within the cost of change, as Core does (spend.cpp: "We
        want to drop the change to fees if ..."). With a fixed ``fee`` the fee is exactly it
        and any change is kept."""
        preset = self._preselected(reissuance, inputs, height)
        fixed = fee is not None
        rate = 0 if fee_rate is None else fee_rate
        subtract = bool(subtract_fee_from)
        targets: dict[bytes, int] = {}
        for p in payments:
            targets[p.asset] = targets.get(p.asset, 0) + p.amount
        for c in preset:
            targets[c.asset] = targets.get(c.asset, 0) - c.value
        if reissuance is not None:
            targets[reissuance.asset] = targets.get(reissuance.asset, 0) - reissuance.amount
        # Elements' may_need_blinded_dummy (spend.cpp CreateTransactionInternal): with no
        # payment blinded, blinded inputs will need the blinded dummy output (unless blinded
        # change takes its place, as the outputs an issuance creates always do), so the
        # selection target pays for it; left out, a blinded coin just covering the explicit
        # rest was chosen again and again and the send failed for want of the fee
        may_need_dummy = (not any(p.address is not None for p in payments)
                          and not (blind_change and (issuance is not None
                                                     or reissuance is not None)))
        blinded_outputs = (sum(p.address is not None for p in payments)
                           + (1 if blind_change or may_need_dummy else 0))
        if fixed:
            assert fee is not None
            base_fee = fee
        elif subtract:
            base_fee = 0
        else:
            skeleton = _Plan(self, preset, payments, 1, issuance, reissuance, [], blind_change,
                             dummy=may_need_dummy)
            base_fee = coinselection.fee_at(rate, skeleton.vsize())
            base_fee -= sum(coinselection.fee_at(rate, self.input_vsize(c, blinded_outputs))
                            for c in preset)
        targets[self.policy_asset] = targets.get(self.policy_asset, 0) + max(0, base_fee)
        used = {(c.txid, c.index) for c in preset}
        policy_paid = sum(p.amount for p in payments if p.asset == self.policy_asset)

        def choose(extra: int) -> list[OwnedCoin]:
            wanted = dict(targets)
            wanted[self.policy_asset] = wanted.get(self.policy_asset, 0) + extra
            return self._choose(wanted, height, used, rate, fixed_fee=fixed,
                                payment_value=policy_paid, n_payments=max(1, len(payments)),
                                blinded_outputs=blinded_outputs, subtract_fee=subtract)

        def plan_with(coins: list[OwnedCoin], fee: int) -> _Plan:
            return self._plan(payments=list(payments), fee=fee, issuance=issuance,
                              reissuance=reissuance, blind_change=blind_change,
                              coins=preset + coins, subtract_fee_from=subtract_fee_from)

        chosen = choose(0)
        if fixed:
            assert fee is not None
            return plan_with(chosen, fee)
        shortfall = 0
        for _ in range(8):  # the exact fee can exceed the estimate: select again for more
            try:
                exact = _fee_for_rate(functools.partial(plan_with, chosen), rate)
                planned = plan_with(chosen, exact)
                break
            except _Short as short:
                changeless = (None if subtract
                              else self._changeless(plan_with, preset, chosen, payments, rate))
                if changeless is not None:  # Core: no change then, the surplus is the fee
                    return changeless
                shortfall += short.amount
                chosen = choose(shortfall)
        else:
            raise WalletError("insufficient funds: could not select coins for the fee")
        return self._drop_change(planned, rate)

    def _changeless(self, plan_with: Callable[[list[OwnedCoin], int], _Plan],
                    preset: list[OwnedCoin], chosen: list[OwnedCoin], payments: list[Payment],
                    rate: int) -> _Plan | None:
        """The chosen coins without policy-asset change, their surplus all fee, when that pays
        the rate: Core makes no change output when the change would not cover its own cost
        (``GetChange``), and without it the one output left to blind may stay explicit (a
        much smaller transaction). None when the surplus is short of that fee too."""
        surplus = (sum(c.value for c in preset + chosen if c.asset == self.policy_asset)
                   - sum(p.amount for p in payments if p.asset == self.policy_asset))
        if surplus <= 0:
            return None
        try:
            planned = plan_with(chosen, surplus)
        except _Short:
            return None
        if coinselection.fee_at(rate, planned.vsize()) > surplus:
            return None
        return planned

    def _drop_change(self, planned: _Plan, fee_rate: int) -> _Plan:
        """Policy-asset change at or below the cost of change, or dust at the discard rate,
        goes to the fee (spend.cpp); when it was the one blinded output that balances blinded
        inputs, a zero-value blinded ``OP_RETURN`` takes its place, as Elements does."""
        amount = next((v for a, v in planned.change if a == self.policy_asset), 0)
        if amount <= 0 or planned.subtract:
            return planned
        params = self.selection_params(fee_rate)
        if amount > params.cost_of_change and amount >= params.min_viable_change:
            return planned
        rest = [(a, v) for a, v in planned.change if a != self.policy_asset]
        dropped = replace(planned, fee=planned.fee + amount, change=rest)
        return replace(dropped, dummy=dropped.needs_dummy)

    def _plan(self, *, payments: list[Payment], fee: int, issuance: Issuance | None,
              reissuance: Reissuance | None, blind_change: bool, coins: list[OwnedCoin],
              subtract_fee_from: tuple[int, ...]) -> _Plan:
        """The transaction's shape for the chosen ``coins`` and ``fee``; no side effects
        (nothing is drawn). Raises ``_Short`` when the coins do not cover the policy asset."""
        if fee <= 0:
            raise WalletError("the fee must be positive (zero-value fee outputs are invalid)")
        if subtract_fee_from:
            payments = _subtract_fee(payments, fee, subtract_fee_from, self.policy_asset)
        if not coins:
            raise WalletError("nothing to spend")
        if reissuance is not None and coins[0].abf == 0:
            raise WalletError("the reissuance token coin must have a blinded asset")
        have: dict[bytes, int] = {}
        for c in coins:
            have[c.asset] = have.get(c.asset, 0) + c.value
        issued: dict[bytes, int] = {}
        if issuance is not None:
            entropy = issuance_entropy(coins[0].txid, coins[0].index, issuance.contract_hash)
            issued[issuance_asset_id(entropy)] = issuance.amount
            if issuance.tokens:
                issued[reissuance_token_id(entropy, issuance.blind_amount)] = issuance.tokens
        if reissuance is not None:
            issued[reissuance.asset] = reissuance.amount
        totals_in = dict(have)
        for asset, amount in issued.items():
            totals_in[asset] = totals_in.get(asset, 0) + amount
        totals_out: dict[bytes, int] = {self.policy_asset: fee}
        for p in payments:
            totals_out[p.asset] = totals_out.get(p.asset, 0) + p.amount
        change: list[tuple[bytes, int]] = []
        for asset in sorted({*totals_in, *totals_out}):
            amount = totals_in.get(asset, 0) - totals_out.get(asset, 0)
            if amount < 0:
                if asset == self.policy_asset:
                    raise _Short(-amount)
                raise WalletError("inputs do not cover the payments")
            if amount > 0:
                change.append((asset, amount))
        planned = _Plan(self, coins, payments, fee, issuance, reissuance, change, blind_change,
                        bool(subtract_fee_from))
        if planned.needs_dummy:
            planned = replace(planned, dummy=True)
        return planned

    def _realize(self, plan: _Plan, proven: Proven | None = None
                 ) -> BuiltTransaction:
        """Draw the randomness, make the proofs, apply the transaction to the wallet."""
        issuance, reissuance = plan.issuance, plan.reissuance
        txins: list[TxIn] = []
        targets: list[_InSpec] = []
        issued: Opening | None = None
        for i, coin in enumerate(plan.coins):
            record = None
            amount_proof = token_proof = b""
            targets.append(_InSpec(coin.asset, coin.abf, coin.generator, coin.value, coin.vbf))
            if i == 0 and issuance is not None:
                entropy = issuance_entropy(coin.txid, coin.index, issuance.contract_hash)
                asset = issuance_asset_id(entropy)
                token = reissuance_token_id(entropy, issuance.blind_amount)
                key = self.keys.issuance_blinding_secret(coin.txid, coin.index)
                issued_amount, issue_vbf, amount_proof = self._issued(
                    issuance.amount, asset, issuance.blind_amount, key)
                tokens, token_vbf, token_proof = (
                    self._issued(issuance.tokens, token, issuance.blind_amount, key)
                    if issuance.tokens else (None, 0, b""))
                record = AssetIssuance(_ZERO32, issuance.contract_hash, issued_amount, tokens)
                issued = Opening(asset, issuance.amount, 0, issue_vbf)
                self.learn_issuance(asset, token, entropy)
                # the surjection targets VerifyAmounts lists: the non-null issued amounts
                if issued_amount is not None:
                    targets.append(_InSpec(asset, 0, generator_generate(asset), issuance.amount,
                                           issue_vbf))
                if tokens is not None:
                    targets.append(_InSpec(token, 0, generator_generate(token), issuance.tokens,
                                           token_vbf))
            if i == 0 and reissuance is not None:
                entropy = self.entropy[reissuance.asset]
                asset_gen = generator_generate(reissuance.asset)
                reissued: int | bytes = reissuance.amount
                reissue_vbf = 0
                if reissuance.blind_amount:
                    reissue_vbf = self._random_scalar()
                    reissued = commit(reissuance.amount, reissue_vbf, asset_gen).serialize()
                    amount_proof = self._issuance_proof(
                        reissuance.amount, reissue_vbf, reissuance.asset,
                        self.keys.issuance_blinding_secret(coin.txid, coin.index))
                record = AssetIssuance(coin.abf.to_bytes(32, "big"), entropy, reissued, None)
                issued = Opening(reissuance.asset, reissuance.amount, 0, reissue_vbf)
                targets.append(_InSpec(reissuance.asset, 0, asset_gen, reissuance.amount,
                                       reissue_vbf))
            txins.append(TxIn(prevout_hash=coin.txid, prevout_index=coin.index,
                              issuance=record, issuance_amount_rangeproof=amount_proof,
                              inflation_keys_rangeproof=token_proof))

        lone = plan.lone_explicit
        outs = [_OutSpec(p.script, p.asset, p.amount,
                         p.address.blinding_pubkey if p.address and not lone else None)
                for p in plan.payments]
        change_indexes = []
        # Elements' issueasset / reissueasset pay what they create to new receiving addresses
        # (GetNewDestination), not to change: the history lists them as received
        created: set[bytes] = set()
        if issued is not None:
            created.add(issued.asset)
            if issuance is not None:  # learn_issuance above recorded its token
                created.add(self.token_of[issued.asset])
        for asset, amount in plan.change:
            fresh = asset in created
            address = self.new_address(self.change_kind, change=not fresh)
            if not fresh:
                change_indexes.append(len(outs))
            outs.append(_OutSpec(address.script_pubkey, asset, amount,
                                 address.blinding_pubkey if plan.blind_change and not lone
                                 else None))
        outs.append(_OutSpec(b"", self.policy_asset, plan.fee, None, fee=True))
        if plan.dummy:  # blinded to a fresh change key: only balancing is asked of it; last,
            # after the fee, where Elements' fillBlindDetails appends it (src/wallet/spend.cpp)
            dummy_key = self.new_address(self.change_kind, change=True).blinding_pubkey
            outs.append(_OutSpec(OP_RETURN, self.policy_asset, 0, dummy_key))

        txouts, openings = self._blind_outputs(outs, targets, proven)
        tx = Transaction(version=2, inputs=tuple(txins), outputs=tuple(txouts), locktime=0)
        tx = sign_transaction(tx, [c.out for c in plan.coins], self.keys, self.genesis_hash,
                              self._random)
        self.scan_transaction(tx, None, openings)
        return BuiltTransaction(tx, plan.fee, openings, frozenset(change_indexes),
                                tuple(plan.coins), issued)

    def fund(self, payments: Sequence[Payment], *, fee_rate: int, height: int,
             inputs: Sequence[OwnedCoin] = ()) -> tuple[Transaction, int, list[int]]:
        """fundrawtransaction: coins, change and the fee (at ``fee_rate`` for the transaction
        once blinded) added to ``payments``, nothing blinded yet: outputs to confidential
        addresses (change included) carry the blinding public key in their nonce field, for
        ``blind`` (Elements' createrawtransaction convention). Returns (transaction, fee,
        change output indexes)."""
        plan = self._select_and_plan(list(payments), fee=None, fee_rate=fee_rate, height=height,
                                     issuance=None, reissuance=None, blind_change=True,
                                     inputs=list(inputs) or None, subtract_fee_from=())
        fee = plan.fee
        outs = [TxOut(asset=p.asset, value=p.amount, script_pubkey=p.script,
                      nonce=p.address.blinding_pubkey if p.address else b"")
                for p in plan.payments]
        lone = plan.lone_explicit  # its blinding key is dropped (fillBlindDetails)
        if lone and not plan.change:
            outs = [replace(o, nonce=b"") for o in outs]
        change = []
        for asset, amount in plan.change:
            address = self.new_address(self.change_kind, change=True)
            change.append(len(outs))
            outs.append(TxOut(asset=asset, value=amount, script_pubkey=address.script_pubkey,
                              nonce=b"" if lone else address.blinding_pubkey))
        if plan.dummy:  # for blindrawtransaction to balance the blinded inputs with
            key = self.new_address(self.change_kind, change=True).blinding_pubkey
            outs.append(TxOut(asset=self.policy_asset, value=0, script_pubkey=OP_RETURN,
                              nonce=key))
        outs.append(TxOut(asset=self.policy_asset, value=fee))
        txins = tuple(TxIn(prevout_hash=c.txid, prevout_index=c.index) for c in plan.coins)
        return Transaction(version=2, inputs=txins, outputs=tuple(outs)), fee, change

    def blind(self, tx: Transaction, inputs: Sequence[Opening | None],
              generators: Sequence[bytes] | None = None,
              issuance_key: Callable[[TxIn], int] | None = None
              ) -> tuple[Transaction, dict[int, Opening]]:
        """blindrawtransaction: blind every explicit output whose nonce holds a blinding public
        key, given the openings of the inputs (an input with explicit asset and value is an
        ``Opening`` with zero blinds). An input whose opening is None belongs to someone else:
        ``generators`` (33-byte asset commitments, one per input) give its surjection target,
        and it takes no part in balancing the blinds — Elements' partial blinding, where each
        party balances its own inputs against the outputs it blinds (src/blind.cpp
        ``BlindTransaction``). Outputs already blinded are left as they are.
        ``issuance_key``: blind the explicit issuance amounts and reissuance tokens too, with
        the key it gives for an input (``NodeWallet.issuance_blinding_secret``: its own or one
        imported) as
        their range proofs' nonce; issuances are pseudo-inputs of the balance and surjection
        targets (their asset and token, unblinded generators) right after their input. Returns
        the transaction and the openings of the outputs blinded here."""
        targets: list[_InSpec] = []
        txins = list(tx.inputs)
        for i, opening in enumerate(inputs):
            self._add_target(targets, i, opening, generators)
            if tx.inputs[i].issuance is not None:
                txins[i] = self._blind_issuance(tx.inputs[i], targets, issuance_key)
        for extra in (generators or [])[len(inputs):]:  # inputs the other party will add
            try:
                targets.append(_InSpec(_ZERO32, 0, Generator.parse(extra), known=False))
            except CtpluginError as exc:
                raise WalletError(f"asset commitment: {exc}") from None
        specs = []
        positions = []
        for j, out in enumerate(tx.outputs):
            if not isinstance(out.value, int) or len(out.asset) != 32:
                continue  # blinded already (by the other party): not ours to balance
            key = out.nonce if len(out.nonce) == 33 and out.nonce[0] in (2, 3) else None
            specs.append(_OutSpec(out.script_pubkey, out.asset, out.value, key, out.is_fee))
            positions.append(j)
        blinded, spec_openings = self._blind_outputs(specs, targets)
        outputs = list(tx.outputs)
        openings: dict[int, Opening] = {}
        for k, j in enumerate(positions):
            outputs[j] = blinded[k]
            openings[j] = spec_openings[k]
        return (Transaction(version=tx.version, inputs=tuple(txins), outputs=tuple(outputs),
                            locktime=tx.locktime), openings)

    @staticmethod
    def _add_target(targets: list[_InSpec], i: int, opening: Opening | None,
                    generators: Sequence[bytes] | None) -> None:
        """Input ``i``'s surjection target and balance terms (``blind``)."""
        if opening is None:
            if generators is None or i >= len(generators):
                raise WalletError(f"input {i}: its blinding factors are unknown to the wallet")
            try:
                generator = Generator.parse(generators[i])
            except CtpluginError as exc:
                raise WalletError(f"input {i}: asset commitment: {exc}") from None
            targets.append(_InSpec(_ZERO32, 0, generator, known=False))
            return
        if generators is not None and i < len(generators):
            # the caller's list is the surjection target list for every input, ours too
            # (BlindTransaction's auxiliary generators): a wrong one makes a proof that fails
            # verification, as elementsd's does, rather than a refusal here
            try:
                generator = Generator.parse(generators[i])
            except CtpluginError as exc:
                raise WalletError(f"input {i}: asset commitment: {exc}") from None
        else:
            generator = (generator_generate_blinded(opening.asset,
                                                    opening.abf.to_bytes(32, "big"))
                         if opening.abf else generator_generate(opening.asset))
        targets.append(_InSpec(opening.asset, opening.abf, generator, opening.value,
                               opening.vbf))

    def _blind_issuance(self, txin: TxIn, targets: list[_InSpec],
                        issuance_key: Callable[[TxIn], int] | None) -> TxIn:
        """The issuance on ``txin``, blinded when ``issuance_key`` is given (``blind``), and its
        pseudo-inputs appended to ``targets``."""
        issuance = txin.issuance
        assert issuance is not None
        if issuance.amount_is_blinded or issuance.inflation_keys_are_blinded:
            raise WalletError("the issuance is blinded already")
        blind = issuance_key is not None
        if issuance.is_reissuance:
            entropy = issuance.asset_entropy
            token = None
        else:
            entropy = issuance_entropy(txin.prevout_hash, txin.prevout_index,
                                       issuance.asset_entropy)
            token = reissuance_token_id(entropy, blind)
        asset = issuance_asset_id(entropy)
        key = issuance_key(txin) if issuance_key is not None else 0
        amount: int | bytes | None = issuance.amount
        tokens: int | bytes | None = issuance.inflation_keys
        amount_proof = tokens_proof = b""
        if isinstance(issuance.amount, int):
            vbf = self._random_scalar() if blind else 0
            gen = generator_generate(asset)
            targets.append(_InSpec(asset, 0, gen, issuance.amount, vbf))
            if blind:
                amount = commit(issuance.amount, vbf, gen).serialize()
                amount_proof = self._issuance_proof(issuance.amount, vbf, asset, key)
        if isinstance(issuance.inflation_keys, int) and token is not None:
            vbf = self._random_scalar() if blind else 0
            gen = generator_generate(token)
            targets.append(_InSpec(token, 0, gen, issuance.inflation_keys, vbf))
            if blind:
                tokens = commit(issuance.inflation_keys, vbf, gen).serialize()
                tokens_proof = self._issuance_proof(issuance.inflation_keys, vbf, token, key)
        if not blind:
            return txin
        return replace(txin, issuance=AssetIssuance(issuance.asset_blinding_nonce,
                                                    issuance.asset_entropy, amount, tokens),
                       issuance_amount_rangeproof=amount_proof,
                       inflation_keys_rangeproof=tokens_proof)

    def learn_issuance(self, asset: bytes, token: bytes, entropy: bytes) -> None:
        """Remember an issuance: both ids (recognised in proofs), their entropy, the token
        of the asset (reissuance)."""
        self.add_known_asset(asset)
        self.add_known_asset(token)
        self.entropy[asset] = entropy
        self.entropy[token] = entropy
        self.token_of[asset] = token

    def _blind_outputs(self, outs: Sequence[_OutSpec], targets: Sequence[_InSpec],
                       proven: Proven | None = None
                       ) -> tuple[list[TxOut], dict[int, Opening]]:
        """Blinding factors, commitments, range proofs and surjection proofs for the outputs
        that carry a blinding key; explicit outputs as they are (``blinding`` docstring).
        Returns the outputs and every output's opening (asset, value, abf, vbf). ``proven``
        (``build``) hears of the blinded outputs once their range proofs are made."""
        blinded = [j for j, o in enumerate(outs) if o.blinding_pubkey is not None]
        inputs_terms = [(t.value, t.abf, t.vbf) for t in targets if t.known]
        if not blinded and blinding_total(inputs_terms):
            raise WalletError("blinded inputs need at least one blinded output to balance")
        out_terms: list[tuple[int, int, int]] = []
        plans: dict[int, tuple[int, bytes, int, int]] = {}  # j -> (e, nonce, abf, vbf)
        for position, j in enumerate(blinded):
            o = outs[j]
            e = self._random_scalar()
            nonce = rewind_nonce(e, o.blinding_pubkey)  # type: ignore[arg-type]
            abf = asset_blinding_factor(nonce)
            if position == len(blinded) - 1:
                if o.amount == 0 and (blinding_total(inputs_terms)
                                      == blinding_total(out_terms)):
                    # The blinded inputs balance by themselves (their transaction's other
                    # outputs came back whole): a zero-value last output would need a zero
                    # blind, so it stays explicit, as BlindTransaction leaves it
                    # (src/blind.cpp, the "diff_zero" early return)
                    continue
                vbf = final_value_blind(inputs_terms, out_terms, o.amount, abf)
            else:
                vbf = self._random_scalar()
            out_terms.append((o.amount, abf, vbf))
            plans[j] = (e, nonce, abf, vbf)

        input_assets = [t.asset for t in targets]
        input_blinds = [t.abf.to_bytes(32, "big") for t in targets]
        input_gens = [t.generator for t in targets]
        # each output's first surjection seed, drawn in output order as proving one output
        # after the other draws them; a seed that fails is redrawn below, in that order too
        seeds = {j: self._random() for j in plans}

        def prove(j: int) -> tuple[TxOut, Generator, bytes | None]:
            """Output j with its range proof and surjection proof (none if its first seed
            fails), its asset generator and the range proof's ring points (Borromean)."""
            e, nonce, abf, vbf = plans[j]
            abf_bytes = abf.to_bytes(32, "big")
            generator = generator_generate_blinded(outs[j].asset, abf_bytes)
            commitment = commit(outs[j].amount, vbf, generator)
            proof, ring_points = self._output_proof_signed(
                outs[j].amount, vbf, outs[j].asset, abf_bytes, generator, nonce, outs[j].script,
                commitment)
            out = TxOut(asset=generator.serialize(), value=commitment.serialize(),
                        nonce=ephemeral_pubkey(e), script_pubkey=outs[j].script,
                        range_proof=proof)
            surj = _surjection_proof(input_assets, input_blinds, input_gens, outs[j].asset,
                                     abf_bytes, generator, seeds[j])
            return ((out if surj is None else replace(out, surjection_proof=surj)), generator,
                    ring_points)

        # The range proofs (most of a send's time) are pure functions of their inputs and run
        # mostly without the GIL, so each output's proofs are made side by side on the kernel's
        # threads; the bytes are those of proving one after the other.
        made = dict(zip(plans, side_by_side(prove, list(plans), kernel.threads())))
        if proven is not None and made:
            proven([out for out, _, _ in made.values()],
                   {out.range_proof: points for out, _, points in made.values()
                    if points is not None})
        result = []
        openings: dict[int, Opening] = {}
        for j, o in enumerate(outs):
            if j not in plans:
                result.append(TxOut(asset=o.asset, value=o.amount, script_pubkey=o.script))
                openings[j] = Opening(o.asset, o.amount, 0, 0)
                continue
            _, _, abf, vbf = plans[j]
            out, asset_gen, _ = made[j]
            if not out.surjection_proof:
                out = replace(out, surjection_proof=self._surjection(
                    input_assets, input_blinds, input_gens, o.asset, abf.to_bytes(32, "big"),
                    asset_gen))
            result.append(out)
            openings[j] = Opening(o.asset, o.amount, abf, vbf)
        return result, openings

    def _surjection(self, input_assets: list[bytes], input_blinds: list[bytes],
                    input_gens: list[Generator], asset: bytes, abf: bytes,
                    asset_gen: Generator) -> bytes:
        for _ in range(16):  # a seed can fail (ring selection): retry with a fresh one
            proof = _surjection_proof(input_assets, input_blinds, input_gens, asset, abf,
                                      asset_gen, self._random())
            if proof is not None:
                return proof
        raise WalletError("could not build a surjection proof for this output")


def _surjection_proof(input_assets: list[bytes], input_blinds: list[bytes],
                      input_gens: list[Generator], asset: bytes, abf: bytes,
                      asset_gen: Generator, seed: bytes) -> bytes | None:
    """The serialized surjection proof of an output of ``asset`` (blind ``abf``) over the
    inputs, from ``seed``; None if that seed's ring selection fails."""
    try:
        return surjection.generate(
            input_assets=input_assets, input_blinds=input_blinds, input_generators=input_gens,
            output_asset=asset, output_blind=abf, seed=seed,
            output_generator=asset_gen).serialize()
    except ProofError:
        return None


def _with_height(coin: OwnedCoin, height: int) -> OwnedCoin:
    return OwnedCoin(coin.txid, coin.index, coin.out, coin.asset, coin.value, coin.abf, coin.vbf,
                     height, coin.coinbase)
