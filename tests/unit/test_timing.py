"""ctplugin.timing: the benchmarks' sampling order (no timed assertions: only what runs when)."""

from __future__ import annotations

from ctplugin.timing import interleaved_times


def test_interleaved_times_samples_in_turns_after_one_warm_up_each() -> None:
    calls: list[str] = []
    fns = {"ours": lambda: calls.append("ours"), "ref": lambda: calls.append("ref")}
    timed = interleaved_times(fns, repeat=2, number=3)
    assert calls == ["ours", "ref"] + (["ours"] * 3 + ["ref"] * 3) * 2
    assert set(timed) == {"ours", "ref"}
    assert all(wall >= 0 and cpu >= 0 for wall, cpu in timed.values())
