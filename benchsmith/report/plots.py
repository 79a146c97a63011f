"""The report's charts, drawn with matplotlib (Agg, no display) to PNG bytes.

Every chart is deterministic for the same numbers: a fixed size and DPI, and no creation date
or software version written into the PNG, so a rebuilt report differs only where its data do.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence

WIDTH_IN, DPI = 7.0, 110
COLOUR, REFERENCE = "#3b6ea5", "#c0504d"


def _figure(rows: int):
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure  # no pyplot: no global state between charts

    _with_cjk_fallback()

    height = max(1.6, 0.8 + 0.28 * rows)
    figure = Figure(figsize=(WIDTH_IN, height), dpi=DPI)
    # fixed margins (room for a 34-character label, the title and the axis label) instead of
    # tight_layout, which draws every chart one more time to measure it
    figure.subplots_adjust(left=0.33, right=0.95, top=1 - 0.32 / height, bottom=0.5 / height)
    return figure, figure.add_subplot(1, 1, 1)


@functools.cache
def _with_cjk_fallback() -> None:
    """Labels in Chinese (MULTI's answers) drawn with the Noto Sans CJK font benchsmith
    installs (``BENCHSMITH_CJK_FONT`` overrides it), after matplotlib's DejaVu Sans; once a
    process."""
    import matplotlib
    from matplotlib import font_manager

    try:
        from benchsmith.sources.exams.fonts import cjk_font

        font = cjk_font()
    except Exception:  # noqa: BLE001 - no CJK font: Latin labels still draw, CJK as boxes
        return
    before = {f.name for f in font_manager.fontManager.ttflist}
    font_manager.fontManager.addfont(str(font.path))
    added = sorted({f.name for f in font_manager.fontManager.ttflist} - before)
    chinese = [n for n in added if n.endswith(" SC")] or added
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", *chinese[:1]]


def _png(figure) -> bytes:
    out = io.BytesIO()
    figure.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def count_chart(title: str, counts: Sequence[tuple[str, int]], limit: int = 20) -> bytes:
    """Horizontal bars of ``(label, count)``, at most ``limit`` (the rest summed as 'other')."""
    shown = list(counts[:limit])
    if len(counts) > limit:
        shown.append((f"{len(counts) - limit} others", sum(c for _, c in counts[limit:])))
    figure, axes = _figure(len(shown))
    labels = [label if len(label) <= 28 else label[:27] + "…" for label, _ in shown][::-1]
    values = [count for _, count in shown][::-1]
    axes.barh(range(len(shown)), values, color=COLOUR)
    axes.set_yticks(range(len(shown)), labels, fontsize=8)
    for y, value in enumerate(values):
        axes.text(value, y, f" {value}", va="center", fontsize=7)
    axes.set_title(title, fontsize=9, loc="left")
    axes.set_xlabel("items", fontsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)


def rate_chart(title: str, rows: Sequence[tuple[str, float, float, float, float | None]],
               reference_label: str = "chance", xlabel: str = "accuracy",
               interval: str = "95% Wilson interval") -> bytes:  # fmt: skip
    """Points with Wilson error bars, one row each ``(label, rate, low, high, reference)``;
    a reference (chance) is a red tick on its row."""
    figure, axes = _figure(len(rows))
    ys = list(range(len(rows)))[::-1]
    for y, (_, value, low, high, reference) in zip(ys, rows, strict=True):
        axes.errorbar(value, y, xerr=[[value - low], [high - value]], fmt="o", color=COLOUR,
                      ecolor=COLOUR, capsize=3, markersize=4)  # fmt: skip
        if reference is not None:
            axes.plot([reference, reference], [y - 0.3, y + 0.3], color=REFERENCE, linewidth=2)
    axes.set_yticks(ys, [r[0] if len(r[0]) <= 34 else r[0][:33] + "…" for r in rows], fontsize=8)
    axes.set_xlim(0, 1)
    axes.set_ylim(-0.7, len(rows) - 0.3)
    axes.set_xlabel(xlabel + (f" (red: {reference_label})" if any(r[4] is not None for r in rows)
                              else "") + f"; bars: {interval}", fontsize=8)  # fmt: skip
    axes.set_title(title, fontsize=9, loc="left")
    axes.grid(axis="x", alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)
