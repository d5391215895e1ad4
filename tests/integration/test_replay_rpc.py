"""The replay's JSON-RPC source against an elementsd-style HTTP server: batched getblockhash /
getblock HASH 0, user/password and cookie authentication, errors named."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ctplugin.elements import parse_block
from regtest.params import CTREGTEST, select_chain
from replay.config import ReplayConfig
from replay.driver import replay
from replay.engine import Engine
from replay.sources import RpcAuthError, RpcSource, SourceError, read_cookie
from rpcclient import RPCError


class ElementsdLike(BaseHTTPRequestHandler):
    """Serves getblockcount / getblockhash / getblock (verbosity 0) of ``self.server.blocks``
    with bitcoind's conventions: Basic auth (401 without), JSON-RPC 1.0 replies, batches."""

    server: Any

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        expected = "Basic " + base64.b64encode(self.server.auth.encode()).decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="jsonrpc"')
            self.end_headers()
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        reply = [self.answer(r) for r in body] if isinstance(body, list) else self.answer(body)
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        blocks: list[bytes] = self.server.blocks
        method, params = request["method"], request.get("params", [])
        result: object = None
        error = None
        if method == "getblockcount":
            result = len(blocks) - 1
        elif method == "getblockhash" and 0 <= params[0] < len(blocks):
            result = parse_block(blocks[params[0]]).hash_hex
        elif method == "getblock" and params[1] == 0:
            by_hash = {parse_block(b).hash_hex: b for b in blocks}
            if params[0] in by_hash:
                result = by_hash[params[0]].hex()
            else:
                error = {"code": -5, "message": "Block not found"}
        else:
            error = {"code": -8, "message": "Block height out of range"}
        return {"result": result, "error": error, "id": request["id"]}


@pytest.fixture
def server(replay_blocks: list[bytes]) -> Iterator[Any]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ElementsdLike)
    httpd.blocks = replay_blocks  # type: ignore[attr-defined]
    httpd.auth = "__cookie__:s3cret"  # type: ignore[attr-defined]
    httpd.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def url(httpd: Any) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}/"


def test_rpc_source_reads_blocks_in_batches(server: Any, replay_blocks: list[bytes],
                                            tmp_path: Path) -> None:
    (tmp_path / ".cookie").write_text("__cookie__:s3cret")
    source = RpcSource(url(server), read_cookie(tmp_path / ".cookie"), batch_size=4)
    assert source.last_height() == len(replay_blocks) - 1
    got = list(source.blocks(1))
    assert [b.raw for b in got] == replay_blocks[1:]
    assert got[0].where.startswith(f"node http://127.0.0.1:{server.server_address[1]}/ height 1")
    batches = [r for r in server.requests if isinstance(r, list) and len(r) > 1]
    assert batches and max(len(b) for b in batches) == 4  # one HTTP request per batch
    source.close()


def test_replay_from_rpc_matches_one_by_one(server: Any, replay_blocks: list[bytes],
                                            tmp_path: Path) -> None:
    with Engine.open(tmp_path / "ref", select_chain(CTREGTEST)) as engine:
        for raw in replay_blocks[1:]:
            engine.node.submit_block(raw).connected()
        expected = (engine.node.tip.hash[::-1].hex(), engine.utxo_summary().hash_hex)
    for mode in ("block", "window"):
        source = RpcSource(url(server).replace("http://", "http://__cookie__:s3cret@"))
        report = replay(source, tmp_path / mode,
                        ReplayConfig(mode=mode, window=2, show_progress=False))
        assert (report.tip, report.utxo_set_hash) == expected
        assert "s3cret" not in report.source  # credentials never printed


def test_rpc_auth_and_errors_are_named(server: Any) -> None:
    with pytest.raises(RpcAuthError, match="refused the credentials"):
        RpcSource(url(server), ("__cookie__", "wrong")).last_height()
    with pytest.raises(RpcAuthError):
        RpcSource(url(server)).last_height()
    with pytest.raises(SourceError, match="expected http://HOST:PORT"):
        RpcSource("ftp://127.0.0.1/")
    source = RpcSource(url(server), ("__cookie__", "s3cret"))
    with pytest.raises(SourceError, match=r"getblockhash \[99\] failed: Block height out of "
                                          r"range \(code -8\)"):
        source.batch([("getblockhash", [99])])
    with pytest.raises(RPCError, match=r"Block height out of range \(code -8\)"):
        source.client.call("getblockhash", 99)  # the client's own typed error


def test_an_unreachable_node_is_a_source_error() -> None:
    import socket

    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SourceError, match="unreachable"):
        RpcSource(f"http://127.0.0.1:{port}/").last_height()


# ------------------------------------------------------------------------------------------------
# Our own node (``ctplugin node`` as a subprocess), cookie authentication, every mode
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def running_node(replay_blocks: list[bytes], tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[Any]:
    from regtest.params import NETWORK_MAGIC
    from rpc.process import NodeProcess
    from validator import write_chain

    root = tmp_path_factory.mktemp("node")
    write_chain(root / "chain.dat", [parse_block(b) for b in replay_blocks], NETWORK_MAGIC)
    node = NodeProcess(root / "node", "--load-chain", str(root / "chain.dat"))
    node.start()
    try:
        yield node
    finally:
        node.stop()


@pytest.mark.parametrize("mode", ["single", "block", "window", "workers", "dask"])
def test_replay_from_a_running_node_matches_one_by_one(
        mode: str, running_node: Any, replay_blocks: list[bytes], tmp_path: Path) -> None:
    assert running_node.call("getblockcount") == len(replay_blocks) - 1
    with Engine.open(tmp_path / "ref", select_chain(CTREGTEST)) as engine:
        for raw in replay_blocks[1:]:
            engine.node.submit_block(raw).connected()
        expected = (engine.node.tip.hash[::-1].hex(), engine.utxo_summary().hash_hex)
    source = RpcSource(f"http://127.0.0.1:{running_node.port}/",
                       read_cookie(running_node.cookie_path), batch_size=3)
    report = replay(source, tmp_path / mode,
                    ReplayConfig(mode=mode, window=2, workers=2, task_proofs=6,
                                 dask_processes=False, show_progress=False))
    source.close()
    assert (report.tip, report.utxo_set_hash) == expected
    assert report.tip == running_node.call("getbestblockhash")
    # one display order for the one hash (replay once printed it byte-reversed)
    assert report.utxo_set_hash == running_node.call("gettxoutsetinfo")["hash_serialized_3"]


def test_ctplugin_replay_reads_a_node_with_its_cookie(running_node: Any, tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    done = subprocess.run(
        [sys.executable, "-m", "apps.main", "replay", f"http://127.0.0.1:{running_node.port}",
         "--rpccookiefile", str(running_node.cookie_path), "--datadir", str(tmp_path / "d"),
         "--quiet", "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["tip"] == running_node.call("getbestblockhash")
    assert report["source"] == f"node http://127.0.0.1:{running_node.port}/"
    # The cookie found from the node's data directory and chain, as elements-cli finds it.
    found = subprocess.run(
        [sys.executable, "-m", "apps.main", "replay", f"http://127.0.0.1:{running_node.port}",
         "--rpcdatadir", str(running_node.datadir), "--datadir", str(tmp_path / "f"),
         "--quiet", "--json", str(tmp_path / "f.json")],
        capture_output=True, text=True, cwd=REPO, timeout=300)
    assert found.returncode == 0, found.stderr
    assert json.loads((tmp_path / "f.json").read_text())["tip"] == report["tip"]
    wrong = subprocess.run(
        [sys.executable, "-m", "apps.main", "replay", f"http://127.0.0.1:{running_node.port}",
         "--rpcuser", "nobody", "--rpcpassword", "wrong", "--datadir", str(tmp_path / "e")],
        capture_output=True, text=True, cwd=REPO, timeout=300)
    assert wrong.returncode == 2 and "refused the credentials" in wrong.stderr
    assert not (tmp_path / "e").exists()  # nothing created for a source that cannot be read


def test_replay_reads_a_nodes_own_blocks_directory(running_node: Any, tmp_path: Path) -> None:
    """The node's blk*.dat files (Core framing, rev*.dat beside them) are a blocks/ source:
    Core's -reindex-chainstate, from a live node's data directory."""
    from replay.sources import BlocksDirSource

    source = BlocksDirSource(running_node.netdir / "blocks", select_chain(CTREGTEST).genesis_hash)
    report = replay(source, tmp_path / "d", ReplayConfig(mode="window", show_progress=False))
    assert report.tip == running_node.call("getbestblockhash")
