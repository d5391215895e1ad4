"""The ``elementsregtest`` chain profile (regtest.elements; docs/elements-regtest.md §1.1, §3):
built from elementsd's chain options with Elements' defaults, bad options refused by name, and
its consensus rules on a node — subsidy with halving, genesis outputs connected or not, the
mandatory coinbase script, block versions and header proofs, Borromean proofs only — and a
chain file of it built, replayed and audited to one UTXO set hash."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from apps import audit as audit_cli
from apps import chain as chain_cli
from apps import replay as replay_cli
from ctplugin import borromean
from ctplugin.elements import Block, Transaction, TxOut, parse_block
from ctplugin.elements.chainparams import (
    ELEMENTS_RANGE_PROOFS,
    ChainOptionError,
    ChainParams,
    RangeProofKind,
)
from ctplugin.elements.consensus import COIN, MAX_MONEY
from ctplugin.elements.genesis import OP_TRUE, GenesisOptions, genesis_block
from ctplugin.errors import ValidationError
from regtest.builder import ChainBuilder, build_demo_chain, genesis_claim, make_block
from regtest.elements import (
    DEFAULT_OPTIONS,
    ELEMENTS_MESSAGE_START,
    ElementsChainOptions,
    chain_from_words,
    elements_chain,
    elements_chain_options,
    option_values,
)
from regtest.params import CTREGTEST, ELEMENTSREGTEST, GENESIS_TIME, REGTEST_SEED, select_chain
from regtest.wallet import Payment, Wallet
from validator import Node, audit_utxo_set, read_chain, reasons

# The options Elements' functional framework writes into every node's elements.conf
# (test_framework/util.py write_config) and the CT tests' extras.
FRAMEWORK = {"validatepegin": "0",
             "con_parent_pegged_asset":
                 "b2e15d0d7a0c94e4e2ce0fe6e8691b9e451377f6e46e8045a86f7c4b5d4f0f23",
             "con_blocksubsidy": "5000000000", "con_connect_genesis_outputs": "0",
             "anyonecanspendaremine": "0", "con_bip34height": "1", "con_bip65height": "1",
             "con_bip66height": "1", "blindedaddresses": "0",
             "evbparams": ["dynafed:2147483648:::"]}
FREE_COINS = 2_100_000_000_000_000
CT_TEST = {"initialfreecoins": str(FREE_COINS), "con_blocksubsidy": "0",
           "con_connect_genesis_outputs": "1", "anyonecanspendaremine": "1",
           "blindedaddresses": "1"}


def display(h: bytes) -> str:
    return h[::-1].hex()


# --- the profile from options ---------------------------------------------------------------


def test_the_default_profile_is_elementsd_with_no_options() -> None:
    params = select_chain(ELEMENTSREGTEST)
    assert params is elements_chain() is elements_chain(DEFAULT_OPTIONS)
    assert elements_chain_options({}) == DEFAULT_OPTIONS == ElementsChainOptions()
    assert display(params.genesis_hash) == (
        "cd179c84c35f51825f20a3b91a18d45f0c53b5ceb744a5b6ef8f0babe809396f")
    assert display(params.policy_asset) == (
        "b2e15d0d7a0c94e4e2ce0fe6e8691b9e451377f6e46e8045a86f7c4b5d4f0f23")
    assert params.network_magic == ELEMENTS_MESSAGE_START == bytes.fromhex("5319f20e")
    assert params.range_proofs == ELEMENTS_RANGE_PROOFS == {RangeProofKind.BORROMEAN}
    assert params.wallet_range_proof is RangeProofKind.BORROMEAN
    assert (params.block_subsidy, params.subsidy_halving_interval) == (0, 150)
    assert params.connect_genesis_outputs and not params.sighash_rangeproof
    assert (params.bip34_height, params.bip65_height, params.bip66_height,
            params.csv_height) == (0, 0, 0, 1)
    assert params.block_challenge == OP_TRUE and params.max_block_sig_size == 74
    assert params.mandatory_coinbase is None and params.coinbase_maturity == 100
    assert (params.ct_bits, params.ct_exponent) == (52, 0)
    a = params.addresses
    assert (a.pubkey_prefix, a.script_prefix, a.secret_prefix, a.blinded_prefix) == (
        235, 75, 239, 4)
    assert (a.bech32_hrp, a.blech32_hrp) == ("ert", "el")
    assert DEFAULT_OPTIONS.anyonecanspendaremine and DEFAULT_OPTIONS.blinded_addresses
    assert DEFAULT_OPTIONS.default_pegged_asset_name == "bitcoin"


def test_our_ctregtest_chains_keep_their_rules() -> None:
    params = select_chain(CTREGTEST)
    assert (params.block_subsidy, params.connect_genesis_outputs, params.sighash_rangeproof,
            params.mandatory_coinbase) == (0, True, True, None)
    assert (params.bip34_height, params.bip65_height, params.bip66_height,
            params.csv_height) == (1, 1, 1, 1)
    with pytest.raises(ChainOptionError) as caught:
        select_chain(CTREGTEST, DEFAULT_OPTIONS)
    assert caught.value.option == "chain"


def test_the_frameworks_options_give_its_chain() -> None:
    options = elements_chain_options(FRAMEWORK)
    params = select_chain(ELEMENTSREGTEST, options)
    # none of these is committed to by the genesis: the framework's genesis is the default one
    assert params.genesis_hash == select_chain(ELEMENTSREGTEST).genesis_hash
    assert params.block_subsidy == 50 * COIN and not params.connect_genesis_outputs
    assert (params.bip34_height, params.bip65_height, params.bip66_height) == (1, 1, 1)
    assert not options.anyonecanspendaremine and not options.blinded_addresses
    assert options.parent_pegged_asset == params.policy_asset
    assert elements_chain(options) is params  # one value per option set


@pytest.mark.parametrize(("values", "genesis"), [
    (CT_TEST, "209577bda6bf4b5804bd46f8621580dd6d4e8bfa2d190e1c50e932492baca07d"),
    ({"initialfreecoins": "2000000000000000", "initialreissuancetokens": "200000000"},
     "71aabfc5812b3f24f1d306c0f2bc49b5f3e4481de00539c97cbd44eba1fdfa0d"),
    ({"initialfreecoins": "5000000000"},
     "53ed6fd3e654b04554d038f128d21e6bb58c9d818584181b98c500986c90db5a"),
])
def test_the_genesis_follows_from_the_options(values: dict[str, str], genesis: str) -> None:
    params = elements_chain(elements_chain_options(values))
    assert display(params.genesis_hash) == genesis
    options = elements_chain_options(values)
    assert params.genesis == genesis_block(GenesisOptions(
        "elementsregtest", initial_free_coins=options.initial_free_coins,
        initial_reissuance_tokens=options.initial_reissuance_tokens))
    assert params.policy_asset == select_chain(ELEMENTSREGTEST).policy_asset


def test_the_chain_name_and_scripts_change_the_genesis_and_the_asset() -> None:
    other = elements_chain(elements_chain_options({"chain": "othertest",
                                                   "fedpegscript": "52"}))
    default = select_chain(ELEMENTSREGTEST)
    assert other.name == "othertest"
    assert other.genesis_hash != default.genesis_hash
    assert other.policy_asset != default.policy_asset


@pytest.mark.parametrize(("values", "option"), [
    ({"chain": "liquidv1"}, "chain"),
    ({"con_blocksubsidy": "fifty"}, "con_blocksubsidy"),
    ({"con_blocksubsidy": "-1"}, "con_blocksubsidy"),
    ({"con_blocksubsidy": str(MAX_MONEY + 1)}, "con_blocksubsidy"),
    ({"con_nsubsidyhalvinginterval": "0"}, "con_nsubsidyhalvinginterval"),
    ({"initialfreecoins": "1e9"}, "initialfreecoins"),
    ({"con_bip34height": "-5"}, "con_bip34height"),
    ({"con_connect_genesis_outputs": "yes"}, "con_connect_genesis_outputs"),
    ({"fedpegscript": "5g"}, "fedpegscript"),
    ({"con_mandatorycoinbase": "0014zz"}, "con_mandatorycoinbase"),
    ({"parentgenesisblockhash": "00"}, "parentgenesisblockhash"),
    ({"parentgenesisblockhash": "f" * 65}, "parentgenesisblockhash"),
    ({"pchmessagestart": "5319f2"}, "pchmessagestart"),
    ({"evbparams": "dynafed:0:::"}, "evbparams"),
    ({"evbparams": ["dynafed:2147483648:::", "dynafed:-1:::"]}, "evbparams"),
    ({"evbparams": "dynafed:2147483648::"}, "evbparams"),
    ({"evbparams": "simplicity:0:::"}, "evbparams"),
    ({"evbparams": "segwit:0:::"}, "evbparams"),
    ({"validatepegin": "1"}, "validatepegin"),
    ({"validatepegin": ""}, "validatepegin"),
    ({"con_elementsmode": "0"}, "con_elementsmode"),
    ({"con_signed_blocks": "0"}, "con_signed_blocks"),
    ({"enforce_pak": "1"}, "enforce_pak"),
    ({"con_genesis_style": "bitcoin"}, "con_genesis_style"),
    ({"subsidyasset": "00" * 32}, "subsidyasset"),
    ({"ct_bits": "65"}, "ct_bits"),
    ({"ct_exponent": "19"}, "ct_exponent"),
    ({"pubkeyprefix": "256"}, "pubkeyprefix"),
    ({"bech32_hrp": "ERT"}, "bech32_hrp"),
    ({"extpubkeyprefix": "043587"}, "extpubkeyprefix"),
    ({"defaultpeggedassetname": ""}, "defaultpeggedassetname"),
])
def test_a_bad_option_is_a_typed_error_naming_it(values: dict[str, str | list[str]],
                                                 option: str) -> None:
    with pytest.raises(ChainOptionError) as caught:
        elements_chain_options(values)
    assert caught.value.option == option
    assert str(caught.value).startswith(f"-{option}: ")
    assert isinstance(caught.value, ValueError)


def test_a_block_challenge_we_cannot_check_is_refused() -> None:
    options = elements_chain_options({"signblockscript": "5221" + "02" * 33 + "51ae"})
    with pytest.raises(ChainOptionError) as caught:
        elements_chain(options)
    assert caught.value.option == "signblockscript"


def test_options_other_than_chain_options_are_left_alone() -> None:
    assert elements_chain_options({"rpcport": "7040", "txindex": "1",
                                   "acceptnonstdtxn": "0"}) == DEFAULT_OPTIONS


def test_command_line_words_become_option_values() -> None:
    values = option_values(["-noanyonecanspendaremine", "con_blocksubsidy=7",
                            "-evbparams=dynafed:2147483648:::", "-evbparams=testdummy:::1:1",
                            "-blindedaddresses"])
    assert values == {"anyonecanspendaremine": "0", "con_blocksubsidy": "7",
                      "evbparams": ["dynafed:2147483648:::", "testdummy:::1:1"],
                      "blindedaddresses": ""}
    options = elements_chain_options(values)
    assert not options.anyonecanspendaremine and options.blinded_addresses
    assert options.block_subsidy == 7
    assert chain_from_words(ELEMENTSREGTEST, ["con_blocksubsidy=7"]).block_subsidy == 7
    assert chain_from_words(ELEMENTSREGTEST) is select_chain(ELEMENTSREGTEST)


# --- consensus on a node ---------------------------------------------------------------------


def _chain(**values: str) -> ChainParams:
    return elements_chain(elements_chain_options(values))


OpenNode = Callable[[ChainParams], Node]


@pytest.fixture
def open_node(tmp_path: Path) -> Iterator[OpenNode]:
    nodes: list[Node] = []

    def make(params: ChainParams) -> Node:
        node = Node.open(tmp_path / f"n{len(nodes)}", params)
        nodes.append(node)
        return node

    yield make
    for node in nodes:
        node.close()


def _submit(node: Node, block: Block) -> ValidationError | None:
    result = node.submit_block(block.serialize())
    return None if result.accepted else result.error


def _next(node: Node, params: ChainParams, txs: tuple[Transaction, ...] = (), *,
          script: bytes = OP_TRUE, fees: dict[bytes, int] | None = None,
          claim: int | None = None) -> Block:
    """A block on the node's tip; ``claim``: the coinbase pays this much policy asset."""
    tip = node.tip
    block = make_block(tip.hash, tip.height + 1, GENESIS_TIME + 60 * (tip.height + 1),
                       list(txs), script, fees=fees, params=params)
    if claim is None:
        return block
    coinbase = block.transactions[0]
    outputs = (TxOut(asset=params.policy_asset, value=claim, script_pubkey=script),
               *coinbase.outputs[1:])
    txs_all = (dataclasses.replace(coinbase, outputs=outputs), *block.transactions[1:])
    unrooted = Block(header=block.header, transactions=txs_all)
    root, _ = unrooted.compute_merkle_root()
    return Block(header=dataclasses.replace(block.header, merkle_root=root),
                 transactions=txs_all)


def test_the_subsidy_halves_and_the_coinbase_may_claim_no_more(open_node: OpenNode) -> None:
    params = _chain(con_blocksubsidy=str(50 * COIN), con_nsubsidyhalvinginterval="2")
    assert [params.block_subsidy_at(h) for h in (0, 1, 2, 3, 4, 128, 130)] == [
        50 * COIN, 50 * COIN, 25 * COIN, 25 * COIN, 25 * COIN // 2, 0, 0]
    node = open_node(params)
    assert _submit(node, _next(node, params, claim=50 * COIN + 1)).reason == (
        reasons.BAD_CB_AMOUNT)
    assert _submit(node, _next(node, params)) is None  # make_block claims the subsidy
    assert node.tip.height == 1
    assert _submit(node, _next(node, params, claim=50 * COIN)).reason == reasons.BAD_CB_AMOUNT
    assert _submit(node, _next(node, params, claim=25 * COIN - 1)) is None  # less is fine
    assert node.utxo_stats().explicit_amounts == {params.policy_asset: 75 * COIN - 1}


def test_the_subsidy_is_in_the_policy_asset_only(open_node: OpenNode) -> None:
    params = _chain(con_blocksubsidy=str(COIN))
    node = open_node(params)
    block = _next(node, params)
    coinbase = block.transactions[0]
    other = TxOut(asset=bytes(range(32)), value=COIN, script_pubkey=OP_TRUE)
    txs = (dataclasses.replace(coinbase, outputs=(other, *coinbase.outputs[1:])),)
    unrooted = Block(header=block.header, transactions=txs)
    root, _ = unrooted.compute_merkle_root()
    bad = Block(header=dataclasses.replace(block.header, merkle_root=root), transactions=txs)
    assert _submit(node, bad).reason == reasons.BAD_CB_AMOUNT


@pytest.mark.parametrize("connect", [True, False])
def test_genesis_outputs_are_connected_or_not(open_node: OpenNode, connect: bool) -> None:
    params = _chain(initialfreecoins=str(FREE_COINS),
                    con_connect_genesis_outputs=str(int(connect)))
    node = open_node(params)
    stats = node.utxo_stats()
    assert (stats.txouts, stats.explicit_amounts) == (
        (1, {params.policy_asset: FREE_COINS}) if connect else (0, {}))
    issuance = params.genesis.transactions[1]
    claim = genesis_claim(dataclasses.replace(params, connect_genesis_outputs=True),
                          b"\x00\x14" + bytes(20), 1000)
    assert claim is not None and claim.inputs[0].prevout_hash == issuance.txid
    error = _submit(node, _next(node, params, (claim,), fees={params.policy_asset: 1000}))
    if connect:  # spendable at once: not a coinbase output
        assert error is None
    else:
        assert error is not None
        assert error.reason == reasons.BAD_TXNS_INPUTS_MISSINGORSPENT
        assert genesis_claim(params, OP_TRUE, 1000) is None


def test_the_mandatory_coinbase_script(open_node: OpenNode) -> None:
    pay_to = b"\x00\x14" + bytes(range(20))
    params = _chain(con_blocksubsidy=str(COIN), con_mandatorycoinbase=pay_to.hex())
    assert params.mandatory_coinbase == pay_to
    node = open_node(params)
    error = _submit(node, _next(node, params, script=OP_TRUE))
    assert error is not None and error.reason == reasons.BAD_COINBASE_TXOS
    assert _submit(node, _next(node, params, script=pay_to)) is None
    # zero-value outputs (the witness commitment) pay anything
    assert _chain(con_mandatorycoinbase="").mandatory_coinbase is None


def test_block_versions_follow_the_buried_deployments(open_node: OpenNode) -> None:
    late = _chain(con_bip34height="3", con_bip65height="3", con_bip66height="3")
    node = open_node(late)
    old = _next(node, late)
    old = Block(header=dataclasses.replace(old.header, version=1), transactions=old.transactions)
    assert _submit(node, old) is None  # height 1: nothing active yet
    node = open_node(select_chain(ELEMENTSREGTEST))
    params = select_chain(ELEMENTSREGTEST)
    for version in (1, 2, 3):
        block = _next(node, params)
        block = Block(header=dataclasses.replace(block.header, version=version),
                      transactions=block.transactions)
        error = _submit(node, block)
        assert error is not None and error.reason == reasons.BAD_VERSION
        assert error.detail == f"0x{version:08x}"
    assert _submit(node, _next(node, params)) is None


def test_the_header_repeats_the_challenge_with_an_empty_solution(open_node: OpenNode) -> None:
    params = select_chain(ELEMENTSREGTEST)
    node = open_node(params)
    block = _next(node, params)
    other = Block(header=dataclasses.replace(block.header, challenge=b"\x52"),
                  transactions=block.transactions)
    assert _submit(node, other).reason == reasons.BAD_DIFFBITS
    signed = Block(header=dataclasses.replace(block.header, solution=b"\x00"),
                   transactions=block.transactions)
    assert _submit(node, signed).reason == reasons.BLOCK_PROOF_INVALID
    assert _submit(node, block) is None


def _funded(params: ChainParams) -> tuple[ChainBuilder, Wallet]:
    alice = Wallet.for_chain(REGTEST_SEED, params)
    chain = ChainBuilder([alice], params=params)
    claim = genesis_claim(params, alice.new_address(kind="p2wpkh").script_pubkey, 1000)
    assert claim is not None
    chain.add(claim)
    chain.mine()
    return chain, alice


def test_a_bulletproof_is_invalid_on_elementsregtest(open_node: OpenNode) -> None:
    params = _chain(initialfreecoins=str(FREE_COINS))
    chain, alice = _funded(params)
    node = open_node(params)
    assert _submit(node, chain.blocks[1]) is None
    alice.range_proofs = RangeProofKind.BULLETPROOF  # a wallet of our Bulletproof chain
    tx = alice.build_transaction([Payment(COIN, alice.new_address(), asset=params.policy_asset)],
                                 fee=1000, height=2)
    assert len(tx.outputs[0].range_proof) == 675
    error = _submit(node, _next(node, params, (tx,), fees={params.policy_asset: 1000}))
    # read as Elements reads every proof: a Borromean proof, here a malformed one
    assert error is not None and error.reason == reasons.BAD_TXNS_RANGEPROOF_INVALID
    assert (error.tx_index, error.output_index) == (1, 0)
    assert node.tip.height == 1


def test_wallet_outputs_rewind_with_elements_rules() -> None:
    params = _chain(initialfreecoins=str(FREE_COINS))
    _, alice = _funded(params)
    bob = Wallet.for_chain(b"bob", params)
    address = bob.new_address()
    tx = alice.build_transaction([Payment(3 * COIN, address, asset=params.policy_asset)],
                                 fee=1000, height=2)
    out = tx.outputs[0]
    assert out.script_pubkey == address.script_pubkey and len(out.nonce) == 33
    header = borromean.info(out.range_proof)
    assert (header.exp, header.min_value, header.mantissa) == (0, 1, 52)
    owner = bob.keys.owner_of(out.script_pubkey)
    assert owner is not None
    opened = borromean.elements.unblind_output(owner.blinding_secret.to_bytes(32, "big"), out.nonce,
                                               out.range_proof, out.value, out.asset,
                                               out.script_pubkey)
    assert opened is not None  # the nonce, message layout and extra commit are Elements'
    assert (opened.value, opened.asset) == (3 * COIN, params.policy_asset)


def test_the_wallet_takes_ct_bits_and_exponent_from_the_chain() -> None:
    params = _chain(initialfreecoins=str(FREE_COINS), ct_bits="36", ct_exponent="2")
    _, alice = _funded(params)
    tx = alice.build_transaction([Payment(3 * COIN, alice.new_address(),
                                          asset=params.policy_asset)], fee=1000, height=2)
    header = borromean.info(tx.outputs[0].range_proof)
    assert (header.exp, header.mantissa) == (2, 36)


# --- chain file, replay and audit --------------------------------------------------------------


def test_a_chain_file_replays_and_audits_to_one_utxo_set_hash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    words = [f"--chain-option=initialfreecoins={FREE_COINS}",
             "--chain-option=con_blocksubsidy=5000000000"]
    out = tmp_path / "chain.dat"
    assert chain_cli.main(["--chain", ELEMENTSREGTEST, *words, "--blocks", "3", "--txs", "2",
                           "--out", str(out), "--quiet"]) == 0
    params = chain_from_words(ELEMENTSREGTEST, [w.split("=", 1)[1] for w in words])
    raw = list(read_chain(out, params.network_magic))
    assert len(raw) == 4 and raw[0] == params.genesis.serialize()
    capsys.readouterr()
    assert replay_cli.main([str(out), "--chain", ELEMENTSREGTEST, *words, "--datadir",
                            str(tmp_path / "replay"), "--quiet"]) == 0
    replayed = capsys.readouterr().out
    hash_line = next(line for line in replayed.splitlines() if "UTXO set hash" in line)
    replay_hash = hash_line.split()[-1]
    assert audit_cli.main([str(out), "--chain", ELEMENTSREGTEST, *words]) == 0
    audited = capsys.readouterr().out
    assert f"utxo_set_hash {replay_hash}" in audited
    with Node.open(tmp_path / "replay", params) as node:
        stats = node.utxo_stats()
    assert display(stats.utxo_set_hash) == replay_hash and stats.height == 3
    blocks = [parse_block(r) for r in raw]
    assert display(audit_utxo_set(blocks, True).utxo_set_hash) == replay_hash
    # the same blocks without the genesis coins in the set do not connect
    with pytest.raises(ValidationError) as caught:
        audit_utxo_set(blocks, False)
    assert caught.value.reason == reasons.BAD_TXNS_INPUTS_MISSINGORSPENT


def test_the_default_profile_has_no_coins_to_build_on(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert chain_cli.main(["--chain", ELEMENTSREGTEST, "--out", str(tmp_path / "c.dat"),
                           "--quiet"]) == 2
    assert "-initialfreecoins" in capsys.readouterr().err
    with pytest.raises(ChainOptionError):
        build_demo_chain(1, 1, params=select_chain(ELEMENTSREGTEST))


def test_the_elements_genesis_issuance_can_never_be_repeated() -> None:
    """BIP34 implies BIP30 on elementsregtest too: the genesis issuance spends an outpoint of
    the chain commitment, which no transaction can create (validator.block)."""
    from validator.block import BIP34_HEIGHT, bip34_implies_bip30_limit

    genesis = _chain(initialfreecoins=str(FREE_COINS)).genesis
    assert bip34_implies_bip30_limit(genesis) is None
    coinbase, issuance = genesis.transactions
    txin = dataclasses.replace(issuance.inputs[0], prevout_hash=coinbase.txid)
    spends_coinbase = dataclasses.replace(issuance, inputs=(txin,))
    assert bip34_implies_bip30_limit(dataclasses.replace(
        genesis, transactions=(coinbase, spends_coinbase))) == BIP34_HEIGHT
