"""Elements' mempool policy (docs/elements-regtest.md §8): the rules a transaction must meet to
enter the mempool beyond consensus, on every chain.

Settings are one value, ``PolicySettings`` (elementsd's options and defaults for a custom chain
such as elementsregtest: ``src/node/mempool_args.cpp``, ``src/kernel/chainparams.cpp``), given
to the ``Mempool`` by whoever builds it. The checks run in Elements' order
(``validation.cpp`` MemPoolAccept::PreChecks), in three calls of the mempool:

1. ``check_transaction`` — the transaction alone: ``IsStandardTx`` (``src/policy/policy.cpp``:
   ``version``, ``tx-size``, ``scriptsig-size``, ``scriptsig-not-pushonly``, ``scriptpubkey``
   through the Solver (``ctplugin.script.standard``), ``bare-multisig``, more than one dust
   output ``dust``, ``multi-op-return``), ``issuance-out-of-range``, ``tx-size-small``;
2. ``check_inputs`` — with the spent outputs, after the consensus input checks:
   ``bad-txin-extra-issuance-rangeproof`` / ``bad-txin-extra-inflation-rangeproof``,
   ``AreInputsStandard`` (``bad-txns-nonstandard-inputs``), ``IsWitnessStandard``
   (``bad-witness-nonstandard``);
3. ``check_fees`` — with the fee and the sigop cost: a dust output with a fee (``dust``, "tx with
   dust output must be 0-fee"), ``bad-txns-too-many-sigops``, ``min relay fee not met`` against
   the sigop-adjusted virtual size, or Elements' discounted one (``policy/discount.h``) with
   ``acceptdiscountct``.

``acceptnonstdtxn`` switches off what Elements gates on ``require_standard``; the sigop limit,
the issuance range (its own option) and ``tx-size-small`` stay, as in Elements. A transaction
returned to the mempool by a reorganisation skips the relay fee (Core's ``bypass_limits``).
Every reason is a policy reason (``POLICY_REASONS``): the transaction may be valid in a block.
The checks read the parsed model (weights from the kept bytes), never reserialize.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctplugin.elements import Transaction, TxOut
from ctplugin.elements.consensus import MAX_MONEY, WITNESS_SCALE_FACTOR
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import ValidationError
from ctplugin.script.sighash import SpentOutput
from ctplugin.script.sigops import MAX_STANDARD_TX_SIGOPS_COST, sigop_count
from ctplugin.script.standard import (
    TxoutType,
    is_pay_to_anchor,
    is_pay_to_script_hash,
    is_push_only,
    is_witness_program,
    push_stack,
    solve,
)
from validator import reasons

# --- Elements' constants (src/policy/policy.h) -------------------------------------------------

TX_MAX_STANDARD_VERSION = 3
MAX_STANDARD_TX_WEIGHT = 400_000
MIN_STANDARD_TX_NONWITNESS_SIZE = 65
MAX_STANDARD_SCRIPTSIG_SIZE = 1650
MAX_P2SH_SIGOPS = 15
MAX_STANDARD_P2WSH_STACK_ITEMS = 100
MAX_STANDARD_P2WSH_STACK_ITEM_SIZE = 80
MAX_STANDARD_TAPSCRIPT_STACK_ITEM_SIZE = 80
MAX_STANDARD_P2WSH_SCRIPT_SIZE = 3600
MAX_DUST_OUTPUTS_PER_TX = 1
MAX_OP_RETURN_RELAY = 83
DEFAULT_MIN_RELAY_TX_FEE = 100  # sat/kvB
DUST_RELAY_TX_FEE = 100  # sat/kvB: Elements' (Bitcoin Core's is 3000)
DEFAULT_BYTES_PER_SIGOP = 20
ANNEX_TAG = 0x50
TAPROOT_LEAF_MASK = 0xFE
TAPROOT_LEAF_TAPSCRIPT = 0xC4  # Elements' tapscript leaf version (Bitcoin's is 0xc0)
# what spending an output costs at least, for the dust threshold (GetDustThreshold): outpoint,
# scriptSig length, sequence, and a P2WPKH-sized signature (107 bytes, ÷4 for witness programs)
_SPEND_SIZE_WITNESS = 32 + 4 + 1 + 107 // WITNESS_SCALE_FACTOR + 4
_SPEND_SIZE_LEGACY = 32 + 4 + 1 + 107 + 4

DUST_WITH_FEE = "tx with dust output must be 0-fee"
UNLIMITED_ISSUANCE = ("Issuance is greater than 21 million and acceptunlimitedissuances is not "
                      "enabled.")

POLICY_REASONS: frozenset[str] = frozenset({
    reasons.VERSION, reasons.TX_SIZE, reasons.SCRIPTSIG_SIZE, reasons.SCRIPTSIG_NOT_PUSHONLY,
    reasons.SCRIPTPUBKEY, reasons.BARE_MULTISIG, reasons.DUST, reasons.MULTI_OP_RETURN,
    reasons.ISSUANCE_OUT_OF_RANGE, reasons.TX_SIZE_SMALL,
    reasons.BAD_TXIN_EXTRA_ISSUANCE_RANGEPROOF, reasons.BAD_TXIN_EXTRA_INFLATION_RANGEPROOF,
    reasons.BAD_TXNS_NONSTANDARD_INPUTS, reasons.BAD_WITNESS_NONSTANDARD,
    reasons.BAD_TXNS_TOO_MANY_SIGOPS, reasons.MIN_RELAY_FEE_NOT_MET,
})
"""The reasons of this module: a refusal by policy, not a consensus verdict (as Elements'
TX_NOT_STANDARD / TX_INPUTS_NOT_STANDARD / TX_WITNESS_MUTATED / TX_MEMPOOL_POLICY results).
The script stage's ``non-mandatory-script-verify-flag (...)`` is the other policy reason."""


@dataclass(frozen=True, slots=True)
class PolicySettings:
    """elementsd's relay options, with their defaults on a custom chain (elementsregtest).

    Fee rates are satoshis per 1000 virtual bytes (the options take BTC/kvB).

    - ``acceptnonstdtxn``: accept non-standard transactions (``-acceptnonstdtxn``, default 0);
    - ``minrelaytxfee``: the lowest fee rate relayed (``-minrelaytxfee``, 100);
    - ``dustrelayfee``: the rate that defines dust (``-dustrelayfee``, 100);
    - ``datacarrier`` / ``datacarriersize``: OP_RETURN outputs relayed at all, and their
      largest scriptPubKey (``-datacarrier`` 1, ``-datacarriersize`` 83);
    - ``permitbaremultisig``: bare multisig outputs are standard (``-permitbaremultisig``, 1);
    - ``multi_data_permitted``: more than one OP_RETURN output (``-multi_data_permitted``,
      default ``-enforce_pak``, 0);
    - ``acceptunlimitedissuances``: explicit issuances above 21 million
      (``-acceptunlimitedissuances``, 0 on custom chains);
    - ``acceptdiscountct``: the relay fee is judged on the discounted CT size
      (``-acceptdiscountct``, 0; ``-creatediscountct`` implies it);
    - ``anyonecanspendaremine``: ``OP_TRUE`` outputs are standard and spendable
      (``-anyonecanspendaremine``, 1 on custom chains);
    - ``bytespersigop``: virtual bytes each sigop counts at least (``-bytespersigop``, 20).
    """

    acceptnonstdtxn: bool = False
    minrelaytxfee: int = DEFAULT_MIN_RELAY_TX_FEE
    dustrelayfee: int = DUST_RELAY_TX_FEE
    datacarrier: bool = True
    datacarriersize: int = MAX_OP_RETURN_RELAY
    permitbaremultisig: bool = True
    multi_data_permitted: bool = False
    acceptunlimitedissuances: bool = False
    acceptdiscountct: bool = False
    anyonecanspendaremine: bool = True
    bytespersigop: int = DEFAULT_BYTES_PER_SIGOP

    @property
    def require_standard(self) -> bool:
        return not self.acceptnonstdtxn


# --- fee rates and sizes -----------------------------------------------------------------------

def fee_at_rate(rate: int, vsize: int) -> int:
    """CFeeRate::GetFee: ``rate`` (sat/kvB) for ``vsize`` virtual bytes, rounded up (at least
    1 satoshi for a positive rate and size)."""
    fee = -(-rate * vsize // 1000)
    if fee == 0 and vsize and rate > 0:
        return 1
    return fee


def virtual_size(weight: int, sigop_cost: int, bytes_per_sigop: int) -> int:
    """GetVirtualTransactionSize: the weight, or the sigop cost × bytes per sigop when larger,
    in virtual bytes (rounded up)."""
    return (max(weight, sigop_cost * bytes_per_sigop) + WITNESS_SCALE_FACTOR - 1) \
        // WITNESS_SCALE_FACTOR


def relay_vsize(tx: Transaction, sigop_cost: int, settings: PolicySettings) -> int:
    """The size the relay fee is judged on (PreChecks): the discounted CT virtual size with
    ``acceptdiscountct`` (no sigop term there, as in Elements), else the sigop-adjusted one."""
    if settings.acceptdiscountct:
        return tx.discount_vsize
    return virtual_size(tx.weight, sigop_cost, settings.bytespersigop)


def output_size(out: TxOut) -> int:
    """The output's serialized size without its witness (``GetSerializeSize(txout)``): asset,
    value, nonce and the scriptPubKey with its length, computed without serializing."""
    script = len(out.script_pubkey)
    prefix = 1 if script < 0xFD else 3 if script <= 0xFFFF else 5
    return (33 + (9 if isinstance(out.value, int) else 33) + (33 if out.nonce else 1)
            + prefix + script)


def dust_threshold(out: TxOut, dustrelayfee: int) -> int:
    """GetDustThreshold: what spending ``out`` would cost at ``dustrelayfee`` — its size plus
    the smallest input spending it (67 bytes for a witness program, 148 otherwise); 0 for an
    unspendable script."""
    script = out.script_pubkey
    if is_unspendable(script):
        return 0
    spend = _SPEND_SIZE_WITNESS if is_witness_program(script) else _SPEND_SIZE_LEGACY
    return fee_at_rate(dustrelayfee, output_size(out) + spend)


def is_dust(out: TxOut, dustrelayfee: int, policy_asset: bytes) -> bool:
    """GetDust's test of one output: only an explicit value of the explicit policy asset can be
    dust (a blinded output or another asset never is, nor a fee output)."""
    value = out.value
    return (isinstance(value, int) and out.asset == policy_asset and bool(out.script_pubkey)
            and value < dust_threshold(out, dustrelayfee))


def dust_outputs(tx: Transaction, dustrelayfee: int, policy_asset: bytes) -> list[int]:
    """GetDust: the indexes of the dust outputs."""
    return [j for j, out in enumerate(tx.outputs) if is_dust(out, dustrelayfee, policy_asset)]


# --- 1. the transaction alone ------------------------------------------------------------------

def _refuse(reason: str, *, input_index: int | None = None, output_index: int | None = None,
            detail: str = "") -> ValidationError:
    return ValidationError(reason, input_index=input_index, output_index=output_index,
                           detail=detail)


def _standard_output(script: bytes, settings: PolicySettings) -> TxoutType | None:
    """IsStandard: the output's template, or None where it is not standard."""
    kind, solutions = solve(script, settings.anyonecanspendaremine)
    if kind is TxoutType.NONSTANDARD:
        return None
    if kind is TxoutType.MULTISIG:
        m, n = solutions[0][0], solutions[-1][0]
        if not 1 <= n <= 3 or not 1 <= m <= n:  # up to x-of-3 bare multisig
            return None
    elif kind is TxoutType.NULL_DATA and (
            not settings.datacarrier or len(script) > settings.datacarriersize):
        return None
    return kind


def check_transaction(tx: Transaction, settings: PolicySettings, policy_asset: bytes) -> None:
    """The context-free policy checks, in Elements' order (see the module docstring)."""
    if settings.require_standard:
        check_standard(tx, settings, policy_asset)
    if not settings.acceptunlimitedissuances:
        for i, txin in enumerate(tx.inputs):
            issuance = txin.issuance
            if issuance is None:
                continue
            amount, keys = issuance.amount, issuance.inflation_keys
            if ((isinstance(amount, int) and not 0 <= amount <= MAX_MONEY)
                    or (isinstance(keys, int) and not 0 <= keys <= MAX_MONEY)):
                raise _refuse(reasons.ISSUANCE_OUT_OF_RANGE, input_index=i,
                              detail=UNLIMITED_ISSUANCE)
    if tx.base_size < MIN_STANDARD_TX_NONWITNESS_SIZE:
        raise _refuse(reasons.TX_SIZE_SMALL)


def check_standard(tx: Transaction, settings: PolicySettings, policy_asset: bytes) -> None:
    """IsStandardTx."""
    if not 1 <= tx.version <= TX_MAX_STANDARD_VERSION:
        raise _refuse(reasons.VERSION)
    if tx.weight > MAX_STANDARD_TX_WEIGHT:
        raise _refuse(reasons.TX_SIZE)
    for i, txin in enumerate(tx.inputs):
        if len(txin.script_sig) > MAX_STANDARD_SCRIPTSIG_SIZE:
            raise _refuse(reasons.SCRIPTSIG_SIZE, input_index=i)
        if not is_push_only(txin.script_sig):
            raise _refuse(reasons.SCRIPTSIG_NOT_PUSHONLY, input_index=i)
    n_data = 0
    for j, out in enumerate(tx.outputs):
        kind = _standard_output(out.script_pubkey, settings)
        if kind is None:
            raise _refuse(reasons.SCRIPTPUBKEY, output_index=j)
        if kind is TxoutType.NULL_DATA:
            n_data += 1
        elif kind is TxoutType.MULTISIG and not settings.permitbaremultisig:
            raise _refuse(reasons.BARE_MULTISIG, output_index=j)
    if len(dust_outputs(tx, settings.dustrelayfee, policy_asset)) > MAX_DUST_OUTPUTS_PER_TX:
        raise _refuse(reasons.DUST)
    if n_data > 1 and not settings.multi_data_permitted:
        raise _refuse(reasons.MULTI_OP_RETURN)


# --- 2. with the spent outputs -----------------------------------------------------------------

def check_inputs(tx: Transaction, spent: Sequence[SpentOutput], settings: PolicySettings
                 ) -> None:
    """The input policy checks after the consensus ones (none with ``acceptnonstdtxn``)."""
    if not settings.require_standard:
        return
    for i, txin in enumerate(tx.inputs):
        issuance = txin.issuance
        amount = None if issuance is None else issuance.amount
        keys = None if issuance is None else issuance.inflation_keys
        # a proof belongs only to a blinded (committed) amount; an explicit or null one has none
        if txin.issuance_amount_rangeproof and not isinstance(amount, bytes):
            raise _refuse(reasons.BAD_TXIN_EXTRA_ISSUANCE_RANGEPROOF, input_index=i)
        if txin.inflation_keys_rangeproof and not isinstance(keys, bytes):
            raise _refuse(reasons.BAD_TXIN_EXTRA_INFLATION_RANGEPROOF, input_index=i)
    for i, (txin, prev) in enumerate(zip(tx.inputs, spent)):
        if not _input_standard(txin.script_sig, prev.script_pubkey, settings):
            raise _refuse(reasons.BAD_TXNS_NONSTANDARD_INPUTS, input_index=i)
    for i, (txin, prev) in enumerate(zip(tx.inputs, spent)):
        if txin.script_witness and not _witness_standard(txin.script_sig, txin.script_witness,
                                                         prev.script_pubkey):
            raise _refuse(reasons.BAD_WITNESS_NONSTANDARD, input_index=i)


def _input_standard(script_sig: bytes, prev_script: bytes, settings: PolicySettings) -> bool:
    """AreInputsStandard for one input: the spent template is known (not a non-standard or
    unknown-witness script) and a P2SH redeem script has at most 15 sigops."""
    kind = solve(prev_script, settings.anyonecanspendaremine).type
    if kind is TxoutType.NONSTANDARD or kind is TxoutType.WITNESS_UNKNOWN:
        return False
    if kind is TxoutType.SCRIPTHASH:
        stack = push_stack(script_sig)
        if not stack or sigop_count(stack[-1], accurate=True) > MAX_P2SH_SIGOPS:
            return False
    return True


def _witness_standard(script_sig: bytes, witness: tuple[bytes, ...], prev_script: bytes
                      ) -> bool:
    """IsWitnessStandard for one input with a witness: no witness on a pay-to-anchor or
    non-witness spend, P2WSH within its script, item-count and item-size limits, taproot with
    no annex and tapscript items of at most 80 bytes."""
    if is_pay_to_anchor(prev_script):
        return False
    p2sh = is_pay_to_script_hash(prev_script)
    if p2sh:
        stack = push_stack(script_sig)
        if not stack:
            return False
        prev_script = stack[-1]
    if not is_witness_program(prev_script):
        return False
    version, program_size = prev_script[0], len(prev_script) - 2
    if version == 0 and program_size == 32:
        if len(witness[-1]) > MAX_STANDARD_P2WSH_SCRIPT_SIZE:
            return False
        if len(witness) - 1 > MAX_STANDARD_P2WSH_STACK_ITEMS:
            return False
        return all(len(item) <= MAX_STANDARD_P2WSH_STACK_ITEM_SIZE for item in witness[:-1])
    if version == 0x51 and program_size == 32 and not p2sh:
        if len(witness) >= 2 and witness[-1] and witness[-1][0] == ANNEX_TAG:
            return False  # annexes stay non-standard until they mean something
        if len(witness) >= 2:
            control = witness[-1]
            if not control:
                return False
            if control[0] & TAPROOT_LEAF_MASK == TAPROOT_LEAF_TAPSCRIPT:
                return all(len(item) <= MAX_STANDARD_TAPSCRIPT_STACK_ITEM_SIZE
                           for item in witness[:-2])
    return True


# --- 3. with the fee ---------------------------------------------------------------------------

def check_fees(tx: Transaction, fee: int, sigop_cost: int, settings: PolicySettings,
               policy_asset: bytes, bypass_limits: bool = False) -> None:
    """The fee-related checks: ``fee`` is the transaction's explicit fee in the policy asset
    (fee outputs in other assets pay nothing)."""
    if settings.require_standard and fee and dust_outputs(tx, settings.dustrelayfee,
                                                          policy_asset):
        raise _refuse(reasons.DUST, detail=DUST_WITH_FEE)
    if sigop_cost > MAX_STANDARD_TX_SIGOPS_COST:
        raise _refuse(reasons.BAD_TXNS_TOO_MANY_SIGOPS, detail=str(sigop_cost))
    if bypass_limits:
        return
    needed = fee_at_rate(settings.minrelaytxfee, relay_vsize(tx, sigop_cost, settings))
    if fee < needed:
        raise _refuse(reasons.MIN_RELAY_FEE_NOT_MET, detail=f"{fee} < {needed}")
