"""RPC credentials as bitcoind handles them (docs/node-rpc.md §2.2).

- **Cookie** (default, whenever ``rpcpassword`` is unset *or empty*: bitcoind's
  ``GetArg("-rpcpassword", "") == ""`` in ``src/httprpc.cpp``): ``__cookie__:<64 hex>`` from 32
  random bytes, no trailing newline, written to ``.cookie.tmp`` with mode 0600 and renamed over
  ``.cookie`` (atomic) at start-up, before anything slow; removed on a clean stop, and only if the
  file still holds the cookie this process wrote. A new cookie every start.
- **rpcuser/rpcpassword**: one static pair with a non-empty password; no cookie is made. An
  empty password never authenticates (``Authorization: Basic Og==`` is ``:``, refused).
- **rpcauth** ``user:salt$hmac`` (repeatable; coexists with the cookie): HMAC-SHA256 keyed with the
  salt *string* over the password, hex. A malformed entry is a start-up error.

Every comparison is constant time (``hmac.compare_digest``) and every configured credential is
checked, so timing does not tell which user exists.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

COOKIE_USER = "__cookie__"


class AuthConfigError(ValueError):
    """A credential option the node refuses to start with."""


@dataclass(frozen=True, slots=True)
class RpcAuthEntry:
    user: str
    salt: str
    hmac_hex: str

    @classmethod
    def parse(cls, spec: str) -> RpcAuthEntry:
        user, sep, rest = spec.partition(":")
        salt, sep2, digest = rest.partition("$")
        if not (sep and sep2 and user and salt and digest):
            raise AuthConfigError(f"Invalid -rpcauth argument: {spec!r} (want user:salt$hmac)")
        try:
            if len(bytes.fromhex(digest)) != 32:
                raise ValueError
        except ValueError:
            raise AuthConfigError(f"Invalid -rpcauth argument: {spec!r} "
                                  "(hmac must be 64 hex characters)") from None
        return cls(user, salt, digest.lower())

    def matches(self, user: str, password: str) -> bool:
        digest = hmac.new(self.salt.encode(), password.encode(), hashlib.sha256).hexdigest()
        return (hmac.compare_digest(self.user.encode(), user.encode())
                & hmac.compare_digest(self.hmac_hex.encode(), digest.encode()))


def rpcauth_line(user: str, password: str | None = None) -> tuple[str, str]:
    """(``rpcauth=`` value, password) as Core's share/rpcauth/rpcauth.py makes them."""
    salt = secrets.token_hex(16)
    password = password if password is not None else base64.urlsafe_b64encode(
        secrets.token_bytes(32)).decode()
    digest = hmac.new(salt.encode(), password.encode(), hashlib.sha256).hexdigest()
    return f"{user}:{salt}${digest}", password


class Credentials:
    """Who may call: the cookie, a static user/password pair, rpcauth entries."""

    def __init__(self, *, cookie: str | None = None, user: str | None = None,
                 password: str | None = None, rpcauth: Sequence[str] = ()) -> None:
        self._pairs: list[tuple[bytes, bytes]] = []
        if cookie is not None:
            self._pairs.append((COOKIE_USER.encode(), cookie.encode()))
        if password:  # an empty password is no password (bitcoind then uses the cookie)
            self._pairs.append(((user or "").encode(), password.encode()))
        self._rpcauth = [RpcAuthEntry.parse(spec) for spec in rpcauth]

    def check_header(self, header: str | None) -> str | None:
        """The authenticated user of an ``Authorization: Basic ...`` header, or None."""
        if not header or not header.startswith("Basic "):
            return None
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
        user, sep, password = decoded.partition(":")
        if not sep:
            return None
        ok = False
        for expected_user, expected_password in self._pairs:
            ok |= (hmac.compare_digest(expected_user, user.encode())
                   & hmac.compare_digest(expected_password, password.encode()))
        for entry in self._rpcauth:
            ok |= entry.matches(user, password)
        return user if ok else None


class CookieFile:
    """The ``.cookie`` of one node run (module docstring)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.secret = secrets.token_hex(32)
        self._written = False

    @property
    def content(self) -> str:
        return f"{COOKIE_USER}:{self.secret}"

    def write(self) -> None:
        tmp = self.path + ".tmp"
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)  # whatever the umask
            os.write(fd, self.content.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        self._written = True

    def remove(self) -> None:
        """Delete the cookie if it is still ours (another node may have replaced it)."""
        if not self._written:
            return
        self._written = False
        try:
            with open(self.path, encoding="ascii", errors="replace") as handle:
                if handle.read() != self.content:
                    return
            os.remove(self.path)
        except FileNotFoundError:
            pass

