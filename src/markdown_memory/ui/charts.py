"""Small charts drawn by the server as inline SVG (no chart library, no script in the browser).

Each function returns SVG markup as a ``markupsafe.Markup`` string: every label is escaped
here, and each chart carries a ``<title>`` and ``role="img"`` with an ``aria-label`` that
states its figures, so it reads without the picture too.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from markupsafe import Markup

BAR_HEIGHT = 18
GAP = 6
LABEL_WIDTH = 150
PLOT_WIDTH = 300
#: confidence labels in the order they are drawn
LABELS = ("high", "low", "none")


def _frame(width: int, height: int, label: str, body: list[str]) -> Markup:
    title = escape(label)
    return Markup(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                  f'viewBox="0 0 {width} {height}" role="img" aria-label="{title}"><title>{title}</title>'
                  + "".join(body) + "</svg>")


def bars(rows: Sequence[tuple[str, float]], *, title: str) -> Markup:
    """A horizontal bar per ``(label, value)`` with ``value`` in 0-1, drawn as a share of
    :data:`PLOT_WIDTH` with its value written beside it."""
    height = max(1, len(rows)) * (BAR_HEIGHT + GAP) + GAP
    body = []
    for i, (label, value) in enumerate(rows):
        y = GAP + i * (BAR_HEIGHT + GAP)
        share = max(0.0, min(1.0, value))
        body.append(f'<text x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT - 5}" text-anchor="end" '
                    f'font-size="12">{escape(label)}</text>')
        body.append(f'<rect x="{LABEL_WIDTH}" y="{y}" width="{share * PLOT_WIDTH:.1f}" height="{BAR_HEIGHT}" '
                    f'fill="#4a6fa5"/>')
        body.append(f'<text x="{LABEL_WIDTH + share * PLOT_WIDTH + 4:.1f}" y="{y + BAR_HEIGHT - 5}" '
                    f'font-size="12">{value:.3f}</text>')
    figures = "; ".join(f"{label} {value:.3f}" for label, value in rows)
    return _frame(LABEL_WIDTH + PLOT_WIDTH + 60, height, f"{title}: {figures}" if rows else title, body)


def _groups(points: Sequence[tuple[str | float, bool]]) -> list[tuple[str, int, int]]:
    """(group, answers, correct): by confidence label, or by tenths of ``p_answer`` when the
    points carry probabilities."""
    counts: dict[str, list[int]] = {}
    for certainty, correct in points:
        if isinstance(certainty, (int, float)) and not isinstance(certainty, bool):
            low = min(9, int(float(certainty) * 10))
            key = f"p {low / 10:.1f}-{(low + 1) / 10:.1f}"
        else:
            key = str(certainty or "none")
        tally = counts.setdefault(key, [0, 0])
        tally[0] += 1
        tally[1] += int(correct)
    order = sorted(counts, key=lambda k: (LABELS.index(k) if k in LABELS else len(LABELS), k))
    return [(k, counts[k][0], counts[k][1]) for k in order]


def confidence_vs_correct(points: Sequence[tuple[str | float, bool]]) -> Markup:
    """For each confidence label (or ``p_answer`` tenth), the share of answers whose first hit
    was right, as a bar, with ``right/answers`` beside it: a calibrated search has high bars
    where it is confident and low ones where it is not."""
    groups = _groups(points)
    height = max(1, len(groups)) * (BAR_HEIGHT + GAP) + GAP
    body = []
    for i, (name, n, right) in enumerate(groups):
        y = GAP + i * (BAR_HEIGHT + GAP)
        share = right / n if n else 0.0
        body.append(f'<text x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT - 5}" text-anchor="end" '
                    f'font-size="12">{escape(name)}</text>')
        body.append(f'<rect x="{LABEL_WIDTH}" y="{y}" width="{PLOT_WIDTH}" height="{BAR_HEIGHT}" fill="#e4e4e4"/>')
        body.append(f'<rect x="{LABEL_WIDTH}" y="{y}" width="{share * PLOT_WIDTH:.1f}" height="{BAR_HEIGHT}" '
                    f'fill="#3c8d5a"/>')
        body.append(f'<text x="{LABEL_WIDTH + PLOT_WIDTH + 4}" y="{y + BAR_HEIGHT - 5}" font-size="12">'
                    f'{right}/{n}</text>')
    figures = "; ".join(f"{name}: {right} of {n} right" for name, n, right in groups)
    return _frame(LABEL_WIDTH + PLOT_WIDTH + 60, height, f"first hit right, by confidence: {figures}", body)
