"""The ``ctplugin`` console script (``apps.main``): one entry point, subcommands, and the manners
of a command-line tool — a reader that closes the pipe early (``ctplugin ... | head``) ends the
command quietly, with the status of a process killed by SIGPIPE, and no traceback."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from apps.main import COMMANDS, main
from tests.conftest import REPO


def test_usage_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"  {name} " in out for name in COMMANDS)
    assert main(["no-such-command"]) == 2


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse's convention: the usage on stderr, status 2 (``--help`` asks for it: 0)."""
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("usage: ctplugin COMMAND")
    done = subprocess.run([sys.executable, "-m", "apps.main"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "") and "usage: ctplugin" in done.stderr


@pytest.mark.parametrize("argv", [["oracle", "--seed", "s1", "announce", "ev1", "--digits", "10"],
                                  ["--help"]])
def test_a_closed_pipe_ends_the_command_quietly(argv: list[str]) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "apps.main", *argv], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first write
    try:
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=120)
    finally:
        proc.kill()
        proc.stderr.close()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert code == 128 + signal.SIGPIPE


def test_version_on_the_script_and_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from ctplugin import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"ctplugin {__version__}\n"
    for name in COMMANDS:
        assert main([name, "--version"]) == 0
        assert capsys.readouterr().out == f"ctplugin {name} {__version__}\n"
    assert main(["cli", "-version"]) == 0  # bitcoin-cli's spelling


@pytest.mark.parametrize("argv", [["demo", "--txs", "0"], ["demo", "--blocks", "-3"],
                                  ["audit", "00", "--par", "100000"],
                                  ["audit", "00", "--threads", "-3"]])
def test_bad_arguments_are_refused_at_parse_time(argv: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Usage errors exit 2 before any work (QA: demo --txs 0 crashed after its runs, audit
    --threads -3 ran silently)."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    assert "error:" in capsys.readouterr().err
