"""bitcoind's HTTP and JSON-RPC rules, checked byte for byte against a node subprocess
(docs/node-rpc.md §2: status matrix, 2.0 notifications, batches, named params, auth, limits)."""

from __future__ import annotations

import base64
import contextlib
import gzip
import http.client
import ipaddress
import json
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bitcoinrpc.authproxy import AuthServiceProxy, JSONRPCException

from rpc.auth import rpcauth_line
from rpc.process import NodeProcess, free_port
from tests.conftest import REPO


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    user_line, _ = rpcauth_line("carol", "carols-password")
    process = NodeProcess(tmp_path_factory.mktemp("http") / "node", "--rpcauth", user_line)
    process.start()
    try:
        yield process
    finally:
        process.stop()


def post(node: NodeProcess, body: bytes | str, *, path: str = "/", auth: str | None = "cookie",
         method: str = "POST", headers: dict[str, str] | None = None,
         connection: http.client.HTTPConnection | None = None
         ) -> tuple[int, dict[str, str], bytes]:
    conn = connection or http.client.HTTPConnection("127.0.0.1", node.port, timeout=30)
    sent = dict(headers or {})
    if auth == "cookie":
        user, password = node.credentials()
        auth = f"{user}:{password}"
    if auth is not None:
        sent["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    conn.request(method, path, body, sent)
    response = conn.getresponse()
    data = response.read()
    result = response.status, {k.lower(): v for k, v in response.getheaders()}, data
    if connection is None:
        conn.close()
    return result


def call(node: NodeProcess, payload: Any, **kw: Any) -> tuple[int, Any]:
    status, headers, data = post(node, json.dumps(payload), **kw)
    if not data:
        return status, None
    assert headers["content-type"] == "application/json"
    assert data.endswith(b"\n")
    return status, json.loads(data)


def test_cookie_file(node: NodeProcess) -> None:
    text = node.cookie_path.read_bytes()
    user, _, secret = text.decode().partition(":")
    assert user == "__cookie__" and len(secret) == 64 and int(secret, 16) >= 0
    assert not text.endswith(b"\n")
    assert stat.S_IMODE(os.stat(node.cookie_path).st_mode) == 0o600


def test_legacy_status_matrix(node: NodeProcess) -> None:
    status, reply = call(node, {"method": "getblockcount", "id": 1})
    assert (status, reply) == (200, {"result": 0, "error": None, "id": 1})
    status, reply = call(node, {"method": "nosuchmethod", "id": "x"})
    assert status == 404
    assert reply == {"result": None, "error": {"code": -32601, "message": "Method not found"},
                     "id": "x"}
    status, reply = call(node, {"id": 2})
    assert status == 400 and reply["error"] == {"code": -32600, "message": "Missing method"}
    status, reply = call(node, {"method": "getblockhash", "params": [99], "id": 3})
    assert status == 500 and reply["error"]["code"] == -8
    status, reply = call(node, {"method": "getblockcount", "params": "x", "id": 4})
    assert status == 400 and reply["error"]["message"] == "Params must be an array or object"
    status, reply = call(node, {"method": 5, "id": 4})
    assert status == 400 and reply["error"]["message"] == "Method must be a string"
    # A legacy request without id gets no id back, and is answered (not a notification).
    status, reply = call(node, {"method": "getblockcount"})
    assert (status, reply) == (200, {"result": 0, "error": None})
    status, reply = call(node, {"method": "getblockcount", "jsonrpc": "1.0", "id": None})
    assert (status, reply) == (200, {"result": 0, "error": None, "id": None})


def test_parse_errors_are_json(node: NodeProcess) -> None:
    for body in (b"", b"{not json", b"[1, 2", "\ud800".encode(errors="surrogatepass"),
                 b"NaN", b"[" * 100_000 + b"]" * 100_000, b"[" * 600 + b"]" * 600):
        status, headers, data = post(node, body)
        assert status == 500, body[:20]
        assert headers["content-type"] == "application/json"
        assert json.loads(data) == {"result": None, "error": {"code": -32700,
                                                              "message": "Parse error"},
                                    "id": None}
    status, reply = call(node, 5)
    assert status == 500 and reply["error"] == {"code": -32700,
                                                "message": "Top-level object parse error"}


def test_v2_rules(node: NodeProcess) -> None:
    status, reply = call(node, {"jsonrpc": "2.0", "method": "getblockcount", "id": 7})
    assert (status, reply) == (200, {"jsonrpc": "2.0", "result": 0, "id": 7})
    status, reply = call(node, {"jsonrpc": "2.0", "method": "nosuch", "id": 8})
    assert (status, reply) == (200, {"jsonrpc": "2.0", "error": {
        "code": -32601, "message": "Method not found"}, "id": 8})
    assert call(node, {"jsonrpc": "2.0", "method": "getblockcount"}) == (204, None)
    assert call(node, {"jsonrpc": "2.0", "method": "nosuch"}) == (204, None)
    status, reply = call(node, {"jsonrpc": "3.0", "method": "getblockcount", "id": 1})
    assert status == 400 and reply["error"] == {"code": -32600,
                                                "message": "JSON-RPC version not supported"}
    status, reply = call(node, {"jsonrpc": 2, "method": "getblockcount", "id": 1})
    assert status == 400 and reply["error"]["message"] == "jsonrpc field must be a string"
    status, reply = call(node, {"jsonrpc": "2.0", "id": 9})
    assert (status, reply) == (400, {"jsonrpc": "2.0", "error": {
        "code": -32600, "message": "Missing method"}, "id": 9})


def test_batches(node: NodeProcess) -> None:
    status, reply = call(node, [
        {"jsonrpc": "2.0", "method": "getblockcount", "id": 1},
        {"method": "nosuch", "id": 2},
        {"jsonrpc": "2.0", "method": "getblockcount"},  # notification: left out
        3,
        {"jsonrpc": "2.0", "method": "getblockhash", "params": [-1], "id": 4},
    ])
    assert status == 200
    assert reply == [
        {"jsonrpc": "2.0", "result": 0, "id": 1},
        {"result": None, "error": {"code": -32601, "message": "Method not found"}, "id": 2},
        {"result": None, "error": {"code": -32600, "message": "Invalid Request object"},
         "id": None},
        {"jsonrpc": "2.0", "error": {"code": -8, "message": "Block height out of range"},
         "id": 4},
    ]
    assert call(node, [{"jsonrpc": "2.0", "method": "getblockcount"}]) == (204, None)
    assert call(node, []) == (200, [])


def test_named_parameters_and_argument_checks(node: NodeProcess) -> None:
    def rpc(method: str, params: Any) -> Any:
        return call(node, {"jsonrpc": "2.0", "method": method, "params": params, "id": 1})[1]

    genesis = rpc("getblockhash", [0])["result"]
    assert rpc("getblockhash", {"height": 0})["result"] == genesis
    assert rpc("getblockhash", {"args": [0]})["result"] == genesis
    assert rpc("getblockhash", {"height": 0, "bogus": 1})["error"] == {
        "code": -8, "message": "Unknown named parameter bogus"}
    assert rpc("getblockhash", {"args": [0], "height": 0})["error"]["message"] == (
        "Parameter height specified twice both as positional and named argument")
    error = rpc("getblockhash", [])["error"]
    assert error["code"] == -1 and error["message"].startswith("getblockhash height\n")
    assert rpc("getblockcount", [1])["error"]["code"] == -1
    error = rpc("getblockhash", ["0"])["error"]
    assert error == {"code": -3, "message": 'Wrong type passed:\n{\n    "Position 1 (height)": '
                     '"JSON value of type string is not of expected type number"\n}'}
    assert rpc("getblockhash", [0.5])["error"] == {"code": -1,
                                                   "message": "JSON integer out of range"}
    assert rpc("getblockheader", ["zz"])["error"]["code"] == -8
    assert rpc("help", ["nosuch"])["result"] == "help: unknown command: nosuch"
    assert rpc("help", ["getblockhash"])["result"].startswith("getblockhash height")


def test_ids_and_amounts_round_trip_exactly(node: NodeProcess) -> None:
    marker = "__ctplugin_amount__1.00000000"
    status, reply = call(node, {"method": "echo", "params": [marker], "id": marker})
    assert status == 200 and reply["id"] == marker and reply["result"] == [marker]
    _, _headers, data = post(node, b'{"method":"echojson","params":[0.00000001,1e-8,12345678.'
                                  b'12345678],"id":1}')
    assert b"[0.00000001,1e-8,12345678.12345678]" in data


def test_authentication(node: NodeProcess) -> None:
    status, headers, data = post(node, b'{"method":"getblockcount"}', auth=None)
    assert (status, data) == (401, b"")
    assert headers["www-authenticate"] == 'Basic realm="jsonrpc"'
    started = time.monotonic()
    status, headers, _ = post(node, b'{"method":"getblockcount"}', auth="__cookie__:wrong")
    assert status == 401 and time.monotonic() - started >= 0.25
    assert post(node, b'{"method":"getblockcount"}', auth="carol:nope")[0] == 401
    assert post(node, b'{"method":"getblockcount"}', auth="carol:carols-password")[0] == 200
    assert post(node, b'{"method":"getblockcount"}', auth="carol")[0] == 401
    proxy = AuthServiceProxy(f"http://carol:carols-password@127.0.0.1:{node.port}")
    assert proxy.getblockcount() == 0


def test_http_methods_paths_and_limits(node: NodeProcess) -> None:
    status, _headers, data = post(node, b"", method="GET")
    assert status == 405 and data == b"JSONRPC server handles only POST requests"
    assert post(node, b"{}", path="/rest/chaininfo.json")[0] == 404
    assert post(node, b"{}", path="/x" * 500)[0] == 404
    assert post(node, b"{}", path="/x" * 5000)[0] == 400  # request line over 8192 bytes
    big = {"X-Big": "y" * 9000}
    assert post(node, b"{}", headers=big)[0] == 400
    too_long = {"Content-Length": str(33 * 1024 * 1024)}
    conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=30)
    user, password = node.credentials()
    conn.putrequest("POST", "/")
    conn.putheader("Authorization", "Basic " + base64.b64encode(
        f"{user}:{password}".encode()).decode())
    for key, value in too_long.items():
        conn.putheader(key, value)
    conn.endheaders()
    assert conn.getresponse().status == 413
    conn.close()


def test_content_encoding_is_ignored(node: NodeProcess) -> None:
    """QA: as bitcoind, a Content-Encoding header does not change how the body is read: a
    plain body with ``gzip`` answers normally, a gzip body is not JSON (-32700), never a
    plain-text 500 from a decompressor."""
    for encoding in ("gzip", "deflate", "br"):
        status, reply = call(node, {"method": "getblockcount", "id": 1},
                             headers={"Content-Encoding": encoding})
        assert (status, reply["result"]) == (200, 0)
    status, headers, data = post(node, gzip.compress(b'{"method":"getblockcount","id":1}'),
                                 headers={"Content-Encoding": "gzip"})
    assert status == 500 and headers["content-type"] == "application/json"
    assert json.loads(data)["error"] == {"code": -32700, "message": "Parse error"}


def test_keep_alive(node: NodeProcess) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=30)
    for i in range(5):
        status, _, data = post(node, json.dumps({"method": "getblockcount", "id": i}),
                               connection=conn)
        assert status == 200 and json.loads(data)["id"] == i
    sock = conn.sock
    assert sock is not None  # one socket for all five calls
    conn.close()


def test_python_bitcoinrpc_errors(node: NodeProcess) -> None:
    proxy = node.proxy()
    with pytest.raises(JSONRPCException) as info:
        proxy.getblockhash(5)
    assert info.value.code == -8
    with pytest.raises(JSONRPCException) as info:
        proxy.nosuchmethod()
    assert info.value.code == -32601


def _start(tmp: Path, *args: str) -> NodeProcess:
    return NodeProcess(tmp, *args).start()


def test_work_queue_burst_gets_503_and_accepted_calls_answer(tmp_path: Path) -> None:
    """interface_rpc's case as a bounded burst: two workers, a queue of four, 24 clients at
    once each holding a worker for 0.8 s. The first ``threads + depth`` are admitted, the rest
    are refused with a plain-text 503 at once; every admitted call answers its own id; the node
    serves normally afterwards, and stops promptly with an idle keep-alive client connected."""
    node = _start(tmp_path / "q", "--rpcworkqueue", "4", "--rpcthreads", "2")
    try:
        clients = 24
        results: dict[int, tuple[int, bytes, str]] = {}
        lock = threading.Lock()
        barrier = threading.Barrier(clients)

        def wait_call(i: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=60)
            conn.connect()
            barrier.wait()
            body = json.dumps({"method": "waitfornewblock", "params": [800], "id": i})
            status, headers, data = post(node, body, connection=conn)
            conn.close()
            with lock:
                results[i] = (status, data, headers.get("content-type", ""))

        threads = [threading.Thread(target=wait_call, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(results) == clients
        accepted = {i: r for i, r in results.items() if r[0] == 200}
        refused = [r for r in results.values() if r[0] != 200]
        assert len(accepted) >= 2 + 4 and refused
        assert all(r == (503, b"Work queue depth exceeded", "text/plain") for r in refused)
        for i, (_status, data, content_type) in accepted.items():
            reply = json.loads(data)
            assert content_type == "application/json"
            assert reply["id"] == i and reply["error"] is None
            assert reply["result"] == {"hash": node.call("getblockhash", 0), "height": 0}
        idle = http.client.HTTPConnection("127.0.0.1", node.port, timeout=30)
        assert post(node, b'{"method":"getblockcount","id":1}', connection=idle)[0] == 200
        assert node.process is not None
        post(node, b'{"method":"stop","id":1}')
        assert node.process.wait(8) == 0  # not held for the idle connection's keep-alive
        idle.close()
    finally:
        node.kill()


def test_stop_in_a_batch_and_as_notification(tmp_path: Path) -> None:
    for payload in ([{"method": "getblockcount", "id": 1}, {"method": "stop", "id": 2}],
                    {"jsonrpc": "2.0", "method": "stop"}):
        node = _start(tmp_path / f"s{len(tmp_path.name)}{type(payload).__name__}")
        try:
            status, reply = call(node, payload)
            if isinstance(payload, list):
                assert status == 200 and reply[1]["result"] == "ctplugin stopping"
            else:
                assert (status, reply) == (204, None)
            assert node.process is not None
            assert node.process.wait(30) == 0
            assert not node.cookie_path.exists()  # removed on a clean stop
            assert node.stderr_text() == ""
        finally:
            node.kill()


def test_static_password_makes_no_cookie(tmp_path: Path) -> None:
    node = NodeProcess(tmp_path / "pw", "--rpcuser", "u", "--rpcpassword", "p")
    node.start()
    try:
        assert not node.cookie_path.exists()
        proxy = AuthServiceProxy(node.url(credentials=("u", "p")))
        assert proxy.getblockcount() == 0
        assert post(node, b'{"method":"getblockcount"}', auth="u:q")[0] == 401
        proxy.stop()
        assert node.process is not None and node.process.wait(30) == 0
    finally:
        node.kill()


async def test_peers_outside_the_allow_list_get_403() -> None:
    """Access control runs before anything else (in-process server: on a loopback-only host
    every peer is local, so the allow list is narrowed to ::1 to make 127.0.0.1 a stranger)."""
    import aiohttp

    from rpc.auth import Credentials
    from rpc.server import HttpConfig, RpcHttpServer

    def dispatch(body: bytes, wallet: str | None, user: str) -> tuple[int, bytes | None]:
        return 200, b'{"result":0,"error":null,"id":1}\n'

    server = RpcHttpServer(dispatch, Credentials(user="u", password="p"),
                           HttpConfig(bind=(("127.0.0.1", 0),)))
    await server.start()
    try:
        url = f"http://127.0.0.1:{server.port}/"
        auth = {"Authorization": "Basic " + base64.b64encode(b"u:p").decode()}
        async with aiohttp.ClientSession() as session:
            async with session.post(url, data=b"{}", headers=auth) as response:
                assert response.status == 200
                assert response.headers["Content-Type"] == "application/json"
            server._allowed = (ipaddress.ip_network("::1/128"),)
            server._peer_verdicts.clear()
            async with session.post(url, data=b"{}", headers=auth) as response:
                assert response.status == 403 and await response.read() == b""
            async with session.get(url) as response:
                assert response.status == 403  # before 405 and before 401
    finally:
        await server.close()


def test_daemon_mode_returns_when_ready(tmp_path: Path) -> None:
    datadir = tmp_path / "daemon"
    port = free_port()
    result = subprocess.run([sys.executable, "-m", "apps.main", "node", "--datadir", str(datadir),
                             "--rpcport", str(port), "--daemon"], cwd=REPO, timeout=120,
                            capture_output=True, text=True)
    # bitcoind's "Bitcoin Core starting" before it goes to the background, then nothing
    assert (result.returncode, result.stdout, result.stderr) == (0, "ctplugin node starting\n",
                                                                 "")
    node = NodeProcess(datadir, port=port)
    try:
        assert node.call("getblockcount") == 0  # answers at once: it returned when ready
        assert node.call("stop") == "ctplugin stopping"
        deadline = time.monotonic() + 30
        while node.cookie_path.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not node.cookie_path.exists()
    finally:
        with contextlib.suppress(Exception):
            node.call("stop")
    again = subprocess.run([sys.executable, "-m", "apps.main", "node", "--datadir", str(datadir),
                            "--rpcport", str(port), "--rpcauth", "bad"], cwd=REPO, timeout=60,
                           capture_output=True, text=True)
    assert again.returncode == 1 and "Invalid -rpcauth" in again.stderr


def test_a_second_node_on_the_same_datadir_refuses(node: NodeProcess) -> None:
    cookie = node.cookie_path.read_bytes()
    result = subprocess.run([sys.executable, "-m", "apps.main", "node",
                             "--datadir", str(node.datadir), "--rpcport", str(free_port())],
                            cwd=REPO, timeout=60, capture_output=True, text=True)
    assert result.returncode == 1 and "Cannot obtain a lock on data directory" in result.stderr
    assert node.cookie_path.read_bytes() == cookie  # the running node's cookie is untouched
    assert node.call("getblockcount") == 0
