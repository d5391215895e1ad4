"""JSON-RPC error codes of bitcoind/elementsd (``src/rpc/protocol.h``) and the error type."""

from __future__ import annotations

from enum import IntEnum


class RpcCode(IntEnum):
    MISC_ERROR = -1
    TYPE_ERROR = -3
    INVALID_ADDRESS_OR_KEY = -5
    INVALID_PARAMETER = -8
    DESERIALIZATION_ERROR = -22
    VERIFY_ERROR = -25
    VERIFY_REJECTED = -26
    VERIFY_ALREADY_IN_CHAIN = -27
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    PARSE_ERROR = -32700


class RpcError(Exception):
    """An error answered to the client as ``{"code": code, "message": message}``."""

    def __init__(self, code: RpcCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_json(self) -> dict[str, object]:
        return {"code": int(self.code), "message": self.message}
