"""``rpcclient``, the one JSON-RPC client, against a small bitcoind-like HTTP server on
127.0.0.1: cookie discovery as bitcoin-cli does it, user/password, wallet URLs, named params,
batches, exact amounts, keep-alive reuse and reconnection, and one typed error per failure."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import simplejson

from rpcclient import (
    Auth,
    RPCAuthError,
    RPCClient,
    RPCConnectionError,
    RPCCredentialsError,
    RPCError,
    RPCHTTPError,
    RPCProtocolError,
    cookie_path,
    read_cookie,
)


class Bitcoindish(BaseHTTPRequestHandler):
    """Basic auth against ``server.auth``; ``echo`` returns its params, ``fail`` answers -8
    (HTTP 500, as bitcoind's legacy replies), ``busy`` 503, ``garbage`` a non-JSON body; a
    batch is answered in reverse order (ids match replies up)."""

    protocol_version = "HTTP/1.1"  # keep-alive
    server: Any

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append((self.path, self.client_address[1], body,
                                 self.headers.get("Authorization")))
        expected = "Basic " + base64.b64encode(self.server.auth.encode()).decode()
        if self.headers.get("Authorization") != expected:
            return self._send(401, b"")
        request = simplejson.loads(body, use_decimal=True)  # amounts stay exact both ways
        if isinstance(request, list):
            replies = [self.answer(r)[1] for r in reversed(request)]
            return self._send(200, simplejson.dumps(replies, use_decimal=True).encode())
        status, reply = self.answer(request)
        if request["method"] == "busy":
            return self._send(503, b"Work queue depth exceeded")
        if request["method"] == "garbage":
            return self._send(200, b"<html>")
        self._send(status, simplejson.dumps(reply, use_decimal=True).encode())
        if request["method"] == "hangup":
            self.close_connection = True

    def answer(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if request["method"] == "fail":
            return 500, {"result": None, "error": {"code": -8, "message": "out of range"},
                         "id": request["id"]}
        return 200, {"result": request["params"], "error": None, "id": request["id"]}


@pytest.fixture
def server() -> Iterator[Any]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Bitcoindish)
    httpd.auth = "__cookie__:s3cret"
    httpd.seen = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _client(server: Any, **kwargs: Any) -> RPCClient:
    kwargs.setdefault("auth", ("__cookie__", "s3cret"))
    return RPCClient("127.0.0.1", server.server_address[1], timeout=10, **kwargs)


def test_cookie_path_is_bitcoin_clis(tmp_path: Path) -> None:
    assert cookie_path(tmp_path) == tmp_path / ".cookie"
    assert cookie_path(tmp_path, chain_subdir="elementsregtest") == \
        tmp_path / "elementsregtest" / ".cookie"
    # a relative -rpccookiefile is relative to the network data directory
    assert cookie_path(tmp_path, chain_subdir="elementsregtest", rpccookiefile="c/my") == \
        tmp_path / "elementsregtest" / "c" / "my"
    assert cookie_path(tmp_path, rpccookiefile="/etc/x.cookie") == Path("/etc/x.cookie")


def test_credentials_password_wins_else_cookie(tmp_path: Path) -> None:
    (tmp_path / ".cookie").write_text("__cookie__:abc\nsecond line ignored\n")
    assert read_cookie(tmp_path / ".cookie") == ("__cookie__", "abc")
    assert Auth.discover(tmp_path, rpcuser="u", rpcpassword="p").credentials() == ("u", "p")
    assert Auth.discover(tmp_path).credentials() == ("__cookie__", "abc")
    # Core compares -rpcpassword with "": an empty password means the cookie
    assert Auth.discover(tmp_path, rpcuser="u", rpcpassword="").credentials() == \
        ("__cookie__", "abc")
    (tmp_path / "bad").write_text("no colon")
    for path in (tmp_path / "bad", tmp_path / "missing", tmp_path):
        with pytest.raises(RPCCredentialsError, match=r"Could not locate RPC credentials.*"
                                                      r"Cookie file: \(") as caught:
            read_cookie(path)
        assert caught.value.path == str(path)


def test_calls_named_params_wallets_and_amounts(server: Any) -> None:
    with _client(server) as client:
        assert client.call("echo", 1, "two", Decimal("0.10")) == [1, "two", Decimal("0.10")]
        assert client.call_named("echo", verbosity=2, blockhash="00") == {
            "verbosity": 2, "blockhash": "00"}
        [satoshi] = client.request("echo", [Decimal("0.00000001")])
        assert isinstance(satoshi, Decimal) and satoshi == Decimal("0.00000001")
    sent = [json.loads(body) for _, _, body, _ in server.seen]
    assert sent[0] == {"method": "echo", "params": [1, "two", 0.1], "id": 1}
    assert b'"params": [1, "two", 0.10]' in server.seen[0][2]  # exact, not a float
    assert sent[1]["params"] == {"verbosity": 2, "blockhash": "00"}  # -named: an object
    with _client(server, wallet="my wallet/1") as client:
        client.call("echo")
    assert server.seen[-1][0] == "/wallet/my%20wallet%2F1"


def test_batch_results_in_call_order(server: Any) -> None:
    with _client(server) as client:
        assert client.batch([("echo", [1]), ("echo", [2]), ("echo", {"x": 3})]) == [
            [1], [2], {"x": 3}]
        assert client.batch([]) == []
        with pytest.raises(RPCError) as caught:
            client.batch([("echo", [1]), ("fail", [99])])
    assert (caught.value.code, caught.value.method, caught.value.params) == (-8, "fail", [99])


def test_one_connection_is_kept_and_reopened(server: Any) -> None:
    with _client(server) as client:
        for _ in range(3):
            client.call("echo")
        assert len({port for _, port, _, _ in server.seen}) == 1  # keep-alive
        client.call("hangup")  # the server closes the connection after this reply
        client.call("echo")
        assert len({port for _, port, _, _ in server.seen}) == 2


def test_errors_are_typed(server: Any, tmp_path: Path) -> None:
    with _client(server) as client:
        with pytest.raises(RPCError, match=r"out of range \(code -8\)") as caught:
            client.call("fail")
        assert (caught.value.code, caught.value.message) == (-8, "out of range")
        with pytest.raises(RPCHTTPError, match="server returned HTTP error 503") as http:
            client.call("busy")
        assert http.value.body == "Work queue depth exceeded"
        with pytest.raises(RPCProtocolError, match="couldn't parse reply from server"):
            client.call("garbage")
    with _client(server, auth=("__cookie__", "wrong")) as client, \
            pytest.raises(RPCAuthError, match="Authorization failed: Incorrect rpcuser or "
                                              "rpcpassword"):
        client.call("echo")
    # no password and no cookie: sent anyway (as bitcoin-cli), and the 401 says why
    missing = Auth.discover(tmp_path)
    with _client(server, auth=missing) as client, \
            pytest.raises(RPCCredentialsError, match="Could not locate RPC credentials"):
        client.call("echo")
    assert server.seen[-1][3] is None


def test_a_new_cookie_is_read_after_a_401(server: Any, tmp_path: Path) -> None:
    """A node restarted with a new cookie: the client's next call reads it again."""
    (tmp_path / ".cookie").write_text("__cookie__:old")
    with _client(server, auth=Auth.discover(tmp_path)) as client:
        server.auth = "__cookie__:old"
        client.call("echo")
        server.auth = "__cookie__:s3cret"
        (tmp_path / ".cookie").write_text("__cookie__:s3cret")
        assert client.call("echo", 5) == [5]
        (tmp_path / ".cookie").unlink()
        server.auth = "__cookie__:newer"
        with pytest.raises(RPCCredentialsError):
            client.call("echo")


def test_no_server_and_timeouts_are_connection_errors(server: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with RPCClient("127.0.0.1", port, timeout=5) as client, \
            pytest.raises(RPCConnectionError):
        client.call("echo")
    with socket.socket() as silent:  # accepts, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        with RPCClient("127.0.0.1", silent.getsockname()[1], timeout=0.3) as client, \
                pytest.raises(RPCConnectionError, match="timed out"):
            client.call("echo")


def test_from_url() -> None:
    client = RPCClient.from_url("http://us%40er:p%3Ass@127.0.0.1:18884/wallet/w")
    assert (client.host, client.port, client.path) == ("127.0.0.1", 18884, "/wallet/w")
    assert client.auth is not None and client.auth.credentials() == ("us@er", "p:ss")
    assert client.url == "http://127.0.0.1:18884/wallet/w"  # no credentials in it
    with pytest.raises(ValueError, match="expected http://HOST:PORT"):
        RPCClient.from_url("ftp://127.0.0.1/")


def test_ctplugin_cli_over_the_client(server: Any, tmp_path: Path) -> None:
    """``ctplugin cli`` (``apps.cli``) prints what bitcoin-cli prints for each outcome."""
    import io

    from apps.cli import main as cli_main

    def cli(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        status = cli_main([f"-datadir={tmp_path}", f"-rpcport={server.server_address[1]}",
                           *args], stdout=out, stderr=err)
        return status, out.getvalue(), err.getvalue()

    status, _, err = cli("echo", "x")
    assert status == 1 and err.startswith("error: Could not locate RPC credentials.")
    assert f"Cookie file: ({tmp_path}/ctregtest/.cookie)" in err  # DATADIR/<chain>/.cookie
    (tmp_path / "ctregtest").mkdir()
    (tmp_path / "ctregtest" / ".cookie").write_text("__cookie__:s3cret")
    assert cli("echo", "x") == (0, '[\n  "x"\n]\n', "")
    assert cli("-named", "echo", "arg0=y")[1] == '{\n  "arg0": "y"\n}\n'
    assert cli("fail") == (8, "", "error code: -8\nerror message:\nout of range\n")
    assert cli("busy") == (1, "", "error: Server response: Work queue depth exceeded\n")
    assert cli("-rpcpassword=wrong", "echo") == (
        1, "", "error: Authorization failed: Incorrect rpcuser or rpcpassword\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    status, _, err = cli(f"-rpcport={port}", "-rpcwait", "-rpcwaittimeout=1", "echo")
    assert status == 1 and err.startswith(f"error: Could not connect to the server "
                                          f"127.0.0.1:{port}")
