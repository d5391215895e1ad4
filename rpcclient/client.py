"""``RPCClient``: JSON-RPC calls to a bitcoind / elementsd / ``ctplugin node`` over HTTP.

- One keep-alive connection (``http.client``), opened at the first call and reused; a reused
  connection the server has closed meanwhile (idle timeout, restart) is reopened once — only
  when no byte of a reply was read, so a call is never sent twice after it may have run.
- Requests are bitcoin-cli's legacy JSON-RPC objects ``{"method", "params", "id"}``: the
  params a list (positional) or an object (``-named``). ``batch`` sends one array and returns
  the results in call order (JSON-RPC 2.0 §6 lets the server answer in any order; the ids
  match them up).
- Amounts stay exact: non-integer numbers are read and written as ``Decimal`` (simplejson);
  ``parse_float`` may name another exact type (the cli keeps each number's text).
- ``wallet="NAME"`` calls ``/wallet/NAME`` (URL-quoted, as bitcoin-cli's ``-rpcwallet``).
- Replies are read as bitcoin-cli reads them: 401 is ``RPCAuthError`` (``RPCCredentialsError``
  when no credentials were found), a status other than 200/400/404/500 is ``RPCHTTPError``
  (bitcoind sends JSON-RPC errors with 400, 404 or 500), an error object is ``RPCError``.

A client is one connection: use one per thread.
"""

from __future__ import annotations

import base64
import http.client
import itertools
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote, unquote, urlsplit

import simplejson

from rpcclient.auth import Auth
from rpcclient.errors import (
    RPCAuthError,
    RPCClientError,
    RPCConnectionError,
    RPCCredentialsError,
    RPCError,
    RPCHTTPError,
    RPCProtocolError,
)

DEFAULT_TIMEOUT = 900.0
"""Seconds to wait for a reply (bitcoin-cli's ``-rpcclienttimeout`` default)."""

Params = Sequence[Any] | Mapping[str, Any]

# HTTP statuses bitcoind answers JSON-RPC replies with (Core ``src/httprpc.cpp``: legacy errors
# are 500, 404 for an unknown method, 400 for an invalid request).
_JSON_STATUSES = frozenset({200, 400, 404, 500})
# Failures of a reused keep-alive connection before any reply arrived: the server closed it.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)
# Built once: simplejson.dumps/loads with options build a new encoder/decoder on every call,
# which costs more than the rest of the client's work for a small call.
_encode = simplejson.JSONEncoder(use_decimal=True).encode


class RPCClient:
    """JSON-RPC over one HTTP connection to ``host:port`` (module docstring).

    ``auth`` is an ``Auth`` (a pair, or a cookie file read when needed), a ``(user, password)``
    tuple, or None (no ``Authorization`` header). ``timeout`` is per socket operation in
    seconds, None waits for ever. ``parse_float`` builds non-integer numbers of replies."""

    def __init__(self, host: str = "127.0.0.1", port: int = 80, *,
                 auth: Auth | tuple[str, str] | None = None, wallet: str | None = None,
                 path: str = "/", timeout: float | None = DEFAULT_TIMEOUT,
                 parse_float: Callable[[str], Any] = Decimal) -> None:
        self.host = host
        self.port = port
        self.path = path if wallet is None else "/wallet/" + quote(wallet, safe="")
        self.timeout = timeout
        # one decoder per client (its scanner keeps per-call state: not shared across threads)
        self._decode = simplejson.JSONDecoder(parse_float=parse_float).decode
        self.auth = Auth(*auth) if isinstance(auth, tuple) else auth
        self._header: str | None = None  # the Authorization value last sent
        self._conn: http.client.HTTPConnection | None = None
        self._ids = itertools.count(1)

    @classmethod
    def from_url(cls, url: str, *, auth: Auth | tuple[str, str] | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT) -> RPCClient:
        """``http://[USER:PASSWORD@]HOST[:PORT][/PATH]``; ``auth`` wins over the URL's
        credentials. ``ValueError`` for another scheme or no host."""
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"RPC URL {url!r}: expected http://HOST:PORT")
        if auth is None and parts.username is not None:
            auth = (unquote(parts.username), unquote(parts.password or ""))
        return cls(parts.hostname, parts.port or 80, auth=auth, path=parts.path or "/",
                   timeout=timeout)

    @property
    def url(self) -> str:
        """The endpoint, without credentials (safe to print)."""
        return f"http://{self.host}:{self.port}{self.path}"

    # --- calls ---------------------------------------------------------------------------------

    def call(self, method: str, *params: Any) -> Any:
        """The result of ``method(*params)``; ``RPCError`` if the server answers an error."""
        return self.request(method, list(params))

    def call_named(self, method: str, /, **params: Any) -> Any:
        """The result of ``method`` with named params (bitcoin-cli ``-named``)."""
        return self.request(method, params)

    def request(self, method: str, params: Params = ()) -> Any:
        """The result of one call with positional (sequence) or named (mapping) params."""
        request_id = next(self._ids)
        reply = self._post({"method": method, "params": _params(params), "id": request_id})
        if not isinstance(reply, dict) or ("result" not in reply and "error" not in reply):
            raise RPCProtocolError("expected reply to have result, error and id properties")
        return _result(reply, method, params)

    def batch(self, calls: Sequence[tuple[str, Params]]) -> list[Any]:
        """The results of several calls sent as one JSON-RPC batch, in the order of ``calls``;
        the first error (in that order) is raised as ``RPCError``."""
        if not calls:
            return []
        ids = [next(self._ids) for _ in calls]
        reply = self._post([{"method": method, "params": _params(params), "id": i}
                            for i, (method, params) in zip(ids, calls, strict=True)])
        if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
            # a server without batches answers the array with one error
            raise _error(reply["error"], None, None)
        if not isinstance(reply, list):
            raise RPCProtocolError("a batch was not answered with an array")
        by_id = {r.get("id"): r for r in reply if isinstance(r, dict)}
        results = []
        for i, (method, params) in zip(ids, calls, strict=True):
            answer = by_id.get(i)
            if answer is None:
                raise RPCProtocolError(f"no reply to {method} in the batch")
            results.append(_result(answer, method, params))
        return results

    # --- transport -----------------------------------------------------------------------------

    def _post(self, document: object) -> Any:
        body = _encode(document).encode()
        status, text = self._exchange(body)
        if status == 401 and self.auth is not None and self.auth.cookie_file is not None:
            # The node may have restarted with a new cookie since it was read: read it again.
            sent = self._header
            self._header = None
            if self._authorization() != sent:
                status, text = self._exchange(body)
        if status == 401:
            if self.auth is not None and self.auth.cookie_file is not None \
                    and self._header is None:
                self.auth.credentials()  # raises RPCCredentialsError, bitcoin-cli's message
            raise RPCAuthError("Authorization failed: Incorrect rpcuser or rpcpassword")
        if status not in _JSON_STATUSES:
            raise RPCHTTPError(status, text)
        if not text:
            raise RPCProtocolError("no response from server")
        try:
            return self._decode(text)
        except ValueError:
            raise RPCProtocolError("couldn't parse reply from server") from None

    def _authorization(self) -> str | None:
        """The Authorization header, from the cookie read now if none was read yet; None
        without credentials (bitcoin-cli then sends the request anyway: a 401 says why)."""
        if self._header is None and self.auth is not None:
            try:
                user, password = self.auth.credentials()
            except RPCCredentialsError:
                return None
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            self._header = f"Basic {token}"
        return self._header

    def _exchange(self, body: bytes) -> tuple[int, str]:
        headers = {"Host": self.host, "Content-Type": "application/json"}
        authorization = self._authorization()
        if authorization is not None:
            headers["Authorization"] = authorization
        for attempt in (0, 1):
            reused = self._conn is not None
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.host, self.port,
                                                        timeout=self.timeout)
            try:
                try:
                    self._conn.request("POST", self.path, body, headers)
                    response = self._conn.getresponse()
                except _STALE:
                    # no status line came back: the server had closed the idle connection
                    self.close()
                    if reused and attempt == 0:
                        continue
                    raise
                data = response.read()  # from here on a failure is never retried
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                raise RPCConnectionError(_describe(exc)) from None
            if response.will_close:
                self.close()
            return response.status, data.decode("utf-8", errors="replace")
        raise AssertionError("unreachable: the second attempt returns or raises")

    def close(self) -> None:
        """Close the connection (the next call opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _params(params: Params) -> list[Any] | dict[str, Any]:
    return dict(params) if isinstance(params, Mapping) else list(params)


def _error(error: object, method: str | None, params: Params | None) -> RPCClientError:
    """An error object as ``RPCError``; anything else the server put there is not JSON-RPC."""
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        message = error.get("message")
        return RPCError(error["code"], message if isinstance(message, str) else "",
                        method=method, params=params)
    return RPCProtocolError(simplejson.dumps(error, use_decimal=True))


def _result(reply: dict[str, Any], method: str, params: Params) -> Any:
    error = reply.get("error")
    if error is not None:
        raise _error(error, method, params)
    return reply.get("result")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__
