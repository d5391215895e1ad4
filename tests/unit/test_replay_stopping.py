"""``replay.stopping.StopRequest``: the first Ctrl-C is a request the replay honours between
blocks, the second stops at once after ``on_force``; the handler is put back afterwards and
never replaces a program's own."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from replay.sources import SourceBlock, prefetch
from replay.stopping import StopRequest


def press() -> None:
    os.kill(os.getpid(), signal.SIGINT)  # the handler runs in this (main) thread right after


def test_the_first_ctrl_c_is_a_request_the_second_forces_a_stop() -> None:
    forced = []
    with StopRequest(on_force=lambda: forced.append(True)) as stop:
        stop.check()  # nothing asked yet
        press()
        assert stop.requested and not stop.forced and not forced
        with pytest.raises(KeyboardInterrupt):
            stop.check()
        with pytest.raises(KeyboardInterrupt):
            press()
        assert stop.forced and forced == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_programs_own_handler_is_left_alone() -> None:
    seen = []

    def own(_signum: int, _frame: object) -> None:
        seen.append(True)

    previous = signal.signal(signal.SIGINT, own)
    try:
        with StopRequest() as stop:
            press()
        assert seen == [True] and not stop.requested
        assert signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, previous)


def test_outside_the_main_thread_nothing_is_installed() -> None:
    states = []

    def run() -> None:
        with StopRequest() as stop:
            states.append(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
            stop.check()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert states == [True]


def test_a_stop_asked_while_waiting_for_a_slow_source_is_not_delayed() -> None:
    """The consumer polls ``check`` while the source is slow, and closing joins the reader."""
    release = threading.Event()

    def slow() -> object:
        yield SourceBlock(0, b"", "0")
        release.wait(30)  # a node over RPC that does not answer
        yield SourceBlock(1, b"", "1")

    before = threading.active_count()
    with StopRequest() as stop:
        stream = prefetch(slow(), depth=2, check=stop.check)  # type: ignore[arg-type]
        assert next(stream).height == 0
        threading.Timer(0.2, press).start()
        with pytest.raises(KeyboardInterrupt):
            next(stream)
        release.set()
        stream.close()
    threading.Event().wait(0.3)  # the Timer thread ends too
    assert threading.active_count() == before
