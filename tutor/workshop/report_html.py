"""The class report as one HTML page (`gpu-tutor report --html FILE`): its tables, and its two plots
drawn as SVG inside the page.

One file a facilitator can mail, leave on a shared drive or open on a laptop in a room with no
network: no script, nothing fetched (no stylesheet, font or image from anywhere), and a
Content-Security-Policy that tells the browser so, in case the escaping below ever had a hole.

Every text that came from a learner's file (names, ids, titles, puzzle ids, what a failure summary
says) is made terminal-safe and one line first (tutor.textsafe.one_line), so that a bidi override
shows as `\\u202e` and a zero-width space as `\\u200b`, as in the terminal, instead of turning a line
around or hiding, then escaped with html.escape, quotes included: a name such as
`<script>` or `"><img onerror=...>` reads as the text it is.
"""

from __future__ import annotations

import html
import re

from tutor.textsafe import one_line
from .export import utc_text
from .plots import (PUZZLE_WIDTH, STATE_WORDS, STATES, SolvedOverTime, clock_format, clock_text, cut,
                    nice_steps)
from .report import (ACTIVE_TIME_NOTE, HOLD_UP_TITLE, LEGEND, MISCONCEPTIONS_TITLE, NO_MISCONCEPTIONS, STILL_ON_IT_NOTE,
                     ClassReport, hold_ups, who_is_where)
from .live import FAILING, SOLVED, UNTOUCHED, WORKING

COLOURS = {SOLVED: "#1b7837", FAILING: "#d6604d", WORKING: "#f1c232", UNTOUCHED: "#e3e3e3"}
POLICY = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
td.strip { font-family: monospace; }
p.note { color: #555; font-size: 0.9em; margin: 0.2em 0; }
svg text { font-family: system-ui, sans-serif; font-size: 12px; fill: #222; }
.key { display: inline-block; width: 0.9em; height: 0.9em; margin: 0 0.3em 0 1em; vertical-align: -0.1em; }
"""


def report_html(report: ClassReport) -> str:
    title = f"Class progress: {report.title}" if report.title else "Class progress"
    stamps = [e.exported_at for e in report.learners]
    when = ""
    if stamps:
        first, last = utc_text(min(stamps)), utc_text(max(stamps))
        when = f" · exported {first}" if first == last else f" · exported from {first} to {last}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
        f"<title>{_text(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_text(title)}</h1>",
        f"<p>{len(report.learners)} learner(s) · {len(report.puzzles)} puzzle(s){_text(when)}</p>",
        f"<h2>Who is where</h2><p class=\"note\">{_text(LEGEND)}</p>",
        _table(who_is_where(report), mono=3),
        f"<h2>{_text(HOLD_UP_TITLE)}</h2>",
        _table(hold_ups(report)),
        f'<p class="note">{_text(ACTIVE_TIME_NOTE.strip())}</p><p class="note">{_text(STILL_ON_IT_NOTE.strip())}</p>',
        f"<h2>{_text(MISCONCEPTIONS_TITLE)}</h2>",
        _misconceptions(report),
        "<h2>Progress over time</h2>",
        _over_time(report.over_time(), report.solved()),
        "<h2>Learners per puzzle</h2>",
        _per_puzzle(report),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _misconceptions(report: ClassReport) -> str:
    found = report.misconceptions()
    if not found:
        return f"<p>{_text(NO_MISCONCEPTIONS.strip())}</p>"
    rows = [["puzzle", "learners", "what went wrong", "who"]]
    rows += [[m.puzzle, f"{len(m.learners)} of {len(report.learners)}", m.what(), ", ".join(report.labels_of(m))]
             for m in found]
    return _table(rows, code=2)


def _table(rows: list[list[str]], mono: int | None = None, code: int | None = None) -> str:
    """Column `mono` in a fixed-width font; in column `code`, each `span` as code."""
    head, *body = rows
    out = ["<table><thead><tr>" + "".join(f"<th>{_text(c)}</th>" for c in head) + "</tr></thead><tbody>"]
    for row in body:
        cells = []
        for i, c in enumerate(row):
            cells.append(f'<td class="strip">{_text(c)}</td>' if i == mono else
                         f"<td>{_with_code(c)}</td>" if i == code else f"<td>{_text(c)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _with_code(text: str) -> str:
    """Misconception.what()'s `spans` as <code>; every piece escaped on its own."""
    return "".join(f"<code>{_text(piece[1:-1])}</code>" if n % 2 else _text(piece)
                   for n, piece in enumerate(re.split(r"(`[^`]*`)", text)))


def _text(value) -> str:
    return html.escape(one_line(str(value)), quote=True)


# -- the plots, as SVG ------------------------------------------------------------------------------

WIDTH = 640


def _over_time(series: SolvedOverTime | None, solved: int) -> str:
    """Bars of the room's solves so far at the end of each step, time along the bottom."""
    if series is None:
        return f"<p>{'no solve has a time kept' if solved else 'no puzzle solved yet'}</p>"
    so_far = series.so_far
    left, right, top, bottom = 52, 16, 12, 48
    height = 260
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    peak = so_far[-1]
    step_w = plot_w / len(so_far)
    fmt = clock_format(series.start, series.step_end(len(so_far) - 1))
    out = [_svg_open(height, f"Puzzles solved by the room so far, every {series.step_text()}")]
    tick = next(t for t in nice_steps() if t * plot_h / peak >= 24)
    for value in range(0, peak + 1, tick):
        y = top + plot_h - value * plot_h / peak
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{value}</text>')
    for n, (total, new) in enumerate(zip(so_far, series.solved)):
        h = total * plot_h / peak
        x = left + n * step_w
        label = clock_text(series.step_end(n), fmt)
        out.append(f'<rect x="{x + 1:.1f}" y="{top + plot_h - h:.1f}" width="{max(step_w - 2, 1):.1f}" '
                   f'height="{h:.1f}" fill="{COLOURS[SOLVED]}"><title>by {_text(label)}: {total} solved '
                   f'(+{new})</title></rect>')
    every = max(1, round(56 / step_w))
    for n in range(len(so_far) - 1, -1, -every):  # the last step always labelled: the time the report is of
        x = left + (n + 1) * step_w
        out.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                   f'{_text(clock_text(series.step_end(n), fmt))}</text>')
    out.append(_axes(left, top, plot_w, plot_h))
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle">time (UTC), '
               f'at the end of each {_text(series.step_text())}</text>')
    out.append(f'<text transform="translate(14 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle">'
               "puzzles solved so far</text></svg>")
    if series.untimed:
        out.append(f'<p class="note">{series.untimed} solve(s) have no time kept and are left out.</p>')
    return "\n".join(out)


def _per_puzzle(report: ClassReport) -> str:
    """One stacked bar per puzzle (solved, failing, working, not opened), the counts after it; a
    table of the same numbers below, for those who read tables."""
    counts = report.per_puzzle()
    learners = len(report.learners)
    left, right, top, row_h, bottom = 170, 110, 8, 24, 40
    plot_w = WIDTH - left - right
    height = top + row_h * len(counts) + bottom
    out = ['<p class="note">' + "".join(f'<span class="key" style="background:{COLOURS[s]}"></span>'
                                        f"{_text(STATE_WORDS[s])}" for s in STATES) + "</p>",
           _svg_open(height, "Learners per puzzle: solved, failing, working, not opened")]
    for row, (pid, by_state) in enumerate(counts.items()):
        y = top + row * row_h
        out.append(f'<text x="{left - 8}" y="{y + 16}" text-anchor="end">{_text(cut(pid, PUZZLE_WIDTH))}'
                   f"<title>{_text(pid)}</title></text>")
        x = float(left)
        for state in STATES:
            w = by_state[state] * plot_w / learners
            if w:
                out.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" '
                           f'fill="{COLOURS[state]}"><title>{_text(pid)}: {by_state[state]} '
                           f"{_text(STATE_WORDS[state])}</title></rect>")
            x += w
        out.append(f'<text x="{left + plot_w + 8}" y="{y + 16}">'
                   + " · ".join(str(by_state[s]) for s in STATES) + "</text>")
    base = top + row_h * len(counts)
    tick = next(t for t in nice_steps() if t * plot_w / learners >= 32)
    for value in range(0, learners + 1, tick):
        x = left + value * plot_w / learners
        out.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#222"/>'
                   f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle">{value}</text>')
    out.append(f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="#222"/>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle">learners (of '
               f"{learners})</text></svg>")
    rows = [["puzzle", *(STATE_WORDS[s] for s in STATES)]]
    rows += [[pid, *(str(by_state[s]) for s in STATES)] for pid, by_state in counts.items()]
    out.append(_table(rows))
    return "\n".join(out)


def _svg_open(height: int, label: str) -> str:
    return (f'<svg width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{_text(label)}">')


def _axes(left: float, top: float, plot_w: float, plot_h: float) -> str:
    return (f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#222"/>'
            f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#222"/>')
