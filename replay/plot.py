"""Replay plots (matplotlib, Agg backend: no display needed): time per block against proofs per
block, and cumulative time against height, one series per report (mode, or with ``--compare``
the report file's name)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import accumulate

from replay.config import ReplayMode
from replay.report import ReplayReport

# The formats matplotlib's Agg canvas writes, by file extension (FigureCanvasBase's
# get_supported_filetypes with the Agg backend): the picture's format follows its name.
IMAGE_FORMATS = ("png", "svg", "svgz", "pdf", "ps", "eps", "jpg", "jpeg", "tif", "tiff",
                 "webp", "raw", "rgba", "pgf")


class PlotError(ValueError):
    """A picture that cannot be written under the name given."""


def image_format(path: str | os.PathLike[str]) -> str:
    """The image format a file name asks for; ``PlotError`` for one matplotlib does not write
    (``x.txt`` would otherwise get PNG bytes under a text file's name)."""
    suffix = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if suffix not in IMAGE_FORMATS:
        raise PlotError(f"cannot draw {os.fspath(path)}: give the picture one of the "
                        f"extensions {', '.join('.' + f for f in IMAGE_FORMATS[:7])} ...")
    return suffix


def plot_reports(reports: Sequence[ReplayReport], path: str | os.PathLike[str],
                 names: Sequence[str] | None = None) -> None:
    """Write a picture with two panels for ``reports`` (one colour per report), in the format
    of ``path``'s extension; ``names`` label the series (the report files' names), else each
    report's mode."""
    if not reports:
        raise ValueError("nothing to plot")
    file_format = image_format(path)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (per_block, cumulative) = plt.subplots(1, 2, figsize=(12, 4.8), dpi=100)
    labels = list(names) if names is not None else _labels(reports)
    for report, label in zip(reports, labels, strict=True):
        records = report.per_block
        proofs = [(r.range_proofs + r.surjection_proofs) / r.blocks for r in records]
        ms = [1000 * r.seconds / r.blocks for r in records]
        per_block.scatter(proofs, ms, s=14, alpha=0.7, label=label)
        heights = [report.start_height - 1] + [r.height for r in records]
        total = [0.0, *accumulate(r.seconds for r in records)]
        cumulative.plot(heights, total, marker="." if len(records) < 60 else None,
                        label=f"{label}: {report.seconds:.2f} s")
    per_block.set_xlabel("proofs in the block (range + surjection)")
    per_block.set_ylabel("time per block (ms)")
    per_block.set_title("time per block against proofs per block")
    per_block.grid(alpha=0.3)
    per_block.legend()
    cumulative.set_xlabel("height")
    cumulative.set_ylabel("cumulative time (s)")
    cumulative.set_title("cumulative replay time")
    cumulative.grid(alpha=0.3)
    cumulative.legend()
    first = reports[0]
    fig.suptitle(f"ctplugin replay — {first.blocks} blocks, {first.transactions} transactions, "
                 f"{first.range_proofs} range proofs")
    fig.tight_layout()
    fig.savefig(os.fspath(path), format=file_format)
    plt.close(fig)


def _labels(reports: Sequence[ReplayReport]) -> list[str]:
    """The mode, with its parameters when they matter; numbered if still ambiguous."""
    labels = []
    for r in reports:
        label = r.mode
        if r.mode == ReplayMode.WINDOW:
            label += f" W={r.window}"
        elif r.mode in (ReplayMode.WORKERS, ReplayMode.DASK) and r.workers:
            label += f" ×{r.workers}"
        labels.append(label)
    if len(set(labels)) < len(labels):
        labels = [f"{label} #{i + 1}" for i, label in enumerate(labels)]
    return labels
