"""What ``pip install ctplugin`` brings: the product packages only (``bench``, ``harness`` and
``tests`` run from the checkout), base dependencies that the library and the validator need, and
optional extras for the heavy pieces — checked on pyproject.toml's configuration and in
subprocesses where the extras' modules cannot be imported (a meta-path finder refuses them, as
a fresh venv without the extras would)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib

import pytest
from setuptools import find_packages

from apps.extras import MODULES, Extra
from tests.conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PRODUCT = {"ctplugin", "validator", "regtest", "net", "rpc", "rpcclient", "replay", "apps"}
HEAVY = {"aiohttp", "pyzmq", "rich", "matplotlib", "dask"}  # distributions, not in the base
BLOCKED = ("aiohttp", "zmq", "rich", "matplotlib", "dask", "distributed")


def _distribution(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()


def test_the_wheel_ships_only_product_packages() -> None:
    find = PYPROJECT["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(where=str(REPO), include=find["include"])
    top = {name.split(".")[0] for name in packages}
    assert {"ctplugin", "validator", "regtest", "net", "rpc", "replay", "apps"} <= top
    assert top <= PRODUCT, top - PRODUCT
    assert "ctplugin.bulletproofs" in packages and "rpc.methods" in packages  # subpackages too


def test_base_dependencies_leave_the_heavy_pieces_to_extras() -> None:
    project = PYPROJECT["project"]
    base = {_distribution(r) for r in project["dependencies"]}
    assert base == {"coincurve", "plyvel", "python-bitcointx", "cryptography", "simplejson"}
    extras = project["optional-dependencies"]
    assert set(extras) == {*Extra, "all", "test"}  # apps.extras names every extra
    assert extras["all"] == [f"ctplugin[{','.join(Extra)}]"]
    assert {_distribution(r) for e in Extra for r in extras[e]} == HEAVY
    # The modules apps.extras checks are the ones these distributions install.
    assert {m for e in Extra for m in MODULES[e]} == set(BLOCKED)


def test_make_installs_every_extra() -> None:
    assert "pip install -q -e '.[all,test]'" in (REPO / "Makefile").read_text()


_BLOCKER = f"""
import sys
class _Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (extra not installed)")
        return None
sys.meta_path.insert(0, _Refuse())
"""


def _without_extras(code: str, *blocked: str) -> subprocess.CompletedProcess[str]:
    blocker = _BLOCKER if not blocked else _BLOCKER.replace(repr(BLOCKED), repr(blocked))
    return subprocess.run([sys.executable, "-c", blocker + textwrap.dedent(code)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_the_library_and_validator_import_and_verify_a_bulletproof_without_extras() -> None:
    done = _without_extras("""
        import importlib, pkgutil
        import ctplugin, validator
        for package in (ctplugin, validator):
            for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
                importlib.import_module(info.name)
        from ctplugin.bulletproofs import prove_output, verify_output
        from ctplugin.pedersen import commit, generator_generate
        asset = generator_generate(bytes(range(32)))
        script = bytes.fromhex("0014") + bytes(20)
        proof = prove_output(12345, 7, asset, bytes(32), script)
        commitment = commit(12345, 7, asset).serialize()
        assert verify_output(proof, commitment, asset.serialize(), script)
        assert not verify_output(proof, commit(12346, 7, asset).serialize(), asset.serialize(),
                                 script)
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in {blocked!r})
        print("ok", heavy)
    """.replace("{blocked!r}", repr(BLOCKED)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok []"


@pytest.mark.parametrize(("argv", "blocked", "message"), [
    (["node", "--datadir", "d"], ("aiohttp",),
     "ctplugin node needs the 'node' extra: pip install 'ctplugin[node]'"),
    (["replay", "c.dat", "--datadir", "d"], ("rich",),
     "ctplugin replay needs the 'replay' extra: pip install 'ctplugin[replay]'"),
    (["replay", "c.dat", "--datadir", "d", "--mode", "dask"], ("distributed",),
     "ctplugin replay --mode dask needs the 'dask' extra: pip install 'ctplugin[dask]'"),
    (["replay", "--compare", "a.json", "--plot", "p.png"], ("matplotlib",),
     "ctplugin replay --plot needs the 'plot' extra: pip install 'ctplugin[plot]'"),
    (["demo", "dlc"], ("zmq",),
     "ctplugin demo dlc needs the 'node' extra: pip install 'ctplugin[node]'"),
])
def test_a_missing_extra_is_one_line_and_status_2(argv: list[str], blocked: tuple[str, ...],
                                                  message: str) -> None:
    done = _without_extras(f"""
        from apps.main import main
        sys.exit(main({argv!r}))
    """, *blocked)
    assert (done.returncode, done.stderr, done.stdout) == (2, message + "\n", "")


def test_commands_without_extras_still_run() -> None:
    """The pure commands need no extra: their modules import (``--help``) and an oracle runs."""
    done = _without_extras("""
        from apps.main import main
        assert main(["--help"]) == 0
        for command in ("cli", "audit", "demo", "elements", "bulletproofs", "oracle"):
            try:
                main([command, "--help"])
            except SystemExit as exc:
                assert exc.code == 0, command
        assert main(["oracle", "--seed", "s1", "announce", "ev1", "--digits", "4"]) == 0
    """)
    assert done.returncode == 0, done.stderr
    assert "usage: ctplugin COMMAND" in done.stdout and "Traceback" not in done.stderr
