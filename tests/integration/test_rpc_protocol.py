"""The JSON-RPC layer in-process: body handling, the method table's binding rules, dispatch
errors, the CLI's conversions and printing (the subprocess tests are in test_rpc_http.py)."""

from __future__ import annotations

import json
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import rpc.methods  # noqa: F401  (registers the methods)
from apps.cli import result_text
from rpc.config import parse_config
from rpc.context import NodeContext
from rpc.convert import ParamError, build_params, convert, univalue_write
from rpc.errors import RpcCode, RpcError
from rpc.jsonrpc import MAX_JSON_DEPTH, decode_json, handle_body
from rpc.registry import REGISTRY, Arg, Kind, Method, optional, required


def echo_execute(method: str, params: Any) -> Any:
    if method == "fail":
        raise RpcError(RpcCode.INVALID_PARAMETER, "bad")
    if method == "nosuch":
        raise RpcError(RpcCode.METHOD_NOT_FOUND, "Method not found")
    return params


def body(status_reply: tuple[int, bytes | None]) -> Any:
    status, data = status_reply
    return status, (json.loads(data) if data is not None else None)


def test_ids_are_never_rewritten() -> None:
    """Regression: an id that looks like the old amount marker stays a string."""
    marker = "__ctplugin_amount__1.00000000"
    status, reply = body(handle_body(json.dumps({"method": "x", "params": [marker],
                                                 "id": marker}).encode(), echo_execute))
    assert status == 200 and reply == {"result": [marker], "error": None, "id": marker}


def test_amounts_keep_their_text() -> None:
    _, data = handle_body(b'{"method":"x","params":[0.00000001,1.10,1e-8],"id":1}',
                          echo_execute)
    assert data is not None and b"[0.00000001,1.10,1e-8]" in data


def test_deep_nesting_is_a_parse_error_not_a_500_page() -> None:
    """Regression: a deeply nested body answers a JSON-RPC -32700, not a plain-text 500."""
    for depth in (MAX_JSON_DEPTH + 1, 100_000):
        status, reply = body(handle_body(b"[" * depth + b"]" * depth, echo_execute))
        assert status == 500
        assert reply == {"result": None, "error": {"code": -32700, "message": "Parse error"},
                         "id": None}
    nested: Any = []
    for _ in range(MAX_JSON_DEPTH - 2):  # the object, then MAX_JSON_DEPTH - 1 arrays
        nested = [nested]
    assert decode_json(json.dumps({"params": nested})) is not None
    with pytest.raises(RpcError):
        decode_json(json.dumps({"params": [nested]}))


def test_notifications_and_batches() -> None:
    assert handle_body(b'{"jsonrpc":"2.0","method":"fail"}', echo_execute) == (204, None)
    status, reply = body(handle_body(b'[{"jsonrpc":"2.0","method":"fail","id":1},'
                                     b'{"method":"nosuch","id":2},{"jsonrpc":"2.0","method":"x"}]',
                                     echo_execute))
    assert status == 200 and [r["error"]["code"] for r in reply] == [-8, -32601]
    assert "result" not in reply[0] and reply[1]["result"] is None


@pytest.fixture
def context(tmp_path: Path) -> NodeContext:
    ctx = NodeContext(parse_config(["--datadir", str(tmp_path)], "test", None))
    ctx.set_warmup(None)
    return ctx


def test_warmup_comes_before_method_lookup(tmp_path: Path) -> None:
    ctx = NodeContext(parse_config(["--datadir", str(tmp_path)], "test", None))
    for method in ("getblockcount", "nosuchmethod"):
        with pytest.raises(RpcError) as info:
            ctx.execute(method, [])
        assert (info.value.code, info.value.message) == (-28, "Loading block index…")
    status, reply = body(ctx.dispatch(b'{"jsonrpc":"2.0","method":"getblockcount","id":1}',
                                      None, "u"))
    assert status == 200 and reply["error"]["code"] == -28
    status, reply = body(ctx.dispatch(b'{"method":"getblockcount","id":1}', None, "u"))
    assert status == 500 and reply["error"]["code"] == -28


def test_stop_from_a_batch_or_a_notification_stops(context: NodeContext) -> None:
    """Regression: stop works however it is sent."""
    for payload in (b'[{"method":"stop","id":1}]', b'{"jsonrpc":"2.0","method":"stop"}'):
        context.shutdown.clear()
        requested = threading.Event()
        context.on_shutdown_request = requested.set
        context.dispatch(payload, None, "u")
        assert requested.wait(5) and context.shutdown.is_set()


def test_exceptions_escaping_a_method_are_json_errors(context: NodeContext) -> None:
    """Regression: a ValueError inside a method is a JSON-RPC -1 reply with its message."""
    def broken(call: Any) -> None:
        raise ValueError("something broke")

    REGISTRY.add(Method("_test_broken", "hidden", broken, hidden=True))
    try:
        status, reply = body(context.dispatch(b'{"method":"_test_broken","id":5}', None, "u"))
        assert status == 500
        assert reply == {"result": None, "error": {"code": -1, "message": "something broke"},
                         "id": 5}
        status, reply = body(context.dispatch(b'{"jsonrpc":"2.0","method":"_test_broken",'
                                              b'"id":5}', None, "u"))
        assert status == 200 and reply["error"]["code"] == -1
    finally:
        del REGISTRY.methods["_test_broken"]


def _method(*args: Arg) -> Method:
    return Method("m", "test", lambda call, *a: a, tuple(args), "Does m.")


def test_binding_rules() -> None:
    m = _method(required("a", Kind.INT), optional("b|bee", Kind.STR, "x"),
                optional("c", Kind.AMOUNT))
    assert m.bind([1]) == [1, "x", None]
    assert m.bind({"a": 1, "bee": "y"}) == [1, "y", None]
    assert m.bind({"args": [1], "c": "0.5"}) == [1, "x", "0.5"]
    assert m.bind({"a": 2, "c": 3}) == [2, "x", 3]
    for params, code in (([], -1), ([1, "x", 1, 2], -1), (["1"], -3), ([True], -3),
                         ([1.5], -1), ([1, 5], -3), ({"a": 1, "d": 0}, -8),
                         ({"args": [1], "a": 1}, -8), ([None], -3)):
        with pytest.raises(RpcError) as info:
            m.bind(params)
        assert info.value.code == code, params
    with pytest.raises(RpcError) as info:
        m.bind([1, 2, []])
    assert info.value.message == ('Wrong type passed:\n{\n    "Position 2 (b|bee)": "JSON value '
                                  'of type number is not of expected type string",\n    '
                                  '"Position 3 (c)": "JSON value of type array is not of '
                                  'expected type number"\n}')
    assert m.help_text().startswith('m a ( "b" c )\n\nDoes m.\n\nArguments:\n1. a')


def test_every_method_has_help_and_a_consistent_signature() -> None:
    for method in REGISTRY.methods.values():
        text = method.help_text()
        assert text.startswith(method.name)
        names = [a.name for a in method.args]
        assert len(set(names)) == len(names), method.name
        required_after_optional = any(a.required for a in method.args[
            next((i for i, a in enumerate(method.args) if not a.required), len(method.args)):])
        assert not required_after_optional, method.name


def test_cli_conversions_follow_the_method_table() -> None:
    assert build_params("getblockhash", ["5"], False) == [5]
    assert build_params("getnewaddress", ["123"], False) == ["123"]  # a label: a string
    assert build_params("sendtoaddress", ["el1x", "0.1"], False) == ["el1x", Decimal("0.1")]
    assert build_params("echo", ["[1]"], False) == ["[1]"]
    assert build_params("echojson", ["[1]"], False) == [[1]]
    assert build_params("unknownmethod", ["[1]", "abc"], False) == [[1], "abc"]
    assert build_params("getblock", ["blockhash=00", "verbosity=2"], True) == {
        "blockhash": "00", "verbosity": 2}
    assert build_params("getblock", ["00", "verbosity=2"], True) == {"args": ["00"],
                                                                    "verbosity": 2}
    with pytest.raises(ParamError, match="Error parsing JSON: x"):
        convert("getblockhash", "x", position=0)


def test_cli_prints_like_bitcoin_cli() -> None:
    assert result_text(None) == ""
    assert result_text("text") == "text"
    assert result_text(5) == "5"
    assert result_text([]) == "[\n]"
    value = decode_json('{"a": {}, "b": [1, 0.00000001], "c": "é"}')
    assert univalue_write(value) == (
        '{\n  "a": {\n  },\n  "b": [\n    1,\n    0.00000001\n  ],\n  "c": "é"\n}')


def test_block_template_by_ancestor_fee_rate() -> None:
    """Core's selection: best package fee rate first, parents before children, the weight
    limit respected, fees summed per asset for the coinbase."""
    from types import SimpleNamespace

    from ctplugin.elements import Transaction, TxIn, TxOut
    from rpc.mining import select_transactions

    asset = bytes(32)

    def tx(tag: int, parent: Transaction | None = None) -> Transaction:
        prev = parent.txid if parent is not None else bytes([tag]) * 32
        return Transaction(version=2, inputs=(TxIn(prevout_hash=prev, prevout_index=0),),
                           outputs=(TxOut(asset=asset, value=1000, script_pubkey=b"\x51"),))

    low, high = tx(1), tx(2)
    parent = tx(3)
    child = tx(4, parent)  # a poor parent with a rich child: the package goes in together
    entries = [SimpleNamespace(tx=t, fees={asset: fee}, weight=t.weight) for t, fee in
               ((low, 10), (high, 500), (parent, 1), (child, 5000))]
    chosen, fees = select_transactions(entries, asset)  # type: ignore[arg-type]
    assert chosen == [low, high, parent, child]  # everything fits: the pool, in its order
    assert fees == {asset: 5511}
    limit = 3 * low.weight  # room for three of the four
    chosen, fees = select_transactions(entries, asset, max_weight=limit)  # type: ignore[arg-type]
    assert chosen == [parent, child, high]
    assert fees == {asset: 5501}
    chosen, _ = select_transactions(entries, asset, max_weight=high.weight)  # type: ignore[arg-type]
    assert chosen == [high]  # the package does not fit; the next best single does


def test_lone_surrogates_are_a_parse_error() -> None:
    """QA: ``"\\ud800"`` is half a character: -32700 at parse time (UniValue's verdict), never a
    plain-text 500 from the reply's encoder, never a wallet write that cannot be encoded."""
    for payload in (b'{"method":"echo","params":["\\ud800"],"id":1}',
                    b'{"method":"echo","params":[],"id":"\\udfff"}',
                    b'{"method":"echo","params":{"\\udc00x":1},"id":1}',
                    b'[{"method":"echo","params":[[{"a":["\\uDBFF"]}]],"id":1}]'):
        status, reply = body(handle_body(payload, echo_execute))
        assert status == 500
        assert reply == {"result": None, "error": {"code": -32700, "message": "Parse error"},
                         "id": None}
    status, reply = body(handle_body(b'{"method":"echo","params":["\\ud83d\\ude00 \\u00e9"],'
                                     b'"id":1}', echo_execute))
    assert status == 200 and reply["result"] == ["\U0001f600 \u00e9"]


def test_ports_and_endpoints_are_checked_when_parsing(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """QA: an impossible port is bitcoind's one-line error and exit 1 before anything starts
    (it was a bind() OverflowError traceback, or with --daemon nothing at all)."""
    from rpc.daemon import StartupError, http_config

    cases = ((["--rpcport", "99999"], "Error: Invalid port specified in -rpcport: '99999'"),
             (["--rpcport=0"], "Error: Invalid port specified in -rpcport: '0'"),
             (["--rpcport=-1"], "Error: Invalid port specified in -rpcport: '-1'"),
             (["--zmqpubhashblock", "tcp://127.0.0.1:99999"],
              "Error: Invalid address specified in -zmqpubhashblock: 'tcp://127.0.0.1:99999'"),
             (["--zmqpubrawtx", "udp://127.0.0.1:5"],
              "Error: Invalid address specified in -zmqpubrawtx: 'udp://127.0.0.1:5'"))
    for argv, message in cases:
        with pytest.raises(SystemExit) as info:
            parse_config(["--datadir", str(tmp_path), *argv], "ctplugin node", None)
        assert info.value.code == 1
        assert capsys.readouterr().err.startswith(message), argv
    for spec in ("127.0.0.1:70000", "[::1]:0", "127.0.0.1:x"):
        config = parse_config(["--datadir", str(tmp_path), "--rpcbind", spec,
                               "--rpcallowip", "127.0.0.1"], "ctplugin node", None)
        with pytest.raises(StartupError, match="Invalid port specified in -rpcbind"):
            http_config(config)
    config = parse_config(["--datadir", str(tmp_path), "--rpcbind", "[::1]:17040",
                           "--rpcallowip", "::1", "--zmqpubsequence", "ipc:///tmp/x"],
                          "ctplugin node", None)
    assert http_config(config).bind == (("::1", 17040),)


def test_par_sets_the_kernel_threads_as_cores_par(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """QA: `ctplugin node --par N` (the thread count is set like Core's -par):
    0 = every core, N > 0 = N threads, N < 0 leaves -N cores free (at least one thread); out of
    range is a usage error at parsing; the node applies it before loading its chain."""
    import os

    from ctplugin.secp256k1 import kernel
    from rpc.startup import close_node, open_node

    def config(*argv: str) -> Any:
        return parse_config(["--datadir", str(tmp_path / "d"), *argv], "ctplugin node", None)

    assert config().kernel_threads == 0
    assert config("--par", "3").kernel_threads == 3
    assert config("--par=-1").kernel_threads == max(1, (os.cpu_count() or 1) - 1)
    assert config("--par=-64").kernel_threads == 1
    for bad in ("65", "-65", "two"):
        with pytest.raises(SystemExit) as info:
            config("--par", bad)
        assert info.value.code == 2
        assert "--par" in capsys.readouterr().err
    previous = kernel.set_threads(0)
    try:
        ctx = NodeContext(config("--par", "1", "--disablewallet"))
        open_node(ctx)
        try:
            assert kernel.threads() == 1
        finally:
            close_node(ctx)
    finally:
        kernel.set_threads(previous)


def test_process_setup_shortens_the_gil_switch_interval() -> None:
    """A node's process (``setup_process``, run first by every command that starts one) keeps
    the GIL's hand-offs to 1 ms, so a busy thread cannot hold a reply up for Python's 5 ms;
    the collector runs at validation's thresholds; umask 077 as bitcoind."""
    import gc
    import os
    import sys

    from rpc.daemon import SWITCH_INTERVAL, setup_process
    from validator import VALIDATING_THRESHOLDS

    interval, mask, thresholds = sys.getswitchinterval(), os.umask(0o022), gc.get_threshold()
    try:
        sys.setswitchinterval(0.005)
        gc.set_threshold(700, 10, 10)
        setup_process()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL) == pytest.approx(0.001)
        assert gc.get_threshold() == VALIDATING_THRESHOLDS == (50_000, 10, 10)
        assert os.umask(0o077) == 0o077
    finally:
        sys.setswitchinterval(interval)
        os.umask(mask)
        gc.set_threshold(*thresholds)
