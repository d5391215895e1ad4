"""Deterministic sample chains of confidential transactions: a fan-out block and a block of
``n_tx`` wallet spends, on one of our chains or on elementsregtest, as raw blocks.

``bench block`` (and the benchmarks built on its blocks) measure them; the tests check that
they are valid blocks of their chain (a benchmark that times the rejection of a broken block
measures nothing). Everything is a function of the seeds: the same blocks on every machine.
"""

from __future__ import annotations

from ctplugin.elements.consensus import COIN
from regtest.builder import ChainBuilder, genesis_claim
from regtest.elements import elements_chain, elements_chain_options
from regtest.params import DEFAULT_CHAIN, POLICY_ASSET, REGTEST_SEED, select_chain
from regtest.wallet import OwnedCoin, Payment, Wallet
from regtest.wallet.keys import P2SH_P2WPKH, P2WPKH
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
    genesis free coins and fans them out to 2·n_tx coins of the wallet's keys, alternately
    P2WPKH and P2SH-P2WPKH; each benchmark transaction spends one of each into a blinded
    payment and blinded change (Borromean proofs, as Elements' wallet makes them) and a fee."""
    params = bench_params(ELEMENTSREGTEST_BENCH)
    alice = Wallet.for_chain(REGTEST_SEED, params)
    bob = Wallet.for_chain(b"bench/block receiver seed", params)
    chain = ChainBuilder([alice], miner_script=alice.new_address().script_pubkey, params=params)
    claim = genesis_claim(params, alice.new_address(kind=P2WPKH).script_pubkey, 10_000)
    assert claim is not None
    chain.add(claim)
    coin_value = 2 * COIN
    kinds = (P2WPKH, P2SH_P2WPKH)
    scripts = [alice.new_address(kind=kinds[j % 2]).script_pubkey for j in range(2 * n_tx)]
    fanout = [Payment(coin_value, script_pubkey=script, asset=params.policy_asset)
              for script in scripts]
    chain.add(alice.build_transaction(fanout, fee=10_000, height=1, blind_change=False))
    chain.mine()
    fanned = chain.blocks[1].transactions[2]
    receiver = bob.new_address(kind=P2WPKH)
    for i in range(n_tx):
        coins = [alice.coins[(fanned.txid, 2 * i)], alice.coins[(fanned.txid, 2 * i + 1)]]
        chain.add(alice.build_transaction([Payment(3 * COIN, receiver,
                                                   asset=params.policy_asset)],
                                          fee=2000, height=2, inputs=coins))
    chain.mine()
    return [b.serialize() for b in chain.blocks]
