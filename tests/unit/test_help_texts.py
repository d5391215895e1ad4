"""Every command's ``--help`` is written for users (bitcoind's conventions where we mirror it).

The walk starts at ``ctplugin``'s command table and follows every subcommand argparse lists
(``elements decode``), plus ``ctplugin-elementsd -help`` and ``ctplugin-elements-cli -help``. A
help text fails on: reST markup (double backticks, ``:func:``-style roles), module paths
(``regtest.builder``, ``Oracle.from_seed``), development paths (``../shared``), a boolean option
shown with a value (``--daemon [DAEMON]``), an option or positional without a line of help, or
an option whose default the text does not show.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
from collections.abc import Callable, Iterator
from unittest import mock

import pytest

from apps import elements_cli, elementsd
from apps.main import COMMANDS
from apps.main import main as ctplugin_main
from rpc.helpformat import UserHelpFormatter, is_flag

MARKUP = re.compile(r"``|:(?:func|class|meth|mod|attr|data|ref):`|\.\. \w+::")
MODULE = re.compile(r"\b(?:regtest|validator|rpc|rpcclient|apps|replay|harness|bench|net|"
                    r"ctplugin)\.(?!(?:pid|conf|md|json|png|dat|log|cookie)\b)[a-z_]+"
                    r"|\b[A-Z]\w+\.from_\w+")
DEV_PATH = re.compile(r"\.\./|/work/|shared/elements-vectors")
ENTRY = re.compile(r"^  (\S.*?)(?:\s{2,}(\S.*))?$")


def _help(entry: Callable[[list[str]], int], argv: list[str]
          ) -> tuple[str, list[argparse.ArgumentParser]]:
    """(the printed help, every parser that printed it) of one ``--help`` call."""
    parsers: list[argparse.ArgumentParser] = []
    original = argparse.ArgumentParser.print_help

    def record(self: argparse.ArgumentParser, file: object = None) -> None:
        parsers.append(self)
        original(self, file)  # type: ignore[arg-type]

    out = io.StringIO()
    with mock.patch.object(argparse.ArgumentParser, "print_help", record), \
            contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        entry(argv)
    return out.getvalue(), parsers


def _walk() -> Iterator[tuple[str, str, list[argparse.ArgumentParser]]]:
    todo = [[name] for name in COMMANDS] + [["demo", "dlc"]]
    while todo:
        words = todo.pop(0)
        text, parsers = _help(ctplugin_main, [*words, "--help"])
        yield "ctplugin " + " ".join(words), text, parsers
        for action in parsers[-1]._actions if parsers else ():
            if isinstance(action, argparse._SubParsersAction):
                todo += [[*words, sub] for sub in action.choices]
    for name, module in (("ctplugin-elementsd", elementsd), ("ctplugin-elements-cli",
                                                             elements_cli)):
        text, parsers = _help(module.main, ["-help"])
        yield name, text, parsers


HELPS = list(_walk())


def test_the_walk_reaches_every_command() -> None:
    names = {name for name, _, _ in HELPS}
    assert {"ctplugin elements decode", "ctplugin oracle attest", "ctplugin demo dlc",
            "ctplugin-elementsd"} <= names
    assert all(text.startswith("usage: ") for _, text, _ in HELPS), names


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, t, _ in HELPS])
def test_help_has_no_markup_module_or_development_paths(name: str, text: str) -> None:
    assert MARKUP.findall(text) == []
    assert MODULE.findall(text) == []
    assert DEV_PATH.findall(text) == []


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, t, _ in HELPS])
def test_every_option_and_positional_has_a_line_of_help(name: str, text: str) -> None:
    lines = text.splitlines()
    section = False
    bare = []
    for number, line in enumerate(lines):
        if line.endswith(":") and not line.startswith(" "):
            section = line in ("options:", "positional arguments:")
            continue
        entry = ENTRY.match(line) if section else None
        if entry is None or entry.group(2) or entry.group(1).startswith("{"):
            continue
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if not following.startswith("   "):  # help text wrapped onto the next line
            bare.append(line.strip())
    assert bare == []


@pytest.mark.parametrize(("name", "parsers"), [(n, p) for n, _, p in HELPS])
def test_booleans_are_flags_and_defaults_are_shown(name: str,
                                                   parsers: list[argparse.ArgumentParser]
                                                   ) -> None:
    assert parsers, f"{name} printed no argparse help"
    parser = parsers[-1]
    assert issubclass(parser.formatter_class, UserHelpFormatter)  # type: ignore[arg-type]
    formatter = parser._get_formatter()
    text = parser.format_help()
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        boolean = (action.nargs == 0 or action.const is True or action.type is bool
                   or getattr(action.type, "__name__", "") == "_bool" or is_flag(action))
        if boolean:
            invocation = formatter._format_action_invocation(action)
            assert invocation == ", ".join(action.option_strings), invocation
        shown = formatter._get_help_string(action) or ""
        if action.default not in (None, False, [], "", argparse.SUPPRESS):
            assert "default" in shown.lower(), (action.option_strings, shown)
    assert not re.search(r"--([\w-]+) \[([A-Z_]+)\]", text) or all(
        m.group(2) != m.group(1).upper().replace("-", "_")
        for m in re.finditer(r"--([\w-]+) \[([A-Z_]+)\]", text))


def test_demo_dlc_says_it_starts_its_own_node() -> None:
    text = dict((n, t) for n, t, _ in HELPS)["ctplugin demo dlc"]
    assert "running node" not in text
    assert "starts" in text


def test_ctplugin_alone_is_usage_on_stderr_and_status_2(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert ctplugin_main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("usage: ctplugin COMMAND")
