"""Deterministic confidential-transaction wallet for the regtest chain (see ``wallet``)."""

from regtest.wallet.address import ConfidentialAddress
from regtest.wallet.keys import KeyChain, KeyPair
from regtest.wallet.wallet import (
    Issuance,
    OwnedCoin,
    Payment,
    Reissuance,
    Wallet,
    WalletError,
)

__all__ = [
    "ConfidentialAddress",
    "Issuance",
    "KeyChain",
    "KeyPair",
    "OwnedCoin",
    "Payment",
    "Reissuance",
    "Wallet",
    "WalletError",
]
