"""Who the client says it is: a user/password pair, or the node's cookie, found where bitcoin-cli
finds it (Bitcoin Core ``src/rpc/request.cpp``: ``GetAuthCookieFile``, ``GetAuthCookie``;
``src/bitcoin-cli.cpp``: ``CallRPC``; docs/node-rpc.md).

- A non-empty password wins: ``rpcuser:rpcpassword`` is sent, no cookie is read (Core tests
  ``-rpcpassword`` against ``""``, so an empty password means "use the cookie").
- Otherwise the cookie: ``-rpccookiefile`` if given — absolute, or relative to the *network*
  data directory — else ``.cookie`` there. The network data directory is the data directory
  plus the chain's subdirectory (Core's ``GetDataDirNet``): ``""`` for our own chain today,
  ``"elementsregtest"`` for an Elements regtest node.
- The cookie is the file's first line, ``USER:PASSWORD`` (``__cookie__:<hex>`` as the node
  writes it). It is read when a request is sent, not when the client is made: a node that is
  starting writes it later, and a restarted node writes a new one (a 401 makes the client read
  it again).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rpcclient.errors import RPCCredentialsError

COOKIE_FILE = ".cookie"
"""The cookie's file name in the network data directory (Core's ``COOKIEAUTH_FILE``)."""

StrPath = str | os.PathLike[str]


def cookie_path(datadir: StrPath, *, chain_subdir: str = "",
                rpccookiefile: StrPath | None = None) -> Path:
    """Where the node's cookie is (``GetAuthCookieFile``): ``rpccookiefile`` when absolute,
    else that name (default ``.cookie``) in ``datadir/chain_subdir``."""
    path = Path(rpccookiefile) if rpccookiefile else Path(COOKIE_FILE)
    if path.is_absolute():
        return path
    return Path(datadir) / chain_subdir / path


def _missing(path: StrPath) -> RPCCredentialsError:
    return RPCCredentialsError(
        "Could not locate RPC credentials. No authentication cookie could be found, and RPC "
        f"password is not set.  See -rpcpassword and -stdinrpcpass.  Cookie file: ({path})",
        os.fspath(path))


def read_cookie(path: StrPath) -> tuple[str, str]:
    """(user, password) of a cookie file's first line; ``RPCCredentialsError`` when the file
    cannot be read or the line has no ``:``."""
    try:
        with open(path, encoding="utf-8") as handle:
            line = handle.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError):
        raise _missing(path) from None
    user, sep, password = line.partition(":")
    if not sep:
        raise _missing(path)
    return user, password


@dataclass(frozen=True, slots=True)
class Auth:
    """The credentials of a client: a fixed pair, or a cookie file read when needed."""

    user: str = ""
    password: str = ""
    cookie_file: Path | None = None

    @classmethod
    def discover(cls, datadir: StrPath, *, rpcuser: str | None = None,
                 rpcpassword: str | None = None, rpccookiefile: StrPath | None = None,
                 chain_subdir: str = "") -> Auth:
        """bitcoin-cli's choice (module docstring): the password if set, else the cookie."""
        if rpcpassword:
            return cls(rpcuser or "", rpcpassword)
        return cls(cookie_file=cookie_path(datadir, chain_subdir=chain_subdir,
                                           rpccookiefile=rpccookiefile))

    def credentials(self) -> tuple[str, str]:
        """(user, password) now: the fixed pair, or the cookie's (``RPCCredentialsError``)."""
        if self.cookie_file is None:
            return self.user, self.password
        return read_cookie(self.cookie_file)
