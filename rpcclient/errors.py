"""What can go wrong on the client side of a JSON-RPC call, one class per kind of failure.

Every error is an ``RPCClientError``, so a caller that only reports failures catches one class;
a caller that reacts (retry while the node warms up, ask for credentials) catches the subclass.
The messages are bitcoin-cli's (Bitcoin Core ``src/bitcoin-cli.cpp``, ``CallRPC``), so a user
sees the same words from ``ctplugin cli`` as from the tool they know.
"""

from __future__ import annotations


class RPCClientError(Exception):
    """Base of every error this package raises."""


class RPCError(RPCClientError):
    """The server answered a JSON-RPC error object ``{"code": code, "message": message}``.

    ``method`` and ``params`` name the call it answered (set by ``RPCClient``: in a batch,
    which call failed)."""

    def __init__(self, code: int, message: str, *, method: str | None = None,
                 params: object = None) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.method = method
        self.params = params

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"


class RPCConnectionError(RPCClientError):
    """No answer: the connection was refused, reset or timed out, or the host is unknown."""


class RPCAuthError(RPCClientError):
    """HTTP 401: the server refused the credentials that were sent."""


class RPCCredentialsError(RPCAuthError):
    """No credentials could be found here: no password was given and the cookie file is missing,
    unreadable or not ``USER:PASSWORD``. ``path`` is the cookie file looked for."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class RPCHTTPError(RPCClientError):
    """An HTTP status that carries no JSON-RPC reply (anything but 200, 400, 404, 500 and the
    401 of ``RPCAuthError``); ``status`` and the response ``body`` are kept."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"server returned HTTP error {status}")
        self.status = status
        self.body = body


class RPCProtocolError(RPCClientError):
    """The server answered, but not with a JSON-RPC reply (empty body, not JSON, no
    ``result``/``error``, a batch answered by one object, an id missing from a batch)."""
