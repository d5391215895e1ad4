"""``ctplugin audit``: real Elements/Liquid data passes (every range proof; surjection proofs
and balances where the spent outputs are known, from a prevouts file or a node's
``getrawtransaction``), tampered copies fail naming transaction and output, and every SOURCE
form works: transaction hex, stdin, vectors files, files of raw blocks. ``ctplugin
elements check`` verifies every range proof too."""

from __future__ import annotations

import base64
import io
import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from apps.audit import main as audit_main
from apps.elements import main as elements_main
from apps.main import main as ctplugin_main
from ctplugin.elements import Transaction
from regtest.builder import build_demo_chain
from regtest.params import CTREGTEST_BORROMEAN, NETWORK_MAGIC, POLICY_ASSET, select_chain
from tests.conftest import FIXTURES, SHARED, load_json, shared_file, shared_path
from validator import write_chain

VECTORS = SHARED / "elements-vectors"


def _file(name: str, fixture: str) -> Path:
    path = shared_file("elements-vectors", name)
    return path if path.exists() else FIXTURES / fixture


TRANSACTIONS = _file("transactions.json", "elements_transactions.json")
BLOCKS = _file("blocks.json", "elements_blocks.json")
PREVOUTS = VECTORS / "known_prevouts.json"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = audit_main(list(args))
    return code, capsys.readouterr().out


@pytest.fixture(scope="module")
def chain() -> Any:
    return build_demo_chain(n_blocks=3, txs_per_block=2, seed=b"audit chain seed",
                            params=select_chain(CTREGTEST_BORROMEAN))


def test_shared_transactions_pass_with_known_prevouts(capsys: pytest.CaptureFixture[str]) -> None:
    shared_path("elements-vectors", PREVOUTS.name)
    code, out = run(capsys, str(TRANSACTIONS), "--prevouts", str(PREVOUTS))
    assert code == 0, out
    rows = [line for line in out.splitlines() if line[:64].isalnum() and len(line) > 64]
    assert len(rows) == 88
    fully_checked = [r for r in rows if r.split()[-1] == "ok" and "ok (" in r]
    assert len(fully_checked) >= 9  # balances and surjection proofs where prevouts are known
    assert "0 transactions with failures" in out and "110 range proofs" in out


def test_shared_blocks_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, str(BLOCKS))
    assert code == 0, out
    assert "0 transactions with failures" in out


def _tampered(tmp_path: Path, mutate: Any) -> tuple[Path, str, int]:
    """A copy of the transactions file with the first proof-carrying transaction changed."""
    data = load_json(TRANSACTIONS)
    for entry in data["transactions"]:
        tx = Transaction.from_hex(entry["hex"])
        j = next((j for j, o in enumerate(tx.outputs) if o.range_proof), None)
        if j is not None:
            break
    else:
        pytest.skip("no range proof in the vectors")
    outs = list(tx.outputs)
    outs[j] = mutate(outs[j])
    bad = Transaction(version=tx.version, inputs=tx.inputs, outputs=tuple(outs),
                      locktime=tx.locktime)
    entry["hex"] = bad.serialize().hex()
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(data))
    return path, bad.txid_hex, j


def test_a_tampered_proof_fails_naming_transaction_and_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def flip(out: Any) -> Any:
        proof = bytearray(out.range_proof)
        proof[-1] ^= 1
        return replace(out, range_proof=bytes(proof))

    path, txid, j = _tampered(tmp_path, flip)
    code, out = run(capsys, str(path))
    assert code == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(txid))
    assert "1 failed" in lines[at]
    assert lines[at + 1].strip() == f"FAIL output {j}: bad-txns-rangeproof-invalid"
    # the elements checker reports it too
    assert elements_main(["check", str(path)]) == 1
    assert f"output {j}: range proof does not verify" in capsys.readouterr().out


def test_our_chains_bulletproofs_are_audited_not_misread(tmp_path: Path) -> None:
    """A Bulletproof chain (our regtest default) audits clean: its proofs are verified as
    Bulletproofs (QA: they were read as Borromean headers and all "failed"), and a tampered one
    is named."""
    from validator import audit_transactions

    chain = build_demo_chain(n_blocks=2, txs_per_block=2, seed=b"audit bulletproof seed")
    txs = [tx for block in chain.blocks for tx in block.transactions]
    results = audit_transactions(txs, {}, POLICY_ASSET, threads=1, chain_outputs=True)
    assert not [r.problems for r in results if r.failed]
    assert sum(r.range_ok for r in results) == sum(
        1 for tx in txs for out in tx.outputs if out.range_proof) > 0
    t = next(i for i, tx in enumerate(txs) if not tx.is_coinbase)
    j = next(k for k, out in enumerate(txs[t].outputs) if out.range_proof)
    proof = bytearray(txs[t].outputs[j].range_proof)
    proof[40] ^= 1  # inside the stored scalars: well-formed, the equation no longer holds
    outs = list(txs[t].outputs)
    outs[j] = replace(outs[j], range_proof=bytes(proof))
    txs[t] = replace(txs[t], outputs=tuple(outs))
    results = audit_transactions(txs, {}, POLICY_ASSET, threads=1, chain_outputs=True)
    assert [(i, r.problems) for i, r in enumerate(results) if r.range_failed] == [
        (t, [f"output {j}: bad-txns-rangeproof-invalid"])]


def test_a_proof_on_an_explicit_value_and_a_missing_proof_fail(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _, j = _tampered(tmp_path, lambda out: replace(out, range_proof=b""))
    code, out = run(capsys, str(path))
    assert code == 1 and f"FAIL output {j}: bad-txns-rangeproof-missing" in out
    data = load_json(TRANSACTIONS)
    tx = Transaction.from_hex(data["transactions"][0]["hex"])
    k = next(k for k, o in enumerate(tx.outputs) if isinstance(o.value, int))
    outs = list(tx.outputs)
    outs[k] = replace(outs[k], range_proof=b"\x00" * 73)
    bad = Transaction(version=tx.version, inputs=tx.inputs, outputs=tuple(outs),
                      locktime=tx.locktime)
    code, out = run(capsys, bad.serialize().hex())
    assert code == 1 and f"FAIL output {k}: bad-txns-rangeproof-unexpected" in out


def test_hex_and_stdin_sources(capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    hexes = [e["hex"] for e in load_json(TRANSACTIONS)["transactions"][:3]]
    code, out = run(capsys, hexes[0])
    assert code == 0 and "1 transactions" in out
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(hexes)))
    code, out = run(capsys, "-")
    assert code == 0 and "3 transactions" in out


def test_a_file_of_raw_blocks(tmp_path: Path, chain: Any,
                              capsys: pytest.CaptureFixture[str]) -> None:
    """Our Borromean regtest chain as a blk-framed file: transactions spend each other's
    outputs (genesis included), so every balance and surjection proof is checked."""
    path = tmp_path / "chain.dat"
    write_chain(path, chain.blocks, NETWORK_MAGIC)
    policy = POLICY_ASSET[::-1].hex()
    code, out = run(capsys, str(path), "--policy-asset", policy)
    assert code == 0, out
    assert "unknown" not in out and "ok (2/2)" in out
    # one proof of one block tampered: its transaction and output are named
    blocks = list(chain.blocks)
    block = blocks[2]
    tx = block.transactions[1]
    proof = bytearray(tx.outputs[0].range_proof)
    proof[200] ^= 0x10
    outs = (replace(tx.outputs[0], range_proof=bytes(proof)), *tx.outputs[1:])
    bad_tx = Transaction(version=tx.version, inputs=tx.inputs, outputs=outs,
                         locktime=tx.locktime)
    blocks[2] = replace(block, transactions=(block.transactions[0], bad_tx,
                                             *block.transactions[2:]))
    write_chain(path, blocks, NETWORK_MAGIC)
    code, out = run(capsys, str(path), "--policy-asset", policy)
    assert code == 1
    assert f"{bad_tx.txid_hex}  1 ok, 1 failed" in out
    assert "FAIL output 0: bad-txns-rangeproof-invalid" in out
    # one block hex per line works too
    lines = tmp_path / "blocks.txt"
    lines.write_text("\n".join(b.serialize().hex() for b in chain.blocks))
    assert run(capsys, str(lines), "--policy-asset", policy)[0] == 0


class _Node(BaseHTTPRequestHandler):
    """An elementsd-like JSON-RPC endpoint serving ``getrawtransaction`` (batches, auth)."""

    txs: ClassVar[dict[str, str]] = {}
    auth = "Basic " + base64.b64encode(b"user:secret").decode()

    def do_POST(self) -> None:
        if self.headers.get("Authorization") != self.auth:
            self.send_response(401)
            self.end_headers()
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        calls = body if isinstance(body, list) else [body]
        replies = []
        for call in calls:
            found = self.txs.get(call["params"][0]) if call["method"] == "getrawtransaction" \
                else None
            replies.append({"id": call["id"], "result": found, "error": None if found else
                            {"code": -5, "message": "No such mempool or blockchain transaction"}})
        data = json.dumps(replies if isinstance(body, list) else replies[0]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def rpc_node(chain: Any) -> Iterator[str]:
    _Node.txs = {tx.txid_hex: tx.serialize().hex() for b in chain.blocks for tx in b.transactions}
    server = HTTPServer(("127.0.0.1", 0), _Node)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_spent_outputs_from_a_node(rpc_node: str, chain: Any,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    tx = chain.blocks[2].transactions[1]
    policy = POLICY_ASSET[::-1].hex()
    host = rpc_node.removeprefix("http://")
    code, out = run(capsys, tx.serialize().hex(), "--policy-asset", policy,
                    "--rpc", f"http://user:secret@{host}")
    assert code == 0, out
    assert "ok (2/2)" in out and out.split("\n")[1].split()[-1] == "ok"
    # without the node the same transaction is unknown, not failed
    code, out = run(capsys, tx.serialize().hex(), "--policy-asset", policy)
    assert code == 0 and "unknown" in out
    # wrong credentials: a clear error, exit 2
    code = audit_main([tx.serialize().hex(), "--rpc", f"http://user:wrong@{host}"])
    assert code == 2 and "refused the credentials" in capsys.readouterr().err


def test_unreadable_sources_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_main(["zz-not-hex"]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"neither": []}')
    assert audit_main([str(bad)]) == 2
    raw = tmp_path / "raw.dat"
    raw.write_bytes(b"\xfa\xbf\xb5\xda" + (100).to_bytes(4, "little") + b"\x00" * 10)
    assert audit_main([str(raw)]) == 2
    assert audit_main([str(TRANSACTIONS), "--prevouts", str(tmp_path / "missing.json")]) == 2
    assert "ctplugin audit:" in capsys.readouterr().err


@pytest.mark.parametrize(("source", "prevouts", "message"), [
    (None, None, "no such file"),
    ('{"transactions": 5}', None, "transactions must be a list"),
    ('{"transactions": [{"hex": 5}]}', None, "transaction 0: hex must be a hex string"),
    ('{"transactions": [{"hex": "zz"}]}', None, "transaction 0: hex is not hex"),
    ('{"transactions": [7]}', None, "transaction 0 is not an object"),
    ('{"blocks": [{"hex": "00"}]}', None, "block 0: "),
    ("[1,2", None, "invalid JSON at line 1"),
    ("[1, 2]", None, "a vectors file is a JSON object"),
    ("abc", None, "item 0 is not hex"),
    ("ab", None, "item 0 (neither a transaction nor a block): "),
    ("zz-not-hex", None, "no such file, and not transaction or block hex"),
    ("tx", "[]", "a prevouts file is a JSON object with 'prevouts'"),
    ("tx", '{"prevouts": "x"}', "prevouts must be a list"),
    ("tx", '{"prevouts": [5]}', "record 0 is not an object"),
    ("tx", '{"prevouts": [{"assetcommitment": "", "amount_btc": 1}]}',
     "record 0: missing key 'asset'"),
    ("tx", '{"prevouts": [{"asset": "00", "amount_btc": [], "scriptPubKey": ""}]}',
     "record 0: amount_btc is not a number"),
    ("tx", '{"prevouts": [{"asset": "00", "amount_btc": 1, "scriptPubKey": "",'
           ' "prevout_txid": "00", "vout": 0}]}', "record 0: "),
    ("tx", "{", "invalid JSON at line 1"),
])
def test_unreadable_input_is_named_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               source: str | None, prevouts: str | None,
                                               message: str) -> None:
    """What is wrong, in the input's own terms (QA: Python internals leaked, a traceback for a
    prevouts record that is not an object, a missing file read as hex)."""
    argv = [str(tmp_path / "nonexistent.json")]
    if source == "tx":
        argv = [str(TRANSACTIONS)]
    elif source is not None and source.startswith(("{", "[")):
        (tmp_path / "source.json").write_text(source)
        argv = [str(tmp_path / "source.json")]
    elif source is not None:
        argv = [source]
    if prevouts is not None:
        (tmp_path / "prevouts.json").write_text(prevouts)
        argv += ["--prevouts", str(tmp_path / "prevouts.json")]
    assert audit_main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctplugin audit: ") and message in err, err
    assert "Traceback" not in err


def test_registered_as_a_ctplugin_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert ctplugin_main(["audit", str(BLOCKS)]) == 0
    assert "transactions with failures" in capsys.readouterr().out


def test_table_says_none_for_no_range_proofs_and_the_summary_counts_every_check() -> None:
    """A transaction without range proofs (a coinbase, explicit amounts) is "none", not "0 ok";
    the last line counts the surjection proofs and balances checked, and the transactions whose
    spent outputs were unknown."""
    from apps.audit import render
    from validator import TransactionAudit

    results = [TransactionAudit("a" * 64, surjection="-", balance="-"),
               TransactionAudit("b" * 64, range_ok=2, surjection_ok=2, surjection="ok",
                                balance="ok"),
               TransactionAudit("c" * 64, range_ok=1, range_failed=1)]
    lines = render(results).splitlines()
    assert lines[1].split()[1:] == ["none", "-", "-"]
    assert lines[2].split()[1:] == ["2", "ok", "ok", "(2/2)", "ok"]
    assert lines[-1] == ("3 transactions, 4 range proofs, 2 surjection proofs, 1 balances "
                         "checked, 1 transactions lacking spent outputs, 1 transactions with "
                         "failures")
