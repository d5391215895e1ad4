"""The node's ``debug.log`` as bitcoind writes it (Bitcoin Core ``src/logging.cpp``,
``src/init/common.cpp``; docs/elements-regtest.md §4):

- Each line: ``2026-12-01T21:25:13Z `` (UTC; ``-logtimemicros``: ``…13.123456Z``; none with
  ``-logtimestamps=0``), ``[thread] `` with ``-logthreadnames``, ``[file:line] [function] ``
  with ``-logsourcelocations``, then the level prefix of Core's ``GetLogPrefix``: nothing for
  an info line without category, ``[warning] `` / ``[error] ``, ``[mempool] `` for a debug line
  of a category, ``[mempool:info] `` / ``[mempool:trace] `` for its other levels.
- Categories (``CATEGORIES``, Core's names) are off unless ``-debug=CATEGORY`` (repeatable;
  ``-debug`` / ``-debug=1`` / ``-debug=all``: every one; ``-debug=0`` / ``none``: none) and not
  ``-debugexclude=CATEGORY``. A category's debug and trace lines need it enabled; its info,
  warning and error lines are always written, as Core's ``WillLogCategoryLevel``.
- ``-loglevel=LEVEL`` sets the threshold of every category, ``-loglevel=CATEGORY:LEVEL`` of
  one (default debug; trace shows more). Levels: trace, debug, info, warning, error.
- No Python reprs: a bytes repr in a message (LevelDB's errors) is shown as its text.
- ``-printtoconsole``: every line on stdout too; ``-shrinkdebugfile`` (default: on unless
  ``-debug``): at start a debug.log over 11 MB keeps only its last 10 MB, as Core's
  ``ShrinkDebugFile``.

Code logs a category's lines through ``category_logger(name)``; every other ``ctplugin.*``
logger is uncategorised (info and above).
"""

from __future__ import annotations

import ast
import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from regtest.corelog import format_timestamp

CATEGORIES = (
    "net", "tor", "mempool", "http", "bench", "zmq", "walletdb", "rpc", "estimatefee",
    "addrman", "selectcoins", "reindex", "cmpctblock", "rand", "prune", "proxy", "mempoolrej",
    "libevent", "coindb", "qt", "leveldb", "validation", "i2p", "ipc", "lock", "blockstorage",
    "txreconciliation", "scan", "txpackages")
"""Core's logging categories (``LogCategories`` in ``src/logging.cpp``)."""

TRACE = 5  # below logging.DEBUG, as Core's Level::Trace is below Level::Debug
LEVELS: dict[str, int] = {"trace": TRACE, "debug": logging.DEBUG, "info": logging.INFO,
                          "warning": logging.WARNING, "error": logging.ERROR}
_LEVEL_NAMES = {number: name for name, number in LEVELS.items()}
DEFAULT_LEVEL = logging.DEBUG  # Core's DEFAULT_LOG_LEVEL for categories

CATEGORY_PREFIX = "ctplugin.log."
DEBUG_LOG = "debug.log"
RECENT_DEBUG_HISTORY_SIZE = 10 * 1_000_000  # what ShrinkDebugFile keeps (Core's constant)
SHRINK_THRESHOLD = 11 * (RECENT_DEBUG_HISTORY_SIZE // 10)  # and when it shrinks
LOGGER_ROOTS = ("ctplugin", "validator")  # the validator layer logs listener failures


class LogOptionError(ValueError):
    """A logging option with a value Core would refuse (message for the user, Core's words)."""


@dataclass(frozen=True, slots=True)
class LogSettings:
    categories: frozenset[str] = frozenset()  # enabled ones
    levels: Mapping[str, int] = field(default_factory=dict)  # -loglevel=CATEGORY:LEVEL
    default_level: int = DEFAULT_LEVEL  # -loglevel=LEVEL
    timestamps: bool = True
    timemicros: bool = False
    threadnames: bool = False
    sourcelocations: bool = False
    shrink: bool = True

    def level_of(self, category: str) -> int:
        return self.levels.get(category, self.default_level)


def _category(name: str, option: str) -> str:
    if name not in CATEGORIES:
        raise LogOptionError(f"Error: Unsupported logging category -{option}={name}.")
    return name


def _is_true(value: str) -> bool:
    return value.lower() in ("1", "true", "yes", "on", "")


def log_settings(debug: Iterable[str] = (), debugexclude: Iterable[str] = (),
                 loglevel: Iterable[str] = (), *, timestamps: str | None = None,
                 timemicros: str | None = None, threadnames: str | None = None,
                 sourcelocations: str | None = None, shrinkdebugfile: str | None = None
                 ) -> LogSettings:
    """The settings of the logging options' values as given (module docstring);
    ``LogOptionError`` for an unknown category or level."""
    enabled: set[str] = set()
    for value in debug:
        if value in ("0", "none"):  # Core: any other -debug is then ignored
            enabled = set()
            break
        if value in ("1", "all", ""):
            enabled.update(CATEGORIES)
        else:
            enabled.add(_category(value, "debug"))
    for value in debugexclude:
        if value in ("1", "all", ""):
            enabled.clear()
        elif value not in ("0", "none"):
            enabled.discard(_category(value, "debugexclude"))
    default_level = DEFAULT_LEVEL
    levels: dict[str, int] = {}
    valid = ", ".join(LEVELS)
    for value in loglevel:
        category, colon, level = value.rpartition(":")
        if level not in LEVELS:
            kind = "category-specific" if colon else "global"
            raise LogOptionError(f"Error: Unsupported {kind} logging level -loglevel={value}. "
                                 f"Valid values: {valid}.")
        if colon:
            levels[_category(category, "loglevel")] = LEVELS[level]
        else:
            default_level = LEVELS[level]
    return LogSettings(
        categories=frozenset(enabled), levels=levels, default_level=default_level,
        timestamps=timestamps is None or _is_true(timestamps),
        timemicros=timemicros is not None and _is_true(timemicros),
        threadnames=threadnames is not None and _is_true(threadnames),
        sourcelocations=sourcelocations is not None and _is_true(sourcelocations),
        shrink=not enabled if shrinkdebugfile is None else _is_true(shrinkdebugfile))


def category_logger(category: str) -> logging.Logger:
    """The logger of one of Core's categories (``mempool``, ``validation``, ...)."""
    if category not in CATEGORIES:
        raise ValueError(f"not a logging category: {category}")
    return logging.getLogger(CATEGORY_PREFIX + category)


_BYTES_REPR = re.compile(r"""\bb('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def readable(text: str) -> str:
    """``text`` with every Python bytes repr in it shown as the text it holds: LevelDB's
    errors (plyvel) carry bytes, so a message quoting one reads ``b'Corruption: checksum
    mismatch'`` — a user reads ``Corruption: checksum mismatch``."""

    def plain(match: re.Match[str]) -> str:
        try:
            value = ast.literal_eval("b" + match.group(1))
        except (ValueError, SyntaxError):
            return match.group(0)
        return value.decode("utf-8", errors="replace") if isinstance(value, bytes) \
            else match.group(0)

    return _BYTES_REPR.sub(plain, text)


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class CoreFormatter(logging.Formatter):
    """A record as one debug.log line of Core's shape (module docstring)."""

    def __init__(self, settings: LogSettings) -> None:
        super().__init__()
        self.settings = settings

    def format(self, record: logging.LogRecord) -> str:
        settings = self.settings
        parts = []
        if settings.timestamps:
            parts.append(format_timestamp(record.created, settings.timemicros) + " ")
        if settings.threadnames:
            name = "main" if record.threadName == "MainThread" else record.threadName
            parts.append(f"[{name}] ")
        if settings.sourcelocations:
            path = os.path.abspath(record.pathname)
            shown = os.path.relpath(path, _ROOT) if path.startswith(_ROOT + os.sep) \
                else os.path.basename(path)
            parts.append(f"[{shown}:{record.lineno}] [{record.funcName}] ")
        parts.append(_level_prefix(record))
        parts.append(readable(record.getMessage()))
        if record.exc_info:  # the cause of an unexpected failure, for the operator's report
            parts.append("\n" + self.formatException(record.exc_info))
        return "".join(parts)


def _level_prefix(record: logging.LogRecord) -> str:
    """Core's ``GetLogPrefix``: a category's debug lines say only the category."""
    level = _LEVEL_NAMES.get(record.levelno) or record.levelname.lower()
    if record.name.startswith(CATEGORY_PREFIX):
        category = record.name[len(CATEGORY_PREFIX):]
        return f"[{category}] " if record.levelno == logging.DEBUG else f"[{category}:{level}] "
    return "" if record.levelno == logging.INFO else f"[{level}] "


def shrink_debug_file(path: str) -> None:
    """Core's ``ShrinkDebugFile``: a file over 11 MB keeps its last 10 MB."""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return
    if size <= SHRINK_THRESHOLD:
        return
    with open(path, "rb") as handle:
        handle.seek(-RECENT_DEBUG_HISTORY_SIZE, os.SEEK_END)
        recent = handle.read()
    with open(path, "wb") as handle:
        handle.write(recent)


def setup_logging(netdir: str, settings: LogSettings, console: bool) -> None:
    """``netdir/debug.log`` (and stdout with ``console``) for every ``ctplugin`` logger, with
    the category thresholds of ``settings``. ``OSError`` if debug.log cannot be written."""
    path = os.path.join(netdir, DEBUG_LOG)
    if settings.shrink:
        shrink_debug_file(path)
    formatter = CoreFormatter(settings)
    handlers: list[logging.Handler] = [logging.FileHandler(path, encoding="utf-8")]
    if console:
        handlers.append(logging.StreamHandler(sys.stdout))
    for handler in handlers:
        handler.setFormatter(formatter)
    for name in LOGGER_ROOTS:
        root = logging.getLogger(name)
        root.setLevel(logging.INFO)
        for old in list(root.handlers):
            root.removeHandler(old)
            old.close()
        for handler in handlers:
            root.addHandler(handler)
        root.propagate = False
    # Thresholds on the category loggers themselves, so a disabled category's debug line
    # costs one level comparison (the message is never formatted).
    for category in CATEGORIES:
        threshold = settings.level_of(category)
        if category not in settings.categories:
            threshold = max(threshold, logging.INFO)
        logging.getLogger(CATEGORY_PREFIX + category).setLevel(threshold)
