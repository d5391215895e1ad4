"""Architecture rules the import-linter contracts cannot see, checked on the source (AST):

- reject reasons are named constants: every ``ValidationError(...)`` and ``label.error(...)`` in
  the validator takes a ``validator.reasons`` constant, never a string literal;
- the library does no I/O: no ``open``/``print``/``input``, no ``os.environ``/``getenv``, no
  ``sys.stdin``/``stdout``/``stderr``/``argv``, no file-reading ``Path`` methods in ``ctplugin``.
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
    names = [n for n in vars(reasons) if n.isupper() and n != "ALL"]
    values = [getattr(reasons, n) for n in names]
    assert len(set(values)) == len(values) == len(reasons.ALL)
    for name, value in zip(names, values):
        assert name == value.upper().replace("-", "_"), name  # the name says the string


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
