"""`reqgate audit --report`: one self-contained HTML file a lead can open anywhere.

Charts are inline SVG drawn here; there is no script, no external resource and no link, and a content
security policy says so to the browser as well. Every piece of ticket text is escaped: a ticket is
untrusted input, and the report must show its words, never run or follow them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape

from reqgate.bot.audit_summary import SCORE_BUCKETS, IssueDigest, Tally, TicketDigest, percent

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; base-uri 'none'"
_READY, _NEEDS, _BAR, _AXIS = "#2da44e", "#cf222e", "#6e7781", "#d0d7de"
_WIDTH = 640
_MESSAGE_CHARS = 300

_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;margin:24px auto;max-width:1100px;
padding:0 16px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px}
.meta{color:#59636e;margin:0 0 16px}
.kpis{display:flex;gap:12px;flex-wrap:wrap}
.kpi{border:1px solid #d0d7de;border-radius:6px;padding:10px 16px;min-width:120px}
.kpi b{display:block;font-size:24px}
.charts{display:flex;gap:24px;flex-wrap:wrap}
svg text{font:12px system-ui,sans-serif;fill:#1f2328}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #d0d7de;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
td.key,td.needs_info{white-space:nowrap}td.key{font-family:ui-monospace,monospace}
th.issues{width:45%}
.needs_info{color:#cf222e;font-weight:600}.ready{color:#2da44e;font-weight:600}
ul.issues{margin:0;padding-left:18px}
.cat{display:inline-block;border-radius:10px;padding:0 7px;font-size:12px;background:#ddf4ff;margin-right:4px}
.error .cat{background:#ffebe9}
q{color:#59636e;font-style:italic}
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _kpis(tally: Tally) -> str:
    items = [("tickets", str(tally.total)), ("ready", f"{tally.ready} ({percent(tally.ready, tally.total)})"),
             ("need info", str(tally.total - tally.ready))]
    return '<div class="kpis">' + "".join(
        f'<div class="kpi"><b>{_e(value)}</b>{_e(label)}</div>' for label, value in items) + "</div>"


def _svg(title: str, height: int, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{_WIDTH}" height="{height}" '
            f'viewBox="0 0 {_WIDTH} {height}"><title>{_e(title)}</title>{"".join(body)}</svg>')


def _type_chart(tally: Tally) -> str:
    """One bar per ticket type, green for ready and red for needs info, as shares of that type."""
    rows = sorted(tally.per_type.items(), key=lambda item: -item[1][0])
    left, right, row, top = 70, 190, 28, 26
    span = _WIDTH - left - right
    body = [f'<rect x="{left}" y="2" width="12" height="12" fill="{_READY}"/>',
            f'<text x="{left + 16}" y="12">ready</text>',
            f'<rect x="{left + 70}" y="2" width="12" height="12" fill="{_NEEDS}"/>',
            f'<text x="{left + 86}" y="12">needs info</text>']
    for index, (name, (count, ready)) in enumerate(rows):
        y = top + index * row
        ready_width = round(span * ready / count) if count else 0
        body.append(f'<text x="0" y="{y + 15}">{_e(name)}</text>')
        body.append(f'<rect x="{left}" y="{y}" width="{ready_width}" height="20" fill="{_READY}"/>')
        body.append(f'<rect x="{left + ready_width}" y="{y}" width="{span - ready_width}" height="20" '
                    f'fill="{_NEEDS}"/>')
        body.append(f'<text x="{left + span + 8}" y="{y + 15}">{ready} of {count} ready '
                    f'({percent(ready, count)})</text>')
    return _svg("Ready per ticket type", top + 8 + len(rows) * row, body)


def _category_chart(tally: Tally, limit: int = 12) -> str:
    """Tickets with a shown finding of each category, most frequent first."""
    rows = tally.categories.most_common(limit)
    if not rows:
        return "<p>No finding was shown on any ticket.</p>"
    left, right, row = 110, 110, 24
    span, peak = _WIDTH - left - right, rows[0][1]
    body: list[str] = []
    for index, (category, count) in enumerate(rows):
        y = 6 + index * row
        width = max(1, round(span * count / peak))
        body.append(f'<text x="0" y="{y + 13}">{_e(category)}</text>')
        body.append(f'<rect x="{left}" y="{y}" width="{width}" height="16" fill="{_BAR}"/>')
        body.append(f'<text x="{left + width + 6}" y="{y + 13}">{count} ({percent(count, tally.total)})</text>')
    return _svg("Tickets per issue category", 12 + len(rows) * row, body)


def _score_chart(tally: Tally) -> str:
    """How many tickets fall in each tenth of the score range."""
    height, bottom, top = 200, 24, 18
    peak = max(tally.scores) or 1
    slot = (_WIDTH - 20) // SCORE_BUCKETS
    body = [f'<line x1="10" y1="{height - bottom}" x2="{_WIDTH - 10}" y2="{height - bottom}" stroke="{_AXIS}"/>']
    for index, count in enumerate(tally.scores):
        x = 10 + index * slot
        bar = round((height - bottom - top) * count / peak)
        low = index * 100 // SCORE_BUCKETS
        high = (index + 1) * 100 // SCORE_BUCKETS - (index < SCORE_BUCKETS - 1)
        body.append(f'<rect x="{x + 4}" y="{height - bottom - bar}" width="{slot - 8}" height="{bar}" '
                    f'fill="{_BAR}"/>')
        body.append(f'<text x="{x + slot / 2}" y="{height - bottom - bar - 4}" text-anchor="middle">{count}</text>')
        body.append(f'<text x="{x + slot / 2}" y="{height - 6}" text-anchor="middle">{low}–{high}</text>')
    return _svg("Tickets per score range", height, body)


def _issue(issue: IssueDigest) -> str:
    message = issue.message if len(issue.message) <= _MESSAGE_CHARS else issue.message[: _MESSAGE_CHARS - 1] + "…"
    quote = f" <q>{_e(issue.quote)}</q>" if issue.quote else ""
    blocking = " (blocks)" if issue.mode == "error" else ""
    return (f'<li class="{_e(issue.mode)}"><span class="cat">{_e(issue.category)}</span>'
            f"{_e(message)}{blocking}{quote}</li>")


def _ticket_row(ticket: TicketDigest) -> str:
    verdict = "needs info" if ticket.verdict == "needs_info" else ticket.verdict
    issues = ('<ul class="issues">' + "".join(_issue(i) for i in ticket.issues) + "</ul>") if ticket.issues else ""
    return (f'<tr><td class="key">{_e(ticket.key)}</td><td>{_e(ticket.title)}</td><td>{_e(ticket.ticket_type)}</td>'
            f'<td class="{_e(ticket.verdict)}">{_e(verdict)}</td><td>{ticket.score}</td><td>{issues}</td></tr>')


def _tickets(tally: Tally) -> str:
    tickets = tally.neediest()
    if not tickets:
        return "<p>No tickets.</p>"
    return ("<table><thead><tr><th>key</th><th>title</th><th>type</th><th>verdict</th><th>score</th>"
            '<th class="issues">top issues</th></tr></thead><tbody>' + "".join(map(_ticket_row, tickets)) + "</tbody></table>")


def render_report(tally: Tally, *, source: str, config_source: str, with_llm: bool,
                  now: datetime | None = None) -> str:
    when = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    mode = "rules and LLM" if with_llm else "rules only"
    listed = len(tally.neediest())
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>ReqGate readiness report: {_e(source)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Backlog readiness</h1>",
        f'<p class="meta">{_e(source)} · {tally.total} tickets · {mode} · configuration: {_e(config_source)} · {_e(when)}</p>',
        _kpis(tally),
        '<div class="charts"><section><h2>Ready per ticket type</h2>', _type_chart(tally), "</section>",
        "<section><h2>Most frequent issues</h2>", _category_chart(tally), "</section></div>",
        "<section><h2>Scores</h2>", _score_chart(tally), "</section>",
        f"<section><h2>Tickets most in need ({listed} of {tally.total})</h2>", _tickets(tally), "</section>",
        "</body></html>",
        "",
    ])
