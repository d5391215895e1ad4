"""The one JSON-RPC client of the repository (docs/node-rpc.md; Bitcoin Core
``src/bitcoin-cli.cpp``): ``ctplugin cli``, replay's RPC source, the audit's prevout fetch, the
test harness and the benchmarks all call a node through ``RPCClient``.

A leaf: standard library (and simplejson, for exact ``Decimal`` amounts) only, no other package
of this repository — so every layer may use it and it may use none.

- ``RPCClient``: calls, named calls, batches, wallet URLs, timeouts, one keep-alive connection.
- ``Auth``, ``cookie_path``, ``read_cookie``: credentials found as bitcoin-cli finds them.
- Errors, all ``RPCClientError``: ``RPCError`` (the server's error object), ``RPCConnectionError``,
  ``RPCAuthError`` (401; ``RPCCredentialsError``: none found), ``RPCHTTPError``,
  ``RPCProtocolError``.
"""

from rpcclient.auth import COOKIE_FILE, Auth, cookie_path, read_cookie
from rpcclient.client import DEFAULT_TIMEOUT, RPCClient
from rpcclient.errors import (
    RPCAuthError,
    RPCClientError,
    RPCConnectionError,
    RPCCredentialsError,
    RPCError,
    RPCHTTPError,
    RPCProtocolError,
)

__all__ = ["COOKIE_FILE", "DEFAULT_TIMEOUT", "Auth", "RPCAuthError", "RPCClient",
           "RPCClientError", "RPCConnectionError", "RPCCredentialsError", "RPCError",
           "RPCHTTPError", "RPCProtocolError", "cookie_path", "read_cookie"]
