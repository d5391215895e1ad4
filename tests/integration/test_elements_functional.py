"""Elements' own functional tests, unmodified, against this node (docs/elements-regtest.md §9).

The framework (``../shared/elements-functional/``, a pristine copy of Elements'
``test/functional``) is copied to a temporary directory (it writes its cache and logs beside
itself) and run as its README says, with a ``config.ini`` made from ``config.ini.in`` and
``BITCOIND`` / ``BITCOINCLI`` naming wrappers around ``ctplugin-elementsd`` and
``ctplugin-elements-cli`` that run this checkout's code. Absent ``../shared``: skipped (a
failure when ``CI`` is set).

``FUNCTIONAL_TESTS`` lists the tests that must pass, with the options each needs (wallet tests
take ``--legacy-wallet`` or ``--descriptors``); the multi-node ones need P2P.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, shared_path

FUNCTIONAL_TESTS: list[tuple[str, tuple[str, ...]]] = [
    ("rpc_calcfastmerkleroot.py", ()),
    ("feature_connect_genesis_outputs.py", ("--legacy-wallet",)),
    ("feature_connect_genesis_outputs.py", ("--descriptors",)),
    ("example_elements_code_tutorial.py", ("--legacy-wallet",)),
    ("example_elements_code_tutorial.py", ("--descriptors",)),
    ("wallet_elements_regression_fundrawtransaction.py", ("--legacy-wallet",)),
    ("wallet_elements_regression_fundrawtransaction.py", ("--descriptors",)),
    # Elements' test_runner.py runs it with --legacy-wallet only: it needs dumpwallet and
    # sethdseed, which a descriptor wallet refuses ("Only legacy wallets are supported by this
    # command")
    ("feature_confidential_transactions.py", ("--legacy-wallet",)),
    # the same: test_runner.py lists it with --legacy-wallet only. Its "Make single blinded
    # output" step needs node1 to mine before node0's transaction reaches it, as Core's
    # trickle timers make all but certain (docs/p2p.md §4)
    ("feature_issuance.py", ("--legacy-wallet",)),
]

WRAPPER = """#!/bin/sh
PYTHONPATH={root}
export PYTHONPATH
exec {python} -m {module} "$@"
"""


def write_wrappers(bindir: Path) -> dict[str, str]:
    """``elementsd`` and ``elements-cli`` in ``bindir``: this interpreter running the console
    scripts' modules of this checkout (what the installed ``ctplugin-elementsd`` and
    ``ctplugin-elements-cli`` run). The environment variables that name them."""
    bindir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for variable, name, module in (("BITCOIND", "elementsd", "apps.elementsd"),
                                   ("BITCOINCLI", "elements-cli", "apps.elements_cli")):
        path = bindir / name
        path.write_text(WRAPPER.format(root=REPO, python=sys.executable, module=module))
        path.chmod(0o755)
        paths[variable] = str(path)
    return paths


def write_config_ini(template: Path, target: Path, srcdir: Path, builddir: Path) -> None:
    """``config.ini`` from ``config.ini.in``: the ``@...@`` placeholders filled in as Elements'
    build fills them, every component the tests check for enabled."""
    values = {"CLIENT_NAME": "Elements Core", "CLIENT_BUGREPORT":
              "https://github.com/ElementsProject/elements/issues",
              "abs_top_srcdir": str(srcdir), "abs_top_builddir": str(builddir), "EXEEXT": ""}
    lines = []
    for line in template.read_text().splitlines():
        if line.startswith("@") and "_TRUE@" in line:  # a component switch: enabled
            line = line.split("@", 2)[2]
        for key, value in values.items():
            line = line.replace(f"@{key}@", value)
        lines.append(line)
    target.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("test", "options"), FUNCTIONAL_TESTS,
                         ids=[" ".join((name, *opts)) for name, opts in FUNCTIONAL_TESTS])
def test_elements_functional_test_passes(test: str, options: tuple[str, ...],
                                         tmp_path: Path) -> None:
    framework = tmp_path / "functional"
    shutil.copytree(shared_path("elements-functional"), framework)
    config_ini = tmp_path / "config.ini"
    write_config_ini(framework / "config.ini.in", config_ini, framework, tmp_path / "build")
    env = dict(os.environ, **write_wrappers(tmp_path / "bin"))
    done = subprocess.run(
        [sys.executable, test, f"--configfile={config_ini}", f"--tmpdir={tmp_path / 'run'}",
         *options],
        cwd=framework, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "Tests successful" in done.stdout + done.stderr
