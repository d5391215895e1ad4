"""The RPC methods, one module per bitcoind category; importing this package registers them all
in ``rpc.registry.REGISTRY``."""

from rpc.methods import (
    blockchain,
    confidential,
    control,
    dlc,
    mempool,
    mining,
    network,
    rawtransactions,
    util,
    wallet,
    walletkeys,
)

__all__ = ["blockchain", "confidential", "control", "dlc", "mempool", "mining", "network",
           "rawtransactions", "util", "wallet", "walletkeys"]
