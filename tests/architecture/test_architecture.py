"""Architecture rules the import-linter contracts cannot see, checked on the source (AST):

- reject reasons are named constants: every ``ValidationError(...)`` and ``label.error(...)`` in
  the validator takes a ``validator.reasons`` constant, never a string literal; above the
  validator a ``reason`` is compared with those constants (or the mempool's ``REMOVED_*``), never
  with a literal;
- the library does no I/O: no ``open``/``print``/``input``, no ``os.environ``/``getenv``, no
  ``sys.stdin``/``stdout``/``stderr``/``argv``, no file-reading ``Path`` methods in ``ctplugin``;
- one room for block I/O: only ``validator/store/blockio.py`` reads or writes the blk-file record
  framing (``magic ‖ LE32 length ‖ payload``) or names ``xor.dat``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from validator import reasons


def _sources(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


def _calls(path: Path) -> Iterator[ast.Call]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            yield node


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


@pytest.mark.parametrize("path", _sources("validator"), ids=lambda p: p.name)
def test_reject_reasons_are_named_constants(path: Path) -> None:
    literal = [f"{path.name}:{call.lineno}" for call in _calls(path)
               if _name(call.func) in ("ValidationError", "error") and call.args
               and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)]
    assert not literal, f"use a validator.reasons constant at {literal}"


def test_reason_constants_are_distinct_and_complete() -> None:
    names = [n for n in vars(reasons) if n.isupper() and isinstance(getattr(reasons, n), str)]
    values = [getattr(reasons, n) for n in names]
    assert len(set(values)) == len(values) == len(reasons.ALL)
    for name, value in zip(names, values):
        # the name says the string (Elements' "min relay fee not met" has spaces)
        assert name == value.upper().replace("-", "_").replace(" ", "_"), name


_ABOVE_VALIDATOR = [p for pkg in ("regtest", "rpc", "replay", "apps", "bench")
                    for p in _sources(pkg)]


@pytest.mark.parametrize("path", _ABOVE_VALIDATOR, ids=lambda p: str(p.relative_to(REPO)))
def test_reasons_are_compared_with_the_validators_constants(path: Path) -> None:
    """A ``reason`` compared with a literal that is a reject reason or a mempool-removal reason
    (other reasons, a DlcError's, have no constants)."""
    from validator import REMOVED_BLOCK, REMOVED_BY_CALLER, REMOVED_CONFLICT, REMOVED_REORG

    validator_reasons = {*reasons.ALL, REMOVED_BLOCK, REMOVED_BY_CALLER, REMOVED_CONFLICT,
                         REMOVED_REORG}

    def is_reason(node: ast.expr) -> bool:
        return _name(node) == "reason" and isinstance(node, ast.Name | ast.Attribute)

    def literals(node: ast.expr) -> list[object]:
        items = node.elts if isinstance(node, ast.Set | ast.Tuple | ast.List) else [node]
        return [e.value for e in items if isinstance(e, ast.Constant)]

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(is_reason(side) for side in sides):
                found += [f"{value!r} at line {node.lineno}" for side in sides
                          for value in literals(side) if value in validator_reasons]
    assert not found, f"{path.relative_to(REPO)}: compare with validator.reasons: {found}"


_IO_CALLS = {"open", "print", "input", "getenv", "read_text", "read_bytes", "write_text",
             "write_bytes"}
_IO_ATTRIBUTES = {("os", "environ"), ("sys", "stdin"), ("sys", "stdout"), ("sys", "stderr"),
                  ("sys", "argv")}


@pytest.mark.parametrize("path", _sources("ctplugin"), ids=lambda p: str(p.relative_to(REPO)))
def test_the_library_does_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute) \
                and _name(node.func) in _IO_CALLS:
            found.append(f"{_name(node.func)}() at line {node.lineno}")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and (node.value.id, node.attr) in _IO_ATTRIBUTES:
            found.append(f"{node.value.id}.{node.attr} at line {node.lineno}")
    assert not found, f"{path.relative_to(REPO)}: I/O belongs to apps/harness: {found}"


_IMPORT_PROBE = """
import importlib, pkgutil
from ctplugin.secp256k1 import kernel
built = []
real = kernel.backend.FixedBaseTable
class Counting:
    def __new__(cls, *args):
        built.append(len(args[0]) // 64)
        return real(*args)
kernel.backend.FixedBaseTable = Counting
import ctplugin
for info in pkgutil.walk_packages(ctplugin.__path__, "ctplugin."):
    importlib.import_module(info.name)
import bitcointx
print(repr((built, bitcointx.get_custom_secp256k1_path())))
"""


def test_importing_the_library_has_no_side_effects() -> None:
    """Importing every ctplugin module builds no precomputed table and changes no third-party
    library's global state (python-bitcointx's secp256k1 path is set on first use only)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "([], None)"


def _proof_reasons() -> set[str]:
    from ctplugin.borromean.format import REASONS as BORROMEAN
    from ctplugin.bulletproofs.errors import REASONS as BULLETPROOFS
    from ctplugin.surjection.errors import REASONS as SURJECTION

    return {*BULLETPROOFS, *BORROMEAN, *SURJECTION}


_REASONED_SOURCES = [p for pkg in ("ctplugin", "validator", "regtest", "rpc", "replay")
                     if (REPO / pkg).exists() for p in _sources(pkg)]


@pytest.mark.parametrize("path", _REASONED_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_encoding_and_proof_errors_carry_a_documented_reason(path: Path) -> None:
    """Every ``EncodingError(...)`` / ``ProofError(...)`` passes ``reason=`` as a literal from
    ``ctplugin.errors.ENCODING_REASONS`` / the proof systems' ``REASONS`` (or forwards the
    ``reason`` of the error it wraps)."""
    from ctplugin.errors import ENCODING_REASONS

    vocabulary = {"EncodingError": set(ENCODING_REASONS), "ProofError": _proof_reasons()}
    helper_module = "\nREASONS = {" in path.read_text()  # its proof_error asserts membership
    bad = []
    for call in _calls(path):
        kind = _name(call.func)
        if kind == "proof_error" and isinstance(call.func, ast.Name):  # the helpers' reason
            first = call.args[0] if call.args else None
            if isinstance(first, ast.Constant) and first.value not in vocabulary["ProofError"]:
                bad.append(f"line {call.lineno}")
            continue
        if kind not in vocabulary or not isinstance(call.func, ast.Name):
            continue
        reason = next((k.value for k in call.keywords if k.arg == "reason"), None)
        if isinstance(reason, ast.Attribute) and reason.attr == "reason":
            continue  # forwarded from the wrapped error
        if helper_module and isinstance(reason, ast.Name) and reason.id == "reason":
            continue
        if not (isinstance(reason, ast.Constant) and reason.value in vocabulary[kind]):
            bad.append(f"line {call.lineno}")
    assert not bad, f"{path.relative_to(REPO)}: undocumented or missing reason at {bad}"


# --- one room for block I/O ----------------------------------------------------------------------

_BLOCKIO = REPO / "validator" / "store" / "blockio.py"
_LENGTH_CODECS = {"from_bytes", "to_bytes", "pack", "pack_into", "unpack", "unpack_from",
                  "iter_unpack"}


def _mentions_magic(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and "magic" in n.id.lower())
               or (isinstance(n, ast.Attribute) and "magic" in n.attr.lower())
               for n in ast.walk(node))


def _framing_code(source: str, name: str = "<source>") -> list[str]:
    """Functions that handle the record framing themselves: bytes compared with, searched for
    or concatenated with a magic, and a length encoded or decoded (``int.from_bytes``,
    ``to_bytes``, ``struct``) in the same function — a record reader or writer. Also any
    ``xor.dat`` literal: the blocks/ obfuscation key is the room's."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Constant) and node.value == "xor.dat":
            found.append(f"{name}:{node.lineno} names xor.dat")
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        magic_bytes = any(
            (isinstance(n, ast.Compare) and any(map(_mentions_magic, [n.left, *n.comparators])))
            or (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add)
                and (_mentions_magic(n.left) or _mentions_magic(n.right)))
            or (isinstance(n, ast.Call) and _name(n.func) in ("find", "index", "startswith")
                and any(map(_mentions_magic, n.args)))
            for n in ast.walk(node))
        length = any(isinstance(n, ast.Call) and _name(n.func) in _LENGTH_CODECS
                     for n in ast.walk(node))
        if magic_bytes and length:
            found.append(f"{name}:{node.lineno} {node.name}")
    return found


_OUTSIDE_BLOCKIO = [p for pkg in ("ctplugin", "validator", "regtest", "rpc", "replay", "apps",
                                  "harness", "bench")
                    for p in _sources(pkg) if p != _BLOCKIO]


@pytest.mark.parametrize("path", _OUTSIDE_BLOCKIO, ids=lambda p: str(p.relative_to(REPO)))
def test_only_the_block_io_room_handles_the_record_framing(path: Path) -> None:
    found = _framing_code(path.read_text(), str(path.relative_to(REPO)))
    assert not found, (f"use validator's RecordReader / RecordFile / write_record / read_chain "
                       f"/ read_xor_key (validator/store/blockio.py): {found}")


def test_the_block_io_rule_sees_a_second_reader_and_writer() -> None:
    """The rule is not vacuous: it flags the room's own reader and writer, and a reader or
    writer someone might write elsewhere."""
    in_room = " ".join(_framing_code(_BLOCKIO.read_text()))
    for function in ("_strict", "_lax", "read", "write_record"):
        assert f" {function}" in in_room, function
    second_reader = (
        "def frames(data: bytes, magic: bytes):\n"
        "    pos = 0\n"
        "    while pos < len(data):\n"
        "        if data[pos:pos + 4] != magic:\n"
        "            raise ValueError(pos)\n"
        "        size = int.from_bytes(data[pos + 4:pos + 8], 'little')\n"
        "        yield data[pos + 8:pos + 8 + size]\n"
        "        pos += 8 + size\n")
    second_writer = ("def frame(raw):\n"
                     "    return NETWORK_MAGIC + struct.pack('<I', len(raw)) + raw\n")
    resync = ("def scan(data, net_magic):\n"
              "    at = data.find(net_magic)\n"
              "    return _LE32.unpack_from(data, at + 4)\n")
    key = "KEY = root / 'xor.dat'\n"
    assert _framing_code(second_reader) == ["<source>:1 frames"]
    assert _framing_code(second_writer) == ["<source>:1 frame"]
    assert _framing_code(resync) == ["<source>:1 scan"]
    assert _framing_code(key) == ["<source>:1 names xor.dat"]
    assert _framing_code("def height(raw):\n    return int.from_bytes(raw[72:76], 'little')\n"
                         ) == []


# --- one JSON-RPC client ---------------------------------------------------------------------

_RPC_CLIENT_SOURCES = [p for pkg in ("ctplugin", "validator", "regtest", "rpc", "replay", "apps",
                                     "harness", "bench") for p in _sources(pkg)]
_HTTP_CLIENT_MODULES = {"http.client", "urllib.request"}


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, nodes) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def rpc_client_code(source: str) -> list[str]:
    """What in ``source`` is a JSON-RPC client's work, which belongs to ``rpcclient`` alone: an
    HTTP client module imported (``http.client``, ``urllib.request``, aiohttp's
    ``ClientSession``), a request object built (a dict literal with a ``"method"`` key and a
    ``"params"`` or ``"jsonrpc"`` key), a ``.cookie`` file named. A server parses requests and
    builds replies (``result``/``error``/``id``): none of that matches."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name} at line {node.lineno}" for a in node.names
                      if a.name in _HTTP_CLIENT_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            if names & _HTTP_CLIENT_MODULES:
                found.append(f"from {node.module} import at line {node.lineno}")
        elif isinstance(node, ast.Attribute | ast.Name) and \
                (node.attr if isinstance(node, ast.Attribute) else node.id) == "ClientSession":
            found.append(f"an HTTP ClientSession at line {node.lineno}")
        elif isinstance(node, ast.alias) and node.name == "ClientSession":
            found.append("an HTTP ClientSession imported")
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if "method" in keys and keys & {"params", "jsonrpc"}:
                found.append(f"a JSON-RPC request built at line {node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings \
                and (node.value == ".cookie" or node.value.endswith("/.cookie")):
            found.append(f"the cookie file named at line {node.lineno}")
    return found


@pytest.mark.parametrize("path", _RPC_CLIENT_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_rpcclient_is_the_only_json_rpc_client(path: Path) -> None:
    found = rpc_client_code(path.read_text())
    assert not found, f"{path.relative_to(REPO)}: call a node through rpcclient: {found}"


def test_the_client_rule_catches_a_client_and_spares_a_server() -> None:
    client = '''
import http.client
from urllib.request import urlopen
from aiohttp import ClientSession

def call(port, method):
    cookie = open(datadir + "/.cookie").read()
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("POST", "/", json.dumps({"method": method, "params": [], "id": 1}))
    batch = [{"jsonrpc": "1.0", "method": m, "id": i} for i, m in enumerate(methods)]
'''
    found = rpc_client_code(client)
    assert len(found) == 6, found
    assert sum("JSON-RPC request" in f for f in found) == 2
    assert any("cookie" in f for f in found)
    server = '''
"""Reads a client's .cookie? No: writes DATADIR/.cookie"""
def handle(request):
    method, params = request.get("method"), request.get("params", [])
    return {"jsonrpc": "2.0", "result": run(method, params), "error": None, "id": request["id"]}
'''
    assert rpc_client_code(server) == []
