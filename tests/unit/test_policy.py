"""Elements' mempool policy (validator.policy, docs/elements-regtest.md §8) and the Solver it
classifies scripts with (ctplugin.script.standard): every rule accepted and refused with Elements'
reason, the dust threshold and the discounted virtual size against direct computations, the
``acceptnonstdtxn`` switch, and the mempool's order (policy refuses what consensus accepts)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.elements import AssetIssuance, Transaction, TxIn, TxOut
from ctplugin.elements.consensus import MAX_MONEY
from ctplugin.errors import ValidationError
from ctplugin.script.standard import TxoutType, is_push_only, push_stack, solve
from regtest.builder import make_block
from regtest.params import CTREGTEST, GENESIS_TIME, POLICY_ASSET, regtest_key, select_chain
from tests.conftest import connect_block, signed_by_regtest_key
from validator import POLICY_REASONS, Node, PolicySettings, reasons
from validator import policy as pol

DEFAULTS = PolicySettings()
OTHER_ASSET = bytes(range(32))
KEY33 = b"\x02" + b"\x11" * 32
KEY65 = b"\x04" + b"\x22" * 64
P2WPKH = b"\x00\x14" + b"\x33" * 20
P2WSH = b"\x00\x20" + b"\x44" * 32
P2TR = b"\x51\x20" + b"\x55" * 32
P2SH = b"\xa9\x14" + b"\x66" * 20 + b"\x87"
P2PKH = b"\x76\xa9\x14" + b"\x77" * 20 + b"\x88\xac"
COMMITMENT = b"\x08" + b"\x01" * 32
GENERATOR = b"\x0a" + b"\x01" * 32
NONCE = b"\x02" + b"\x01" * 32


def multisig(m: int, keys: list[bytes]) -> bytes:
    return (bytes((0x50 + m,)) + b"".join(bytes((len(k),)) + k for k in keys)
            + bytes((0x50 + len(keys), 0xAE)))


def op_return(data_size: int) -> bytes:
    """An OP_RETURN scriptPubKey of 1 + 1 + data_size bytes (data_size ≤ 75)."""
    return b"\x6a" + bytes((data_size,)) + b"\x99" * data_size


def txin(**changes: object) -> TxIn:
    base = TxIn(prevout_hash=b"\xaa" * 32, prevout_index=0,
                script_witness=(b"\x30" * 72, KEY33))
    return replace(base, **changes)  # type: ignore[arg-type]


def paying(*outs: TxOut, fee: int = 1000, version: int = 2, inputs: tuple[TxIn, ...] = ()
           ) -> Transaction:
    return Transaction(version=version, inputs=inputs or (txin(),),
                       outputs=(*outs, TxOut(asset=POLICY_ASSET, value=fee)))


def out(script: bytes = P2WPKH, value: int = 100_000, asset: bytes = POLICY_ASSET) -> TxOut:
    return TxOut(asset=asset, value=value, script_pubkey=script)


def refusal(fn: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(ValidationError) as err:
        fn(*args, **kwargs)  # type: ignore[operator]
    assert err.value.reason in POLICY_REASONS
    return str(err.value.reason)


def standard(tx: Transaction, settings: PolicySettings = DEFAULTS) -> None:
    pol.check_transaction(tx, settings, POLICY_ASSET)


# --- the Solver ------------------------------------------------------------------------------

@pytest.mark.parametrize(("script", "kind"), [
    (b"", TxoutType.FEE),
    (P2SH, TxoutType.SCRIPTHASH),
    (P2WPKH, TxoutType.WITNESS_V0_KEYHASH),
    (P2WSH, TxoutType.WITNESS_V0_SCRIPTHASH),
    (P2TR, TxoutType.WITNESS_V1_TAPROOT),
    (b"\x51\x02\x4e\x73", TxoutType.ANCHOR),
    (b"\x52\x02\xab\xcd", TxoutType.WITNESS_UNKNOWN),
    (b"\x00\x10" + b"\x01" * 16, TxoutType.NONSTANDARD),  # v0 of neither 20 nor 32 bytes
    (b"\x6a", TxoutType.NULL_DATA),
    (b"\x6a\x04abcd\x51\x50", TxoutType.NULL_DATA),  # OP_RESERVED counts as a push, as in Elements
    (b"\x6a\x76", TxoutType.NONSTANDARD),  # OP_RETURN then a non-push
    (b"\x6a\x05ab", TxoutType.NONSTANDARD),  # truncated push
    (b"\x21" + KEY33 + b"\xac", TxoutType.PUBKEY),
    (b"\x41" + KEY65 + b"\xac", TxoutType.PUBKEY),
    (b"\x21" + b"\x05" + b"\x11" * 32 + b"\xac", TxoutType.NONSTANDARD),  # not a key prefix
    (P2PKH, TxoutType.PUBKEYHASH),
    (multisig(1, [KEY33]), TxoutType.MULTISIG),
    (multisig(2, [KEY33, KEY65, KEY33]), TxoutType.MULTISIG),
    (multisig(3, [KEY33, KEY33]), TxoutType.NONSTANDARD),  # m > n
    (b"\x01\x02" + b"\x21" + KEY33 + b"\x52\xae", TxoutType.NONSTANDARD),  # non-minimal m
    (b"\x51", TxoutType.NONSTANDARD),  # OP_TRUE without anyonecanspendaremine
    (b"\x76\xa9\x88\xac", TxoutType.NONSTANDARD),
])
def test_solver_types(script: bytes, kind: TxoutType) -> None:
    assert solve(script).type is kind


def test_solver_solutions_and_op_true() -> None:
    assert solve(P2PKH).solutions == (b"\x77" * 20,)
    assert solve(P2SH).solutions == (b"\x66" * 20,)
    assert solve(multisig(2, [KEY33, KEY65])).solutions == (b"\x02", KEY33, KEY65, b"\x02")
    assert solve(b"\x52\x02\xab\xcd").solutions == (b"\x02", b"\xab\xcd")
    assert solve(b"\x51", anyonecanspend_aremine=True).type is TxoutType.OP_TRUE
    assert solve(b"\x51").type.value == "nonstandard"


def test_push_only_and_push_stack() -> None:
    assert is_push_only(b"\x00\x4f\x50\x60\x02ab")
    assert not is_push_only(b"\x61") and not is_push_only(b"\x03ab")
    assert push_stack(b"\x00\x4f\x52\x02ab") == [b"", b"\x81", b"\x02", b"ab"]
    assert push_stack(b"\x50") is None  # OP_RESERVED fails when executed
    assert push_stack(b"\x4d\x09\x02" + b"\x01" * 521) is None  # a push above 520 bytes


# --- the transaction alone ---------------------------------------------------------------------

def test_a_plain_payment_is_standard() -> None:
    standard(paying(out(), out(P2PKH), out(P2SH), out(P2TR), out(P2WSH), out(op_return(10))))


@pytest.mark.parametrize("version", [0, -1, 4])
def test_version(version: int) -> None:
    assert refusal(standard, paying(out(), version=version)) == "version"
    standard(paying(out(), version=3))
    standard(paying(out(), version=1))


def test_tx_size() -> None:
    def with_witness(size: int) -> Transaction:
        return paying(out(), inputs=(txin(script_witness=(b"\x01" * size,)),))

    base = with_witness(0).weight
    fits = with_witness(pol.MAX_STANDARD_TX_WEIGHT - base - 10)
    assert fits.weight <= pol.MAX_STANDARD_TX_WEIGHT
    standard(fits)
    big = with_witness(pol.MAX_STANDARD_TX_WEIGHT - base + 10)
    assert big.weight > pol.MAX_STANDARD_TX_WEIGHT
    assert refusal(standard, big) == "tx-size"


def test_tx_size_small() -> None:
    # every Elements transaction with an output is above 65 bytes; no output shows the rule
    tiny = Transaction(version=2, inputs=(txin(),), outputs=())
    assert tiny.base_size < pol.MIN_STANDARD_TX_NONWITNESS_SIZE
    assert refusal(standard, tiny) == "tx-size-small"
    assert refusal(standard, tiny, PolicySettings(acceptnonstdtxn=True)) == "tx-size-small"


def test_scriptsig_size_and_push_only() -> None:
    push = b"\x4d" + (1647).to_bytes(2, "little") + b"\x01" * 1647  # 1650 bytes
    standard(paying(out(), inputs=(txin(script_sig=push),)))
    longer = b"\x4d" + (1648).to_bytes(2, "little") + b"\x01" * 1648
    assert refusal(standard, paying(out(), inputs=(txin(script_sig=longer),))) \
        == "scriptsig-size"
    assert refusal(standard, paying(out(), inputs=(txin(script_sig=b"\x51\x76"),))) \
        == "scriptsig-not-pushonly"


@pytest.mark.parametrize("script", [
    b"\x51\x51", b"\x00\x10" + b"\x01" * 16, multisig(1, [KEY33] * 4), b"\xac",
])
def test_nonstandard_output_scripts(script: bytes) -> None:
    assert refusal(standard, paying(out(script))) == "scriptpubkey"


def test_op_true_outputs_need_anyonecanspendaremine() -> None:
    standard(paying(out(b"\x51")))  # custom chains default to anyonecanspendaremine=1
    assert refusal(standard, paying(out(b"\x51")),
                   PolicySettings(anyonecanspendaremine=False)) == "scriptpubkey"


def test_bare_multisig() -> None:
    standard(paying(out(multisig(2, [KEY33, KEY33, KEY65]))))
    assert refusal(standard, paying(out(multisig(1, [KEY33]))),
                   PolicySettings(permitbaremultisig=False)) == "bare-multisig"


def test_datacarrier() -> None:
    at_limit = op_return(75) + b"\x4c\x06" + b"\x01" * 6  # 2 + 75 + 2 + 6 = 85 bytes
    assert len(at_limit) == 85
    assert refusal(standard, paying(out(at_limit, 0))) == "scriptpubkey"
    eighty_three = op_return(75) + b"\x05" + b"\x01" * 5  # 83 bytes: MAX_OP_RETURN_RELAY
    standard(paying(out(eighty_three, 0)))
    standard(paying(out(at_limit, 0)), PolicySettings(datacarriersize=85))
    assert refusal(standard, paying(out(op_return(1), 0)),
                   PolicySettings(datacarrier=False)) == "scriptpubkey"


def test_multi_op_return() -> None:
    two = paying(out(op_return(4), 0), out(op_return(4), 0))
    assert refusal(standard, two) == "multi-op-return"
    standard(two, PolicySettings(multi_data_permitted=True))


def test_issuance_out_of_range() -> None:
    def issuing(amount: int, keys: int | None = None) -> Transaction:
        issuance = AssetIssuance(bytes(32), bytes(32), amount, keys)
        return paying(out(), inputs=(txin(issuance=issuance),))

    standard(issuing(MAX_MONEY, MAX_MONEY))
    for tx in (issuing(MAX_MONEY + 1), issuing(1, MAX_MONEY + 1)):
        with pytest.raises(ValidationError) as err:
            standard(tx)
        assert (err.value.reason, err.value.input_index) == ("issuance-out-of-range", 0)
        assert "acceptunlimitedissuances is not enabled" in str(err.value)
        standard(tx, PolicySettings(acceptunlimitedissuances=True))
    # its own option, not standardness: -acceptnonstdtxn does not lift it
    assert refusal(standard, issuing(MAX_MONEY + 1), PolicySettings(acceptnonstdtxn=True)) \
        == "issuance-out-of-range"


# --- dust ------------------------------------------------------------------------------------

def test_dust_counts_only_explicit_policy_asset_outputs() -> None:
    threshold = pol.dust_threshold(out(P2WPKH, 1), DEFAULTS.dustrelayfee)
    assert threshold == 14  # (33 + 9 + 1 + 23 + 67) bytes at 100 sat/kvB, rounded up
    dust = out(P2WPKH, threshold - 1)
    assert refusal(standard, paying(dust, dust)) == "dust"  # more than one
    standard(paying(dust, out(P2WPKH, threshold)))
    blinded = TxOut(asset=GENERATOR, value=COMMITMENT, nonce=NONCE, script_pubkey=P2WPKH)
    standard(paying(dust, out(P2WPKH, 1, OTHER_ASSET), blinded, out(op_return(2), 0)))
    one = paying(dust)
    assert refusal(pol.check_fees, one, 1000, 0, DEFAULTS, POLICY_ASSET) == "dust"
    with pytest.raises(ValidationError, match="tx with dust output must be 0-fee"):
        pol.check_fees(one, 1000, 0, DEFAULTS, POLICY_ASSET)
    zero_fee = PolicySettings(minrelaytxfee=0)
    pol.check_fees(one, 0, 0, zero_fee, POLICY_ASSET)  # one dust output, no fee: ephemeral


def test_wallet_dust_example_of_the_note() -> None:
    # an explicit value with the 33-byte blinding key in the nonce: 98 bytes + 67 (§8)
    staged = TxOut(asset=POLICY_ASSET, value=1, nonce=NONCE, script_pubkey=P2WPKH)
    assert pol.output_size(staged) == 98
    assert pol.dust_threshold(staged, 3000) == 495
    assert pol.dust_threshold(staged, 100) == 17


SCRIPTS = st.sampled_from([P2WPKH, P2WSH, P2TR, P2PKH, P2SH, multisig(1, [KEY33]),
                           b"\x21" + KEY33 + b"\xac", op_return(8), b"\x51", b"\x52\x02ab"])


@settings(max_examples=200, deadline=None)
@given(script=SCRIPTS, value=st.integers(0, 10_000), rate=st.integers(0, 100_000),
       nonce=st.booleans())
def test_dust_threshold_is_the_spend_cost(script: bytes, value: int, rate: int,
                                          nonce: bool) -> None:
    output = TxOut(asset=POLICY_ASSET, value=value, nonce=NONCE if nonce else b"",
                   script_pubkey=script)
    size = len(output.serialize())
    assert pol.output_size(output) == size
    if script[0] == 0x6A:
        expected = 0
    else:
        witness = 4 <= len(script) <= 42 and script[1] + 2 == len(script)
        size += 32 + 4 + 1 + (26 if witness else 107) + 4
        expected = -(-rate * size // 1000) if rate else 0
    assert pol.dust_threshold(output, rate) == expected
    assert pol.is_dust(output, rate, POLICY_ASSET) == (value < expected)
    assert not pol.is_dust(replace(output, asset=OTHER_ASSET), rate, POLICY_ASSET)


# --- fees and the discounted size ----------------------------------------------------------

def test_min_relay_fee() -> None:
    tx = paying(out())
    needed = pol.fee_at_rate(DEFAULTS.minrelaytxfee, tx.vsize)
    pol.check_fees(tx, needed, 0, DEFAULTS, POLICY_ASSET)
    with pytest.raises(ValidationError) as err:
        pol.check_fees(tx, needed - 1, 0, DEFAULTS, POLICY_ASSET)
    assert err.value.reason == "min relay fee not met"
    assert err.value.detail == f"{needed - 1} < {needed}"
    pol.check_fees(tx, 0, 0, DEFAULTS, POLICY_ASSET, bypass_limits=True)  # a reorg's
    # sigops count at least 20 virtual bytes each (GetVirtualTransactionSize)
    assert pol.relay_vsize(tx, 1000, DEFAULTS) == 1000 * 20 // 4
    assert refusal(pol.check_fees, tx, 10**8, 16_001, DEFAULTS, POLICY_ASSET) \
        == "bad-txns-too-many-sigops"


def test_fee_at_rate_rounds_up() -> None:
    assert pol.fee_at_rate(100, 1) == 1
    assert pol.fee_at_rate(1000, 250) == 250
    assert pol.fee_at_rate(1001, 1000) == 1001
    assert pol.fee_at_rate(100, 1001) == 101
    assert pol.fee_at_rate(0, 1000) == 0


def direct_discount_vsize(tx: Transaction) -> int:
    """policy/discount.h, from the serialized bytes."""
    weight = len(tx.serialize_without_witness()) * 3 + len(tx.serialize())
    for output in tx.outputs:
        if tx.has_witness:
            weight -= len(output.serialize_witness()) - 2
        if isinstance(output.value, bytes):
            weight -= 24 * 4
        if output.nonce and output.nonce[0] in (2, 3):
            weight -= 32 * 4
    return (weight + 3) // 4


@settings(max_examples=100, deadline=None)
@given(outputs=st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 3000),
                                  st.integers(0, 200)), min_size=1, max_size=5),
       witness=st.booleans())
def test_discounted_vsize_matches_elements(outputs: list[tuple[bool, bool, int, int]],
                                           witness: bool) -> None:
    outs = tuple(TxOut(asset=GENERATOR if blind else POLICY_ASSET,
                       value=COMMITMENT if blind else 5000, nonce=NONCE if nonce else b"",
                       script_pubkey=P2WPKH, range_proof=b"\x01" * rp if blind else b"",
                       surjection_proof=b"\x02" * sp if blind else b"")
                 for blind, nonce, rp, sp in outputs)
    tx = Transaction(version=2, inputs=(txin(script_witness=(b"\x01",) if witness else ()),),
                     outputs=(*outs, TxOut(asset=POLICY_ASSET, value=500)))
    expected = direct_discount_vsize(tx)
    assert tx.discount_vsize == expected
    discount = PolicySettings(acceptdiscountct=True)
    assert pol.relay_vsize(tx, 0, discount) == expected
    assert pol.relay_vsize(tx, 0, DEFAULTS) == tx.vsize
    needed = pol.fee_at_rate(discount.minrelaytxfee, expected)
    pol.check_fees(tx, needed, 0, discount, POLICY_ASSET)
    if needed:
        with pytest.raises(ValidationError, match="min relay fee not met"):
            pol.check_fees(tx, needed - 1, 0, discount, POLICY_ASSET)


# --- with the spent outputs ----------------------------------------------------------------

def spends(prev: bytes, **changes: object) -> tuple[Transaction, list[TxOut]]:
    tx = paying(out(), inputs=(txin(**changes),))
    return tx, [out(prev)]


def test_extra_issuance_and_inflation_rangeproofs() -> None:
    proof = b"\x01" * 40
    cases = [
        (dict(issuance_amount_rangeproof=proof), "bad-txin-extra-issuance-rangeproof"),
        (dict(inflation_keys_rangeproof=proof), "bad-txin-extra-inflation-rangeproof"),
        (dict(issuance=AssetIssuance(bytes(32), bytes(32), 5, None),
              issuance_amount_rangeproof=proof), "bad-txin-extra-issuance-rangeproof"),
        (dict(issuance=AssetIssuance(bytes(32), bytes(32), COMMITMENT, 5),
              issuance_amount_rangeproof=proof, inflation_keys_rangeproof=proof),
         "bad-txin-extra-inflation-rangeproof"),
    ]
    for changes, reason in cases:
        tx, spent = spends(P2WPKH, **changes)
        assert refusal(pol.check_inputs, tx, spent, DEFAULTS) == reason
        pol.check_inputs(tx, spent, PolicySettings(acceptnonstdtxn=True))
    blinded = AssetIssuance(bytes(32), bytes(32), COMMITMENT, COMMITMENT)
    tx, spent = spends(P2WPKH, issuance=blinded, issuance_amount_rangeproof=proof,
                       inflation_keys_rangeproof=proof)
    pol.check_inputs(tx, spent, DEFAULTS)


def test_nonstandard_inputs() -> None:
    for prev in (b"\x52\x02ab", b"\x76\x76"):  # unknown witness version, non-standard
        tx, spent = spends(prev, script_witness=())
        assert refusal(pol.check_inputs, tx, spent, DEFAULTS) == "bad-txns-nonstandard-inputs"
    tx, spent = spends(b"\x51", script_witness=())
    pol.check_inputs(tx, spent, DEFAULTS)
    assert refusal(pol.check_inputs, tx, spent, PolicySettings(anyonecanspendaremine=False)) \
        == "bad-txns-nonstandard-inputs"
    # P2SH: the redeem script (last push of the scriptSig) may hold at most 15 sigops
    for n, ok in ((15, True), (16, False)):
        redeem = b"\xac" * n
        tx, spent = spends(P2SH, script_sig=bytes((len(redeem),)) + redeem, script_witness=())
        if ok:
            pol.check_inputs(tx, spent, DEFAULTS)
        else:
            assert refusal(pol.check_inputs, tx, spent, DEFAULTS) \
                == "bad-txns-nonstandard-inputs"
    tx, spent = spends(P2SH, script_sig=b"", script_witness=())  # no redeem script at all
    assert refusal(pol.check_inputs, tx, spent, DEFAULTS) == "bad-txns-nonstandard-inputs"


def test_witness_standardness() -> None:
    def verdict(prev: bytes, witness: tuple[bytes, ...], script_sig: bytes = b"") -> bool:
        tx, spent = spends(prev, script_witness=witness, script_sig=script_sig)
        try:
            pol.check_inputs(tx, spent, DEFAULTS)
        except ValidationError as exc:
            assert exc.reason == "bad-witness-nonstandard"
            return False
        return True

    assert verdict(P2WSH, (b"\x01" * 80, b"\x51" * 3600))
    assert not verdict(P2WSH, (b"\x51" * 3601,))  # witness script too long
    assert not verdict(P2WSH, (b"\x01" * 81, b"\x51"))  # item too long
    assert verdict(P2WSH, (b"",) * 100 + (b"\x51",))
    assert not verdict(P2WSH, (b"",) * 101 + (b"\x51",))  # too many items
    assert not verdict(P2PKH, (b"\x01",))  # a witness on a non-witness spend
    assert not verdict(b"\x51\x02\x4e\x73", (b"\x01",))  # witness stuffing on an anchor
    wrapped = b"\x00\x20" + b"\x44" * 32
    assert not verdict(P2SH, (b"\x01" * 81, b"\x51"), script_sig=b"\x22" + wrapped)
    assert verdict(P2TR, (b"\x01" * 64,))  # key path
    assert not verdict(P2TR, (b"\x01" * 64, b"\x50annex"))  # annex
    control = b"\xc4" + b"\x01" * 32
    assert verdict(P2TR, (b"\x01" * 80, b"\x51", control))
    assert not verdict(P2TR, (b"\x01" * 81, b"\x51", control))  # tapscript item too long
    assert verdict(P2TR, (b"\x01" * 81, b"\x51", b"\xc2" + b"\x01" * 32))  # other leaf version
    assert not verdict(P2TR, (b"\x01", b"\x51", b""))  # empty control block


# --- acceptnonstdtxn ------------------------------------------------------------------------

def test_acceptnonstdtxn_switches_standardness_off() -> None:
    anything = PolicySettings(acceptnonstdtxn=True)
    weird = paying(out(b"\x76\x76"), out(op_return(4), 0), out(op_return(4), 0), version=7,
                   inputs=(txin(script_sig=b"\x76"),))
    assert refusal(standard, weird) == "version"
    standard(weird, anything)
    dust = paying(out(P2WPKH, 1))
    pol.check_fees(dust, 1000, 0, anything, POLICY_ASSET)  # dust with a fee
    with pytest.raises(ValidationError, match="min relay fee not met"):  # not switched off
        pol.check_fees(dust, 0, 0, anything, POLICY_ASSET)


# --- in the mempool: policy, not consensus ----------------------------------------------------

def test_extra_issuance_rangeproof_refused_by_the_mempool_valid_in_a_block(node: Node) -> None:
    genesis = select_chain(CTREGTEST).genesis
    coin = genesis.transactions[0]
    total = coin.outputs[0].value
    assert isinstance(total, int)
    unsigned = Transaction(version=2, inputs=(TxIn(
        prevout_hash=coin.txid, prevout_index=0, issuance_amount_rangeproof=b"\x01" * 40),),
        outputs=(TxOut(asset=POLICY_ASSET, value=total - 10_000,
                       script_pubkey=regtest_key().script_pubkey),
                 TxOut(asset=POLICY_ASSET, value=10_000)))
    tx = signed_by_regtest_key(unsigned)
    with pytest.raises(ValidationError) as err:
        node.test_accept_transaction(tx.serialize())
    assert (err.value.reason, err.value.input_index) == (
        reasons.BAD_TXIN_EXTRA_ISSUANCE_RANGEPROOF, 0)
    assert len(node.mempool) == 0
    block = make_block(genesis.hash, 1, GENESIS_TIME + 60, [tx], b"\x51")
    connect_block(node, block.serialize())  # consensus has no such rule
    assert node.tip.height == 1
