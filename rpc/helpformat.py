"""How every command line of ours prints ``--help``: for users, in bitcoind's conventions.

- A boolean option is shown as a flag (``--daemon``), as bitcoind's ``-help`` shows
  ``-daemon``; it still takes ``--daemon=0`` / ``-daemon=1`` as bitcoind does. Argparse would
  print ``--daemon [DAEMON]``, which reads as "give a value named DAEMON".
- An option taking an optional value with no name of its own shows ``[VALUE]``.
- An option's default is shown when its text does not already say it (``(default 7040)``),
  as bitcoind's help ends each line with ``(default: N)``.
- The description is printed as written (its own line breaks and lists).

It lives in ``rpc`` because the node's parser (``rpc.config.build_parser``) uses it and ``rpc``
may not import ``apps``; every ``apps`` command line uses it too.
"""

from __future__ import annotations

import argparse
from typing import Any

FLAG_METAVAR = "0|1"  # the metavar an option gives to say "I am a boolean" (-logtimestamps)


def is_flag(action: argparse.Action) -> bool:
    """A boolean option: no value (store_true), or an optional 0/1 value (``--daemon[=1]``)."""
    if action.nargs == 0:
        return True
    return action.nargs == argparse.OPTIONAL and (action.const is True
                                                 or action.metavar == FLAG_METAVAR)


def _default_text(value: Any) -> str | None:
    """How a default reads in help, or None when there is nothing worth saying."""
    if value is None or value is argparse.SUPPRESS or value is False or value in ([], ""):
        return None
    if value is True:
        return "1"
    return str(value)


class UserHelpFormatter(argparse.RawDescriptionHelpFormatter):
    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        if action.option_strings and is_flag(action):
            return ""
        if action.option_strings and action.nargs == argparse.OPTIONAL \
                and action.metavar is None:
            return "[VALUE]"
        return super()._format_args(action, default_metavar)

    def _format_action_invocation(self, action: argparse.Action) -> str:
        # "--daemon " (an empty value part) would leave a space before the help column
        return super()._format_action_invocation(action).rstrip()

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if not action.option_strings or "default" in text.lower():
            return text
        default = _default_text(action.default)
        if default is None:
            return text
        return f"{text} (default {default.replace('%', '%%')})".lstrip()
