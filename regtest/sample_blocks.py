"""Deterministic sample chains of confidential transactions: a fan-out block and a block of
``n_tx`` wallet spends, on one of our chains or on elementsregtest, as raw blocks.

``bench block`` (and the benchmarks built on its blocks) measure them; the tests check that
they are valid blocks of their chain (a benchmark that times the rejection of a broken block
measures nothing). Everything is a function of the seeds: the same blocks on every machine.
"""

from __future__ import annotations

from dataclasses import replace

from ctplugin.elements import Transaction
from ctplugin.elements.consensus import COIN
from ctplugin.hashes import hash160
from regtest.builder import BLOCK_INTERVAL, ChainBuilder, genesis_claim, make_block
from regtest.elements import elements_chain, elements_chain_options
from regtest.params import DEFAULT_CHAIN, POLICY_ASSET, REGTEST_SEED, select_chain
from regtest.wallet import OwnedCoin, Payment, Wallet
from regtest.wallet.signing import sign_transaction
from validator import ChainParams

OP_TRUE = b"\x51"  # the anyone-can-spend half of the fan-out (nothing to sign)


def build_blocks(n_tx: int, chain_name: str = DEFAULT_CHAIN) -> list[bytes]:
    """[genesis, fan-out, benchmark block] as raw blocks (deterministic from the seeds), the
    proofs of the kind the chain ``chain_name``'s wallets make."""
    params = select_chain(chain_name)
    kind = params.wallet_range_proof
    alice = Wallet(REGTEST_SEED, range_proofs=kind, genesis_hash=params.genesis_hash)
    bob = Wallet(b"bench/block receiver seed", range_proofs=kind,
                 genesis_hash=params.genesis_hash)
    chain = ChainBuilder([alice], miner_script=alice.new_address().script_pubkey, params=params)
    coin_value = 2 * COIN
    fanout = [Payment(coin_value, script_pubkey=alice.new_address().script_pubkey)
              for _ in range(n_tx)]
    fanout += [Payment(coin_value, script_pubkey=OP_TRUE) for _ in range(n_tx)]
    chain.add(alice.build_transaction(fanout, fee=10_000, height=1, blind_change=False))
    chain.mine()
    fanned = chain.blocks[1].transactions[1]
    keyed = [alice.coins[(fanned.txid, j)] for j in range(n_tx)]
    anyone = [OwnedCoin(fanned.txid, n_tx + i, fanned.outputs[n_tx + i], POLICY_ASSET,
                        coin_value, 0, 0, 1) for i in range(n_tx)]
    receiver = bob.new_address()
    for i in range(n_tx):
        chain.add(alice.build_transaction([Payment(3 * COIN, receiver)], fee=1000, height=2,
                                          inputs=[keyed[i], anyone[i]]))
    chain.mine()
    return [b.serialize() for b in chain.blocks]


ELEMENTS_BENCH_OPTIONS = {"initialfreecoins": "2100000000000000"}
"""The elementsregtest options of the benchmark: Elements' CT tests' free coins, every other
option Elements' default."""
ELEMENTSREGTEST_BENCH = "elementsregtest"
"""The name ``build_elements_blocks``' chain goes by (``bench_params``)."""


def bench_params(chain_name: str) -> ChainParams:
    """The chain a benchmark block is built for: one of ours, or elementsregtest with
    ``ELEMENTS_BENCH_OPTIONS``."""
    if chain_name == ELEMENTSREGTEST_BENCH:
        return elements_chain(elements_chain_options(ELEMENTS_BENCH_OPTIONS))
    return select_chain(chain_name)


def build_elements_blocks(n_tx: int) -> list[bytes]:
    """[genesis, fan-out, benchmark block] on elementsregtest: the fan-out block claims the
    genesis free coins and fans them out to 2·n_tx coins of the wallet's keys, half P2WPKH, half
    P2SH-P2WPKH (``wrap_odd_outputs``); each benchmark transaction spends one of each into a
    blinded payment and blinded change (Borromean proofs, as Elements' wallet makes them) and a
    fee."""
    params = bench_params(ELEMENTSREGTEST_BENCH)
    alice = Wallet.for_chain(REGTEST_SEED, params)
    bob = Wallet.for_chain(b"bench/block receiver seed", params)
    miner = alice.new_address().script_pubkey
    chain = ChainBuilder([alice], miner_script=miner, params=params)
    claim = genesis_claim(params, alice.new_address(kind="p2wpkh").script_pubkey, 10_000)
    assert claim is not None
    chain.add(claim)
    coin_value = 2 * COIN
    fanout = [Payment(coin_value, script_pubkey=alice.new_address(kind="p2wpkh").script_pubkey,
                      asset=params.policy_asset) for _ in range(2 * n_tx)]
    chain.add(alice.build_transaction(fanout, fee=10_000, height=1, blind_change=False))
    chain.mine()
    fanned = chain.blocks[1].transactions[2]
    receiver = bob.new_address(kind="p2wpkh")
    spends = []
    for i in range(n_tx):
        coins = [alice.coins[(fanned.txid, 2 * i)], alice.coins[(fanned.txid, 2 * i + 1)]]
        spends.append(alice.build_transaction([Payment(3 * COIN, receiver,
                                                       asset=params.policy_asset)],
                                              fee=2000, height=2, inputs=coins))
    fan, spends = wrap_odd_outputs(params, alice, claim, fanned, spends)
    block1 = make_block(params.genesis_hash, 1, chain.blocks[1].header.time, [claim, fan],
                        miner, params=params)
    block2 = make_block(block1.hash, 2, block1.header.time + BLOCK_INTERVAL, spends, miner,
                        params=params)
    return [b.serialize() for b in (params.genesis, block1, block2)]


def p2sh_p2wpkh(p2wpkh: bytes) -> bytes:
    """OP_HASH160 <HASH160(redeem)> OP_EQUAL around a P2WPKH redeem script (BIP141's
    P2SH-wrapped witness program)."""
    return b"\xa9\x14" + hash160(p2wpkh) + b"\x87"


def wrap_odd_outputs(params: ChainParams, wallet: Wallet, claim: Transaction,
                     fanned: Transaction, spends: list[Transaction]
                     ) -> tuple[Transaction, list[Transaction]]:
    """The fan-out with its odd (explicit) outputs paying the P2SH-wrapped form of the same
    P2WPKH script, and the spends of it with those inputs P2SH-P2WPKH: the redeem script in the
    scriptSig, every input re-signed for the fan-out's new txid. The wallet's keys here are
    P2WPKH ones, and it can sign these too: BIP143's digest covers the scriptCode (the key's
    P2WPKH code either way) and the amount, not the spent scriptPubKey nor the scriptSig, so
    the wallet signs each wrapped input as the P2WPKH spend it wraps (which leaves the scriptSig
    empty) and the redeem script push goes back in after."""
    keys, genesis = wallet.keys, params.genesis_hash
    outs = list(fanned.outputs)
    redeem: dict[int, bytes] = {}
    for j in range(1, 2 * len(spends), 2):
        assert isinstance(outs[j].value, int)  # explicit: no proof commits to the script
        redeem[j] = outs[j].script_pubkey
        outs[j] = replace(outs[j], script_pubkey=p2sh_p2wpkh(redeem[j]))
    coins = {(tx.txid, n): out for tx in (*params.genesis.transactions, claim)
             for n, out in enumerate(tx.outputs)}
    claimed = [coins[(t.prevout_hash, t.prevout_index)] for t in fanned.inputs]
    fan = sign_transaction(replace(fanned, outputs=tuple(outs)), claimed, keys, genesis,
                           _no_aux)
    wrapped = []
    for tx in spends:
        inputs = tuple(replace(t, prevout_hash=fan.txid,
                               script_sig=_push(redeem[t.prevout_index])
                               if t.prevout_index in redeem else t.script_sig)
                       for t in tx.inputs)
        as_p2wpkh = [fanned.outputs[t.prevout_index] for t in inputs]
        signed = sign_transaction(replace(tx, inputs=inputs), as_p2wpkh, keys, genesis, _no_aux)
        # signed as P2WPKH spends, the wallet left every scriptSig empty: the redeem scripts go
        # back (BIP143's digest does not cover the scriptSig, so the signatures stand)
        wrapped.append(replace(signed, inputs=tuple(
            replace(s, script_sig=t.script_sig) for s, t in zip(signed.inputs, inputs))))
    return fan, wrapped


def _push(data: bytes) -> bytes:
    return bytes((len(data),)) + data  # a direct push (data below 76 bytes)


def _no_aux() -> bytes:  # BIP340 auxiliary randomness: no taproot input is signed here
    raise AssertionError("no Schnorr signature expected")
