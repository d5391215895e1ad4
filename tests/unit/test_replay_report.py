"""Replay reports: JSON round trip, bounded per-block records, time sharing, the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay import report as report_module
from replay.plot import plot_reports
from replay.report import REPORT_KEYS, BlockRecord, ReplayReport, ReportError


def sample(n: int, mode: str = "block") -> ReplayReport:
    report = ReplayReport(mode=mode, source="test", start_height=1)
    for h in range(1, n + 1):
        report.add_block(BlockRecord(h, 3, 4, 4, 0.01 * h))
    report.seconds = sum(0.01 * h for h in range(1, n + 1))
    report.height, report.tip, report.utxo_set_hash = n, "ab" * 32, "cd" * 32
    return report


def test_json_round_trip(tmp_path: Path) -> None:
    report = sample(5)
    report.add_phases({"parse": 0.5, "range_proofs": 1.0})
    report.write_json(tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert set(REPORT_KEYS) <= set(data) and "_bucket" not in data
    assert data["blocks"] == 5 and data["transactions"] == 15 and data["range_proofs"] == 20
    assert data["proofs_per_second"] == pytest.approx(40 / report.seconds)
    back = ReplayReport.read_json(tmp_path / "r.json")
    assert back.per_block == report.per_block and back.phases == report.phases
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ReportError, match="not a JSON object"):
        ReplayReport.read_json(tmp_path / "bad.json")
    with pytest.raises(ReportError, match="missing"):
        ReplayReport.from_json({"mode": "block"})


def test_per_block_records_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_module, "MAX_RECORDS", 8)
    report = sample(100)
    assert len(report.per_block) <= 8 and report.blocks == 100
    assert sum(r.blocks for r in report.per_block) == 100
    assert sum(r.transactions for r in report.per_block) == 300
    assert report.per_block[-1].height == 100
    assert sum(r.seconds for r in report.per_block) == pytest.approx(report.seconds)


def test_share_time_by_proofs() -> None:
    records = [BlockRecord(1, 1, 3, 1), BlockRecord(2, 1, 0, 0), BlockRecord(3, 1, 2, 2)]
    ReplayReport.share_time(records, 2.0)
    assert [r.seconds for r in records] == pytest.approx([1.0, 0.0, 1.0])
    empty = [BlockRecord(1, 1, 0, 0), BlockRecord(2, 1, 0, 0)]
    ReplayReport.share_time(empty, 1.0)
    assert [r.seconds for r in empty] == [0.5, 0.5]


def test_table_summary_and_plot(tmp_path: Path) -> None:
    from rich.console import Console

    report = sample(4)
    report.add_phases({"parse": 0.1, "write": 0.2})
    report.add_worker_phases({"range_proofs": 0.3})
    console = Console(record=True, width=120)
    console.print(report.table())
    text = console.export_text()
    assert "database write" in text and "workers: range proofs (cpu)" in text
    assert "total (wall)" in text
    assert report.summary()[1] == f"tip {'ab' * 32} at height 4"
    plot_reports([report, sample(4, "window")], tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError):
        plot_reports([], tmp_path / "none.png")
