"""A deterministic confidential-transaction wallet for the regtest chain and the tests.

What it does: keys and confidential addresses (``keys``, ``address``), coin tracking by scanning
transactions and blocks, unblinding of received outputs, coin selection, blinding (value and
asset blinding factors, the final balancing blind: ``blinding``), Bulletproof range proofs and
surjection proofs, explicit fee outputs, asset issuance and reissuance.

Determinism: every random choice (ephemeral keys, value blinds, surjection seeds) is
``tagged_hash("ctplugin/wallet/rng", seed ‖ be64(counter))``, so a wallet built from a seed and
driven by the same calls produces the same transactions byte for byte (reproducible test chains).

Unblinding convention: see ``regtest.wallet.blinding`` (nonce from ECDH as in Elements; value and
value blind from the Bulletproof rewind; abf from the nonce; 20-byte message = asset id prefix).

Range-proof kind (``range_proofs``: the chain profile's, ``regtest.params.chain_params``):
Bulletproofs by default; ``RANGE_PROOF_BORROMEAN`` makes Borromean proofs the way Elements'
wallet does (``ctplugin.borromean.elements``: min_value 1, or 0 for an unspendable script, exp 0,
52 bits, message asset ‖ abf, extra commit = scriptPubKey; issuance proofs with min 0, no extra
commit and the issuance blinding key as nonce) and unblinds them Elements' way (asset and abf
read from the message, the asset commitment recomputed).

Scripts and signatures: new addresses are P2TR key-path outputs by default (P2WPKH on request,
``new_address(kind="p2wpkh")``); every transaction the wallet builds is signed
(``regtest.wallet.signing``: BIP340 for P2TR, ECDSA for P2WPKH; taproot digests commit to the
chain's genesis hash, ``genesis_hash``). The wallet trusts its own bookkeeping: a transaction it
builds is applied to its coin set at once (its inputs leave, its own outputs arrive unconfirmed)
and a block confirms them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctplugin import borromean, surjection
from ctplugin.bulletproofs import prove_output, rewind_output
from ctplugin.elements import AssetIssuance, Block, Transaction, TxIn, TxOut
from ctplugin.elements.chainparams import RANGE_PROOF_BORROMEAN, RANGE_PROOF_BULLETPROOF
from ctplugin.elements.issuance import (
    issuance_asset_id,
    issuance_entropy,
    reissuance_token_id,
)
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import CtpluginError, ProofError
from ctplugin.hashes import tagged_hash
from ctplugin.pedersen import Generator, commit, generator_generate, generator_generate_blinded
from ctplugin.secp256k1.params import N
from regtest.params import COINBASE_MATURITY, POLICY_ASSET, genesis_block
from regtest.wallet.address import ConfidentialAddress
from regtest.wallet.blinding import (
    asset_blinding_factor,
    blinding_total,
    ephemeral_pubkey,
    final_value_blind,
    rewind_nonce,
)
from regtest.wallet.keys import P2TR, KeyChain
from regtest.wallet.signing import sign_transaction

_ZERO32 = bytes(32)
LOOKAHEAD = 20
"""Keys derived ahead of the last address handed out, so scanning finds payments to them."""


class WalletError(CtpluginError):
    """The wallet cannot do what was asked (insufficient funds, unknown asset, ...)."""


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

    def mature_at(self, height: int) -> bool:
        """Spendable in a block at ``height`` (coinbase outputs need COINBASE_MATURITY)."""
        if not self.coinbase:
            return True
        return self.height is not None and height - self.height >= COINBASE_MATURITY


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
    reissuance tokens, paid to the wallet's own new addresses. With ``blind_amount`` the issued
    amount is a Pedersen commitment under the unblinded asset generator with a Bulletproof whose
    extra commit is empty (Elements' issuance rule); the token amount stays explicit."""

    amount: int
    tokens: int = 0
    contract_hash: bytes = _ZERO32
    blind_amount: bool = False


@dataclass(frozen=True, slots=True)
class Reissuance:
    """Reissue ``amount`` more of ``asset``: spends the wallet's token coin of that asset."""

    asset: bytes
    amount: int


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


class Wallet:
    """A deterministic wallet (see the module docstring)."""

    def __init__(self, seed: bytes, *, policy_asset: bytes = POLICY_ASSET,
                 range_proofs: str = RANGE_PROOF_BULLETPROOF,
                 genesis_hash: bytes | None = None) -> None:
        if range_proofs not in (RANGE_PROOF_BULLETPROOF, RANGE_PROOF_BORROMEAN):
            raise WalletError(f"unknown range-proof kind {range_proofs!r}")
        self.keys = KeyChain(seed)
        self.policy_asset = policy_asset
        self.range_proofs = range_proofs
        self.genesis_hash = genesis_hash if genesis_hash is not None else genesis_block().hash
        self.coins: dict[tuple[bytes, int], OwnedCoin] = {}
        self.known_assets: dict[bytes, bytes] = {}  # 20-byte prefix -> asset id
        self.entropy: dict[bytes, bytes] = {}  # asset or token id -> issuance entropy
        self.token_of: dict[bytes, bytes] = {}  # asset id -> its reissuance token id
        self._next_key = 0
        self._rng_counter = 0
        self.add_known_asset(policy_asset)
        self.keys.key(LOOKAHEAD - 1)

    # --- randomness and addresses ---------------------------------------------------------

    def _random(self) -> bytes:
        self._rng_counter += 1
        return tagged_hash("ctplugin/wallet/rng",
                           self.keys.seed + self._rng_counter.to_bytes(8, "big"))

    def _random_scalar(self) -> int:
        while True:
            value = int.from_bytes(self._random(), "big")
            if 0 < value < N:
                return value

    def new_address(self, kind: str = P2TR) -> ConfidentialAddress:
        """The next unused key's address of ``kind`` (``"p2tr"`` or ``"p2wpkh"``)."""
        pair = self.keys.key(self._next_key, kind)
        self._next_key += 1
        self.keys.key(self._next_key + LOOKAHEAD - 1)
        return ConfidentialAddress(pair.script_pubkey, pair.blinding_pubkey)

    def address(self, index: int, kind: str = P2TR) -> ConfidentialAddress:
        """The address of key ``index`` (key 0 of ``REGTEST_SEED`` owns the genesis coins, at
        its P2WPKH address)."""
        pair = self.keys.key(index, kind)
        self._next_key = max(self._next_key, index + 1)
        return ConfidentialAddress(pair.script_pubkey, pair.blinding_pubkey)

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
        """Coins of ``asset`` spendable in a block at ``height``, largest first (deterministic)."""
        coins = [c for c in self.coins.values() if c.asset == asset and c.mature_at(height)]
        coins.sort(key=lambda c: (-c.value, c.txid, c.index))
        return coins

    # --- scanning --------------------------------------------------------------------------

    def unblind(self, out: TxOut) -> tuple[bytes, int, int, int] | None:
        """(asset id, value, abf, vbf) of an output paying one of our scripts, else None."""
        pair = self.keys.owner_of(out.script_pubkey)
        if pair is None:
            return None
        if isinstance(out.value, int):
            if len(out.asset) != 32:
                return None  # explicit value under a blinded asset: not made by this wallet
            return out.asset, out.value, 0, 0
        if len(out.nonce) != 33 or out.nonce[0] not in (2, 3):
            return None
        nonce = rewind_nonce(pair.blinding_secret, out.nonce)
        value_gen = (out.asset if len(out.asset) == 33
                     else generator_generate(out.asset).serialize())
        if self.range_proofs == RANGE_PROOF_BORROMEAN:
            return self._unblind_borromean(out, nonce, value_gen)
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
        if generator_generate_blinded(asset, abf.to_bytes(32, "big")).serialize() != out.asset:
            return None
        return asset, opened.value, abf, vbf

    def _unblind_borromean(self, out: TxOut, nonce: bytes,
                           value_gen: bytes) -> tuple[bytes, int, int, int] | None:
        """Elements' unblinding: the proof's message is asset ‖ abf, checked against the
        output's asset commitment (an explicit asset has abf 0 and no check)."""
        assert isinstance(out.value, bytes)
        try:
            if len(out.asset) == 32:
                opened = borromean.rewind(out.range_proof, out.value, value_gen,
                                          out.script_pubkey, nonce)
                if opened is None:
                    return None
                return out.asset, opened.value, 0, int.from_bytes(opened.blind, "big")
            found = borromean.elements.unblind_with_nonce(nonce, out.range_proof, out.value,
                                                          out.asset, out.script_pubkey)
        except CtpluginError:
            return None
        if found is None:
            return None
        return (found.asset, found.value, int.from_bytes(found.asset_blind, "big"),
                int.from_bytes(found.value_blind, "big"))

    def _output_proof(self, value: int, vbf: int, asset: bytes, abf: bytes, asset_gen: Generator,
                      nonce: bytes, script: bytes) -> bytes:
        """The range proof of a blinded output, of this wallet's kind."""
        if self.range_proofs == RANGE_PROOF_BORROMEAN:
            return borromean.elements.output_rangeproof(
                value, nonce, asset, abf, vbf.to_bytes(32, "big"),
                commit(value, vbf, asset_gen), asset_gen, script,
                min_value=0 if is_unspendable(script) else 1)
        return prove_output(value, vbf, asset_gen, nonce, script, message=asset[:20])

    def _issuance_proof(self, value: int, vbf: int, asset: bytes) -> bytes:
        """The range proof of a blinded issuance amount (extra commit: an EMPTY script)."""
        asset_gen = generator_generate(asset)
        if self.range_proofs == RANGE_PROOF_BORROMEAN:
            return borromean.elements.issuance_rangeproof(
                value, self._random(), vbf.to_bytes(32, "big"), commit(value, vbf, asset_gen),
                asset)
        return prove_output(value, vbf, asset_gen, self._random(), b"")

    def scan_transaction(self, tx: Transaction, height: int | None = None) -> list[OwnedCoin]:
        """Drop the coins ``tx`` spends, add the outputs it pays us; returns the new coins."""
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

    def _select(self, asset: bytes, amount: int, height: int,
                exclude: set[tuple[bytes, int]]) -> list[OwnedCoin]:
        chosen, total = [], 0
        for coin in self.spendable(asset, height):
            if total >= amount:
                break
            if (coin.txid, coin.index) in exclude:
                continue
            chosen.append(coin)
            total += coin.value
        if total < amount:
            raise WalletError(f"insufficient funds in asset {asset[::-1].hex()[:16]}…: "
                              f"need {amount}, have {total}")
        return chosen

    def build_transaction(self, payments: Sequence[Payment], *, fee: int, height: int,
                          issuance: Issuance | None = None,
                          reissuance: Reissuance | None = None,
                          blind_change: bool = True,
                          inputs: Sequence[OwnedCoin] | None = None) -> Transaction:
        """A complete, blinded transaction paying ``payments`` plus an explicit fee output.

        ``height`` is the height of the block that will include it (coin maturity). Change goes
        to new own addresses (blinded unless ``blind_change`` is False). The transaction is
        applied to the wallet at once (see the module docstring).
        """
        if fee <= 0:
            raise WalletError("the fee must be positive (zero-value fee outputs are invalid)")
        needed: dict[bytes, int] = {self.policy_asset: fee}
        for p in payments:
            needed[p.asset] = needed.get(p.asset, 0) + p.amount
        coins: list[OwnedCoin] = []
        used: set[tuple[bytes, int]] = set()
        if reissuance is not None:
            token = self.token_of.get(reissuance.asset)
            token_coins = self.spendable(token, height) if token else []
            if not token_coins:
                raise WalletError("no reissuance token for this asset")
            coins.append(token_coins[0])
            used.add((token_coins[0].txid, token_coins[0].index))
            needed[reissuance.asset] = needed.get(reissuance.asset, 0) - reissuance.amount
        if inputs is not None:
            coins.extend(inputs)
            used.update((c.txid, c.index) for c in inputs)
        have: dict[bytes, int] = {}
        for c in coins:
            have[c.asset] = have.get(c.asset, 0) + c.value
        for asset, amount in needed.items():
            short = amount - have.get(asset, 0)
            if short > 0:
                extra = self._select(asset, short, height, used)
                coins.extend(extra)
                used.update((c.txid, c.index) for c in extra)
                have[asset] = have.get(asset, 0) + sum(c.value for c in extra)
        if not coins:
            raise WalletError("nothing to spend")

        # Inputs, their issuance records, and the surjection target list (Elements' order).
        txins: list[TxIn] = []
        targets: list[_InSpec] = []
        issued: dict[bytes, int] = {}
        outs: list[_OutSpec] = []
        for i, coin in enumerate(coins):
            record = None
            amount_proof = b""
            targets.append(_InSpec(coin.asset, coin.abf, coin.generator, coin.value, coin.vbf))
            if i == 0 and issuance is not None:
                entropy = issuance_entropy(coin.txid, coin.index, issuance.contract_hash)
                asset = issuance_asset_id(entropy)
                token = reissuance_token_id(entropy, issuance.blind_amount)
                asset_gen = generator_generate(asset)
                issued_amount: int | bytes = issuance.amount
                issue_vbf = 0
                if issuance.blind_amount:
                    issue_vbf = self._random_scalar()
                    issued_amount = commit(issuance.amount, issue_vbf, asset_gen).serialize()
                    amount_proof = self._issuance_proof(issuance.amount, issue_vbf, asset)
                record = AssetIssuance(_ZERO32, issuance.contract_hash, issued_amount,
                                       issuance.tokens or None)
                self._learn_issuance(asset, token, entropy)
                targets.append(_InSpec(asset, 0, asset_gen, issuance.amount, issue_vbf))
                issued[asset] = issuance.amount
                if issuance.tokens:
                    targets.append(_InSpec(token, 0, generator_generate(token)))
                    issued[token] = issuance.tokens
            if i == 0 and reissuance is not None:
                if coin.abf == 0:
                    raise WalletError("the reissuance token coin must have a blinded asset")
                entropy = self.entropy[reissuance.asset]
                record = AssetIssuance(coin.abf.to_bytes(32, "big"), entropy,
                                       reissuance.amount, None)
                targets.append(_InSpec(reissuance.asset, 0,
                                       generator_generate(reissuance.asset)))
                issued[reissuance.asset] = reissuance.amount
            txins.append(TxIn(prevout_hash=coin.txid, prevout_index=coin.index,
                              issuance=record, issuance_amount_rangeproof=amount_proof))

        for p in payments:
            outs.append(_OutSpec(p.script, p.asset, p.amount,
                                 p.address.blinding_pubkey if p.address else None))
        totals_in = dict(have)
        for asset, amount in issued.items():
            totals_in[asset] = totals_in.get(asset, 0) + amount
        totals_out: dict[bytes, int] = {self.policy_asset: fee}
        for p in payments:
            totals_out[p.asset] = totals_out.get(p.asset, 0) + p.amount
        for asset in sorted(totals_in):
            change = totals_in[asset] - totals_out.get(asset, 0)
            if change < 0:
                raise WalletError("inputs do not cover the payments")
            if change > 0:
                address = self.new_address()
                outs.append(_OutSpec(address.script_pubkey, asset, change,
                                     address.blinding_pubkey if blind_change else None))
        outs.append(_OutSpec(b"", self.policy_asset, fee, None, fee=True))

        txouts = self._blind_outputs(outs, targets)
        tx = Transaction(version=2, inputs=tuple(txins), outputs=tuple(txouts), locktime=0)
        tx = sign_transaction(tx, [c.out for c in coins], self.keys, self.genesis_hash,
                              self._random)
        self.scan_transaction(tx, None)
        return tx

    def _learn_issuance(self, asset: bytes, token: bytes, entropy: bytes) -> None:
        self.add_known_asset(asset)
        self.add_known_asset(token)
        self.entropy[asset] = entropy
        self.entropy[token] = entropy
        self.token_of[asset] = token

    def _blind_outputs(self, outs: Sequence[_OutSpec], targets: Sequence[_InSpec]) -> list[TxOut]:
        """Blinding factors, commitments, range proofs and surjection proofs for the outputs
        that carry a blinding key; explicit outputs as they are (``blinding`` docstring)."""
        blinded = [j for j, o in enumerate(outs) if o.blinding_pubkey is not None]
        inputs_terms = [(t.value, t.abf, t.vbf) for t in targets]
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
                vbf = final_value_blind(inputs_terms, out_terms, o.amount, abf)
            else:
                vbf = self._random_scalar()
            out_terms.append((o.amount, abf, vbf))
            plans[j] = (e, nonce, abf, vbf)

        input_assets = [t.asset for t in targets]
        input_blinds = [t.abf.to_bytes(32, "big") for t in targets]
        input_gens = [t.generator for t in targets]
        result = []
        for j, o in enumerate(outs):
            if j not in plans:
                result.append(TxOut(asset=o.asset, value=o.amount, script_pubkey=o.script))
                continue
            e, nonce, abf, vbf = plans[j]
            abf_bytes = abf.to_bytes(32, "big")
            asset_gen = generator_generate_blinded(o.asset, abf_bytes)
            commitment = commit(o.amount, vbf, asset_gen)
            proof = self._output_proof(o.amount, vbf, o.asset, abf_bytes, asset_gen, nonce,
                                       o.script)
            surj = self._surjection(input_assets, input_blinds, input_gens, o.asset, abf_bytes,
                                    asset_gen)
            result.append(TxOut(asset=asset_gen.serialize(), value=commitment.serialize(),
                                nonce=ephemeral_pubkey(e), script_pubkey=o.script,
                                surjection_proof=surj, range_proof=proof))
        return result

    def _surjection(self, input_assets: list[bytes], input_blinds: list[bytes],
                    input_gens: list[Generator], asset: bytes, abf: bytes,
                    asset_gen: Generator) -> bytes:
        for _ in range(16):  # a seed can fail (ring selection): retry with a fresh one
            try:
                return surjection.generate(
                    input_assets=input_assets, input_blinds=input_blinds,
                    input_generators=input_gens, output_asset=asset, output_blind=abf,
                    seed=self._random(), output_generator=asset_gen).serialize()
            except ProofError:
                continue
        raise WalletError("could not build a surjection proof for this output")


def _with_height(coin: OwnedCoin, height: int) -> OwnedCoin:
    return OwnedCoin(coin.txid, coin.index, coin.out, coin.asset, coin.value, coin.abf, coin.vbf,
                     height, coin.coinbase)
