"""JSON-RPC error codes of bitcoind/elementsd (``src/rpc/protocol.h``) and the error type."""

from __future__ import annotations

from enum import IntEnum


class RpcCode(IntEnum):
    # Standard JSON-RPC 2.0 errors
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    PARSE_ERROR = -32700
    # General application defined errors
    MISC_ERROR = -1
    TYPE_ERROR = -3
    INVALID_ADDRESS_OR_KEY = -5
    OUT_OF_MEMORY = -7
    INVALID_PARAMETER = -8
    DATABASE_ERROR = -20
    DESERIALIZATION_ERROR = -22
    VERIFY_ERROR = -25
    VERIFY_REJECTED = -26
    VERIFY_ALREADY_IN_CHAIN = -27
    IN_WARMUP = -28
    METHOD_DEPRECATED = -32
    # Shutdown (bitcoind answers -9 "Shutting down" to calls interrupted by stop)
    CLIENT_NOT_CONNECTED = -9
    # P2P client errors
    CLIENT_NODE_ALREADY_ADDED = -23
    CLIENT_NODE_NOT_ADDED = -24
    CLIENT_NODE_NOT_CONNECTED = -29
    CLIENT_INVALID_IP_OR_SUBNET = -30
    CLIENT_P2P_DISABLED = -31
    # Wallet errors
    WALLET_ERROR = -4
    WALLET_INSUFFICIENT_FUNDS = -6
    WALLET_INVALID_LABEL_NAME = -11
    WALLET_KEYPOOL_RAN_OUT = -12
    WALLET_UNLOCK_NEEDED = -13
    WALLET_PASSPHRASE_INCORRECT = -14
    WALLET_WRONG_ENC_STATE = -15
    WALLET_ENCRYPTION_FAILED = -16
    WALLET_NOT_FOUND = -18
    WALLET_NOT_SPECIFIED = -19
    WALLET_ALREADY_LOADED = -35
    WALLET_ALREADY_EXISTS = -36


class RpcError(Exception):
    """An error answered to the client as ``{"code": code, "message": message}``."""

    def __init__(self, code: RpcCode | int, message: str) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message}

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r})"
