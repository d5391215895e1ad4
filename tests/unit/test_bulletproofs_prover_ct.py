"""The prover's constant-time claim (prover.py docstring): no selection in Python depends on a
secret. Checked as control flow: the bytecode the prover's own frames execute is the same
instruction sequence whatever the secret value and blinding factor (only public data, such as
the proof's size, may steer it)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from ctplugin.bulletproofs import generator_set, prove
from ctplugin.bulletproofs import prover as prover_module
from ctplugin.pedersen import H_GENERATOR

GENS = generator_set(256)


def _executed_instructions(run: Callable[[], Any]) -> list[tuple[str, int]]:
    """(function, bytecode offset) of every instruction executed in prover.py frames."""
    trace: list[tuple[str, int]] = []
    target = prover_module.__file__

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        if frame.f_code.co_filename != target:
            return None
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        if event == "opcode":
            trace.append((frame.f_code.co_name, frame.f_lasti))
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return trace


def _trace_of(value: int, blind: int) -> list[tuple[str, int]]:
    return _executed_instructions(
        lambda: prove([value], [blind], H_GENERATOR, b"\x07" * 32, nbits=64, gens=GENS))


def test_control_flow_does_not_depend_on_the_value_or_blind() -> None:
    """Values with different bits (all zeros, all ones, alternating) and different blinds run
    the very same instruction sequence (a branch on a bit would jump elsewhere)."""
    reference = _trace_of(0, 1)
    assert len(reference) > 1000
    for value, blind in ((2**64 - 1, 2), (0x5555_5555_5555_5555, 3), (0xAAAA_0000_FFFF_1234, 4)):
        assert _trace_of(value, blind) == reference
