"""The site's HTML templates (jinja2, autoescaped), its stylesheet and its one small script.

Every page is self-contained: the stylesheet is a file of the site, the sorting script is inline,
links are relative (`root` is the way back to the site's top), and nothing is requested from
another host: no CDN, no web font, no external script or image.
"""

from __future__ import annotations

import jinja2

STYLE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1b1f23; }
header { background: #12355b; color: #fff; padding: 10px 24px; }
header a { color: #fff; margin-right: 18px; text-decoration: none; font-weight: 600; }
header .brand { font-size: 1.1em; margin-right: 32px; }
main { padding: 12px 24px 40px; max-width: 1500px; }
table { border-collapse: collapse; margin: 8px 0 20px; font-size: 0.9em; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; }
th.sortable { cursor: pointer; user-select: none; }
th.sortable::after { content: " \\2195"; color: #888; }
th[aria-sort="ascending"]::after { content: " \\2191"; color: #000; }
th[aria-sort="descending"]::after { content: " \\2193"; color: #000; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #1a7f37; font-weight: 600; } .ko { color: #cf222e; } .muted { color: #6e7781; }
.hidden-gold { color: #6e7781; font-style: italic; }
.note { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; margin: 8px 0; }
.facts { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 8px 0 16px; }
.facts div { min-width: 180px; } .facts b { display: block; font-size: 0.8em; color: #57606a; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em; }
pre { background: #f6f8fa; padding: 8px 12px; overflow-x: auto; }
.q { max-width: 620px; }
"""

SORT_JS = """
document.querySelectorAll('table.sortable-table').forEach(function (table) {
  table.querySelectorAll('th.sortable').forEach(function (th, index) {
    th.addEventListener('click', function () {
      var descending = th.getAttribute('aria-sort') !== 'descending';
      table.querySelectorAll('th.sortable').forEach(function (other) { other.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      var column = Array.prototype.indexOf.call(th.parentNode.children, th);
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].getAttribute('data-value'), y = b.cells[column].getAttribute('data-value');
        var nx = parseFloat(x), ny = parseFloat(y), order;
        if (!isNaN(nx) && !isNaN(ny)) { order = nx - ny; }
        else if (isNaN(nx) !== isNaN(ny)) { order = isNaN(nx) ? -1 : 1; }
        else { order = String(x).localeCompare(String(y)); }
        return descending ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

BASE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} — LiveSearch</title>
<link rel="stylesheet" href="{{ root }}style.css">
<link rel="icon" href="data:,">
</head>
<body>
<header>
<a class="brand" href="{{ root }}index.html">LiveSearch</a>
<a href="{{ root }}index.html">Board</a>
<a href="{{ root }}history.html">History</a>
<a href="{{ root }}days/index.html">Days</a>
<a href="{{ root }}downloads/index.html">Downloads</a>
<a href="{{ root }}methodology.html">Methodology</a>
</header>
<main>
{% block main %}{% endblock %}
<p class="muted">A live benchmark of financial search agents on a synthetic market: every entity is fictional.
Built from the frozen files of {{ site.latest }}; gold that could still be an answer is not shown
(<a href="{{ root }}methodology.html#live-answer-rule">the live-answer rule</a>).</p>
</main>
{% block script %}{% endblock %}
</body>
</html>
"""

MACROS = """
{% macro pct(v) %}{% if v is none %}-{% else %}{{ '%.1f%%' % (v * 100) }}{% endif %}{% endmacro %}
{% macro ci(lo, hi) %}{% if lo is none %}-{% else %}[{{ '%.1f' % (lo * 100) }}, {{ '%.1f' % (hi * 100) }}]{% endif %}{% endmacro %}
{% macro usd(v) %}{% if v is none %}-{% else %}${{ '%.4f' % v }}{% endif %}{% endmacro %}
{% macro verdict(v) %}{% if v is none %}<span class="muted">-</span>{% elif v.correct is sameas true %}<span class="ok" title="correct">&#10003;</span>{% elif v.correct is sameas false %}<span class="ko" title="wrong">&#10007;</span>{% else %}<span class="muted" title="judge error">?</span>{% endif %}{% endmacro %}
"""

BOARD = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Board — gold of {{ day.date }}</h1>
{% if board is none %}<p>No leaderboard has been built yet.</p>{% else %}
<div class="facts">
<div><b>scoring set (qid-set hash)</b><code id="qid-set-hash">{{ board.qid_set_hash }}</code></div>
<div><b>gold sha256</b><code id="gold-sha256">{{ day.manifest.sha256 }}</code></div>
<div><b>scored / withdrawn</b>{{ board.scored }} / {{ board.withdrawn }}</div>
<div><b>pool</b>{{ day.manifest.pool_version }}</div>
<div id="stale-gold"><b>stale-gold rate (gold of the day before, scored on this day)</b>
{% if day.stale %}{{ m.pct(day.stale.failure_rate) }} of {{ day.stale.n_compared }} (gold of {{ day.stale.previous_date }}):
{% for name, stats in day.stale.by_refresh_class.items() %}{{ name }} {{ m.pct(stats.failure_rate) }}{% if not loop.last %}, {% endif %}{% endfor %}
{% else %}not audited{% endif %}</div>
</div>
<p>Click a column header to sort. Accuracy is over the scoring set with its 95% Wilson interval;
bands are the entity's visibility (low 0–3, mid 4–6, high 7–10, market for market-wide series).</p>
<table id="board" class="sortable-table">
<thead><tr>
<th class="sortable num">rank</th><th class="sortable">agent</th><th class="sortable">model</th>
<th class="sortable num" id="sort-accuracy">accuracy</th><th class="num">95% CI</th><th class="num">correct/n</th>
{% for t in tiers %}<th class="sortable num">{{ t }}</th>{% endfor %}
{% for b in bands %}<th class="sortable num">{{ b }}</th>{% endfor %}
<th class="sortable num">evidence recall</th><th class="sortable num">cost per correct</th>
<th>qid-set hash</th><th>gold sha256</th>
</tr></thead>
<tbody>
{% for r in rows %}<tr>
<td class="num" data-value="{{ r.rank }}">{{ r.rank }}</td>
<td data-value="{{ r.agent }}"><a href="agents/{{ r.slug }}.html">{{ r.agent }}</a></td>
<td data-value="{{ r.model or '' }}">{{ r.model or '-' }}</td>
<td class="num accuracy" data-value="{{ '%.6f' % r.accuracy }}">{{ m.pct(r.accuracy) }}</td>
<td class="num">{{ m.ci(r.low, r.high) }}</td><td class="num">{{ r.correct }}/{{ r.n }}</td>
{% for t in tiers %}<td class="num" data-value="{{ r.tiers.get(t, '') }}">{{ m.pct(r.tiers.get(t)) }}</td>{% endfor %}
{% for b in bands %}<td class="num" data-value="{{ r.bands.get(b, '') }}">{{ m.pct(r.bands.get(b)) }}</td>{% endfor %}
<td class="num" data-value="{{ '' if r.recall is none else r.recall }}">{{ m.pct(r.recall) }}</td>
<td class="num" data-value="{{ '' if r.cost_per_correct is none else r.cost_per_correct }}">{{ m.usd(r.cost_per_correct) }}</td>
<td><code title="{{ r.qid_set_hash }}">{{ r.qid_set_hash[:12] }}…</code></td>
<td><code title="{{ r.gold_sha256 }}">{{ r.gold_sha256[:12] }}…</code></td>
</tr>{% endfor %}
</tbody></table>
{% if board.unranked %}<h2>Not ranked</h2><ul>
{% for u in board.unranked %}<li>{{ u.agent or '(unreadable run)' }}: {{ u.reason }}</li>{% endfor %}</ul>{% endif %}
{% if skipped %}<h2 id="skipped-runs">Runs not published</h2><ul>
{% for s in skipped %}<li>{{ s.agent or '(unreadable run)' }} (<code>{{ s.run_dir }}</code>): {{ s.reason }}</li>{% endfor %}</ul>{% endif %}
{% for n in board.notes %}<p class="note">{{ n }}</p>{% endfor %}
{% if board.judge_models %}<p>Judge: {{ board.judge_models | join(', ') }}</p>{% endif %}
{% endif %}
<p><a href="days/{{ day.date }}.html">The questions of {{ day.date }}</a> ·
<a href="history.html">Every agent over time</a> ·
<a href="downloads/index.html">Download the data</a> ·
<a href="methodology.html">How a score is made</a></p>
{% endblock %}
{% block script %}<script>{{ sort_js | safe }}</script>{% endblock %}
"""

HISTORY = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>History</h1>
<p>Each agent's accuracy per gold date with its 95% interval; a dashed line marks a new pool version.</p>
{{ svg | safe }}
<table id="history-table">
<thead><tr><th>gold date</th><th>pool</th>{% for a in agents %}<th><a href="agents/{{ a.slug }}.html">{{ a.agent }}</a></th>{% endfor %}</tr></thead>
<tbody>
{% for d in days %}<tr{% if d.pool_change %} class="pool-change"{% endif %}>
<td><a href="days/{{ d.date }}.html">{{ d.date }}</a></td>
<td>{{ d.pool }}{% if d.pool_change %} <b>(new)</b>{% endif %}</td>
{% for a in agents %}{% set p = d.points.get(a.agent) %}<td class="num">{% if p %}{{ m.pct(p.accuracy) }} {{ m.ci(p.low, p.high) }}{% else %}-{% endif %}</td>{% endfor %}
</tr>{% endfor %}
</tbody></table>
{% endblock %}
"""

AGENT = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Agent {{ agent }}</h1>
<h2>Runs</h2>
<table id="runs">
<thead><tr><th>gold date</th><th>model</th><th class="num">rank</th><th class="num">accuracy</th><th class="num">95% CI</th>
<th class="num">correct/n</th><th class="num">tool calls</th><th class="num">input tokens</th><th class="num">output tokens</th>
<th class="num">cost</th><th class="num">cost per correct</th><th class="num">wall s</th><th>trajectories</th></tr></thead>
<tbody>
{% for r in runs %}<tr>
<td><a href="../days/{{ r.date }}.html">{{ r.date }}</a></td><td>{{ r.model or '-' }}</td>
<td class="num">{{ r.rank if r.rank is not none else 'not ranked' }}</td>
<td class="num">{{ m.pct(r.accuracy) }}</td><td class="num">{{ m.ci(r.low, r.high) }}</td><td class="num">{{ r.correct }}/{{ r.n }}</td>
{% if r.usage %}<td class="num">{{ r.usage.tool_calls }}</td><td class="num">{{ r.usage.input_tokens }}</td><td class="num">{{ r.usage.output_tokens }}</td>
<td class="num">{{ m.usd(r.usage.cost_usd) }}</td><td class="num">{{ m.usd(r.usage.cost_per_correct_usd) }}</td><td class="num">{{ '%.1f' % r.usage.wall_s }}</td>
{% else %}<td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td>{% endif %}
<td>{% if r.trajectories %}<a href="../{{ r.trajectories }}">trajectories.jsonl</a> ({{ r.trajectory_lines }} of {{ r.n_served }}{% if r.trajectory_withheld %}; {{ r.trajectory_withheld }} withheld with their live gold{% endif %}){% elif r.trajectory_problem %}<span class="muted trajectory-problem">{{ r.trajectory_problem }}</span>{% else %}<span class="muted">none recorded</span>{% endif %}</td>
</tr>{% if r.unranked_reason %}<tr><td colspan="13" class="muted">not ranked: {{ r.unranked_reason }}</td></tr>{% endif %}{% endfor %}
</tbody></table>
{% if skipped %}<h2 id="skipped-runs">Runs not published</h2><ul>
{% for s in skipped %}<li>{{ s.date }} (<code>{{ s.run_dir }}</code>): {{ s.reason }}</li>{% endfor %}</ul>{% endif %}
<h2>Breakdowns</h2>
<p>The latest run ({{ latest_date }}) and every run pooled (correct / questions scored).</p>
{% for dim in breakdowns %}
<h3>By {{ dim.name }}</h3>
<table class="breakdown" data-dimension="{{ dim.name }}">
<thead><tr><th>{{ dim.name }}</th><th class="num">latest</th><th class="num">all runs</th></tr></thead>
<tbody>{% for row in dim.rows %}<tr><td>{{ row.key }}</td>
<td class="num">{% if row.latest %}{{ m.pct(row.latest.correct / row.latest.n) }} ({{ row.latest.correct }}/{{ row.latest.n }}){% else %}-{% endif %}</td>
<td class="num">{{ m.pct(row.pooled.correct / row.pooled.n) }} ({{ row.pooled.correct }}/{{ row.pooled.n }})</td></tr>{% endfor %}
</tbody></table>
{% endfor %}
{% endblock %}
"""

DAYS = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Frozen days</h1>
<table id="days">
<thead><tr><th>gold date</th><th>pool</th><th class="num">served</th><th class="num">withdrawn</th><th class="num">gold shown</th><th>gold sha256</th><th>downloads</th></tr></thead>
<tbody>{% for d in days %}<tr><td><a href="{{ d.date }}.html">{{ d.date }}</a></td><td>{{ d.pool }}</td>
<td class="num">{{ d.served }}</td><td class="num">{{ d.withdrawn }}</td><td class="num">{{ d.shown }}</td>
<td><code>{{ d.sha256[:16] }}…</code></td><td><a href="../downloads/index.html#d{{ d.date }}">files</a></td></tr>{% endfor %}
</tbody></table>
{% endblock %}
"""

DAY = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Questions of {{ day.date }}</h1>
<div class="facts">
<div><b>gold sha256</b><code>{{ day.manifest.sha256 }}</code></div>
<div><b>pool</b>{{ day.manifest.pool_version }}</div>
<div><b>served / withdrawn</b>{{ day.served | length }} / {{ day.manifest.withdrawn | length }}</div>
<div><b>gold shown</b>{{ shown }} of {{ day.served | length }}{% if hidden_count %} ({{ hidden_count }} withheld: <a href="../methodology.html#live-answer-rule">why</a>){% endif %}</div>
<div><b>stale-gold rate</b>{% if day.stale %}{{ m.pct(day.stale.failure_rate) }} ({{ day.stale.n_failed }}/{{ day.stale.n_compared }}){% else %}not audited{% endif %}</div>
</div>
{% if runs %}<h2>Agents</h2><table><thead><tr><th class="num">rank</th><th>agent</th><th class="num">accuracy</th><th class="num">95% CI</th></tr></thead><tbody>
{% for r in runs %}<tr><td class="num">{{ r.rank if r.rank is not none else '-' }}</td><td><a href="../agents/{{ r.slug }}.html">{{ r.agent }}</a></td>
<td class="num">{{ m.pct(r.accuracy) }}</td><td class="num">{{ m.ci(r.low, r.high) }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% if skipped %}<h2 id="skipped-runs">Runs not published</h2><ul>
{% for s in skipped %}<li>{{ s.agent or '(unreadable run)' }} (<code>{{ s.run_dir }}</code>): {{ s.reason }}</li>{% endfor %}</ul>{% endif %}
<h2>Served questions</h2>
<p>Where a gold is withheld (the live-answer rule), so are the agents' verdicts on that question and its evidence pages:
a tick would tell the answer.</p>
<table id="questions">
<thead><tr><th>qid</th><th>question</th><th>tier</th><th>class</th><th class="num">vis.</th><th>gold</th>
{% for r in runs %}<th>{{ r.agent }}</th>{% endfor %}<th>evidence pages</th></tr></thead>
<tbody>
{{ rows_html | safe }}
</tbody></table>
{% endblock %}
"""

QUESTION = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Question <code>{{ qid }}</code></h1>
<p class="q" lang="en" id="text-en">{{ text_en }}</p>
{% if text_zh %}<p class="q" lang="zh" id="text-zh">{{ text_zh }}</p>{% endif %}
<div class="facts">
<div><b>entity</b>{{ entity }}{% if entity_name %} ({{ entity_name }}){% endif %}</div>
<div><b>tier</b>{{ tier }}</div><div><b>refresh class</b>{{ refresh_class }}</div>
<div><b>asset class</b>{{ asset_class }}</div><div><b>visibility</b>{{ visibility }}</div>
{% if family %}<div><b>family (program shape)</b>{{ family }}</div>{% endif %}
</div>
<h2>Program</h2>
{% if program_lines %}<pre id="program">{% for line in program_lines %}{{ line }}
{% endfor %}</pre>
<details><summary>as JSON</summary><pre>{{ program_json }}</pre></details>
{% else %}<p class="muted">Not in the current pool (served by an earlier pool version): its program is in that pool's file.</p>{% endif %}
<h2>Matching rule</h2>
<p id="rule">{{ rule }}</p>
<h2>Gold on each frozen day</h2>
<table id="gold-by-day">
<thead><tr><th>gold date</th><th>status</th><th>gold</th><th>observed period</th>{% for a in agents %}<th>{{ a }}</th>{% endfor %}</tr></thead>
<tbody>
{{ rows_html | safe }}
</tbody></table>
{% endblock %}
"""

DOWNLOADS = """{% extends "base.html" %}
{% block main %}
<h1>Downloads</h1>
<p>Per frozen day: the served questions, the gold where the <a href="../methodology.html#live-answer-rule">live-answer rule</a>
shows it, and every agent's verdicts, in JSONL and Parquet (a <code>date</code> column of type DATE in every file).
The <a href="README.md">dataset card</a> lets Hugging Face <code>datasets</code> load the folder:</p>
<pre>from datasets import load_dataset
gold = load_dataset("path/to/downloads", "gold", split="train")   # or "questions", "verdicts"</pre>
<table id="downloads">
<thead><tr><th>gold date</th><th>questions</th><th>gold</th><th>verdicts</th><th>trajectories</th></tr></thead>
<tbody>{% for d in days %}<tr id="d{{ d.date }}"><td><a href="../days/{{ d.date }}.html">{{ d.date }}</a></td>
{% for t in ('questions', 'gold', 'verdicts') %}<td><a href="{{ d.date }}/{{ t }}.jsonl">JSONL</a> · <a href="{{ d.date }}/{{ t }}.parquet">Parquet</a></td>{% endfor %}
<td>{% for name, path in d.trajectories %}<a href="{{ path }}">{{ name }}</a>{% if not loop.last %} · {% endif %}{% else %}-{% endfor %}</td>
</tr>{% endfor %}</tbody></table>
{% endblock %}
"""

METHODOLOGY = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Methodology</h1>
<h2>How a question is made</h2>
<p>A question is a triple: a frozen text (English, and Chinese for Chinese-market entities) that refers to time only
relatively; a <b>gold program</b> — tool calls on a financial data service over MCP with dates relative to the as-of day,
then one declarative extractor (no code, no expressions); and a fixed <b>matching rule</b>. Construction lists the data
service's tools, probes which tools answer for each asset class, draws one entity per visibility level 0–10, enumerates
every extractor that returns a value, replays each candidate at 20 or more past days (its <b>dynamics</b>: how often its
answer changes, which decides its refresh class and tier), verbalizes the survivors in both languages under a date gate
(no absolute date in any text) and a text lint, and filters the pool so that no template every agent solves stays in it.</p>
<h3>Question families</h3>
<p>Besides single lookups and window aggregates, enumeration drafts multi-step families, each a typed chain of calls:</p>
<table id="families"><thead><tr><th>family</th><th>chain</th><th>program</th></tr></thead><tbody>
{% for f in families %}<tr><td><code>{{ f[0] }}</code></td><td>{{ f[1] }}</td><td>{{ f[2] }}</td></tr>{% endfor %}
</tbody></table>
<h2>How a question is re-dated and frozen</h2>
<p>Every day D each program is re-dated (its relative dates resolved on D's trading calendars) and executed against the
data service with its clock at D's cut-off, 23:59:59 America/New_York: a backfill gives the bytes of the day itself.
Blocking checks run on the computed answers, and only then is <code>gold_answers_D.jsonl</code> written, once, with a
manifest (sha256, pool version, cut-off, withdrawn questions). A question whose program returns nothing on D is
withdrawn from D's scoring set; above 5% withdrawn the day fails and nothing is frozen.</p>
<h2>How a run is scored</h2>
<p>Agents answer D's served questions; the evaluator scores them against D's gold only, never another day's. Units are
normalised (thousands, 万/亿, %, currency words) and a sign mismatch always fails. <code>exact</code>: equal after
normalisation; <code>approx</code>: within the rule's absolute or relative tolerance (never looser than 1% relative);
<code>semantic</code> (names, periods): a deterministic comparison, then an LLM judge of another model family. A missing
answer scores 0 (fixed denominator). Accuracy carries a 95% Wilson score interval; runs rank together only on the same
scoring set (qid-set hash) and gold date. Evidence recall is the share of web-answerable questions for which a web agent
opened a page holding the evidence.</p>
<h2>Tiers, visibility and refresh classes</h2>
<ul>
<li><b>T1</b> time-sensitive: the answer moves on most sessions, as measured. <b>T2</b> simple historical lookup: one published
record. <b>T3</b> complex historical investigation: dependent calls, arithmetic across calls, a path over a window (a drawdown, a volatility) or a screen; one call with one aggregate is T1 or T2 by its dynamics.</li>
<li><b>Visibility</b> 0 (obscure: only the exchange's own pages) to 10 (household name), reported in bands low 0–3, mid 4–6,
high 7–10 and <i>market</i> for market-wide series. It governs how hard the evidence is to find on the offline web, never
whether it exists.</li>
<li><b>Refresh class</b> — daily, weekly, monthly, quarterly, annual, static — how often the answer really changed when the
question was replayed at past days.</li>
</ul>
<h2 id="live-answer-rule">The live-answer rule</h2>
<p>Publishing this site must never hand out an answer an agent could still be scored on. The gold of a question on a frozen
day is <b>not shown</b> when it could still be the answer on the day after the latest frozen day ({{ site.protected }}, the
newest day frozen when this site was built, whatever day the site shows last):</p>
<ul>{% for line in rule_lines %}<li>{{ line }}</li>{% endfor %}</ul>
<p>Withheld gold is absent from every page and download, and so is everything that would tell it: each agent's verdict
on that question (correct or not, the judge and the reason, which quotes the gold), its evidence pages and the agents'
trajectories of it; accuracies over many questions stay. What the rule hides over the {{ n_days }} frozen day(s) on this site, by
the refresh class served on {{ site.protected }}:</p>
<table id="hidden-by-class">
<thead><tr><th>refresh class</th><th class="num">questions</th><th class="num">frozen ok gold answers</th>
<th class="num">hidden</th><th class="num">questions never shown</th></tr></thead>
<tbody>{% for name, c in counts.items() %}<tr><td>{{ name }}</td><td class="num">{{ c.questions }}</td><td class="num">{{ c.answers }}</td>
<td class="num">{{ c.hidden }}</td><td class="num">{{ c.never_shown }}</td></tr>{% endfor %}</tbody></table>
<h2>How to submit a run</h2>
<p>Answer a day's served questions (<code>served_questions_D.jsonl</code>, from the downloads) with one prediction per line,
<code>{"qid": ..., "answer": ...}</code>, and score it against that day's gold:</p>
<pre>livesearch agent run --agent web --model MODEL --searxng-url http://127.0.0.1:8888 \\
    --served data/served/served_questions_D.jsonl --out data/runs/D/my-agent
livesearch evaluate --served data/served/served_questions_D.jsonl --gold data/gold/gold_answers_D.jsonl \\
    --predictions data/runs/D/my-agent/predictions.jsonl --out data/runs/D/my-agent
livesearch leaderboard --runs data/runs/D/* --out data/runs/D/leaderboard</pre>
<p>To appear on this board every day, register the agent (<code>livesearch agent register NAME --kind web --model ...</code>):
the daily loop runs it, scores it and rebuilds this site.</p>
{% endblock %}
"""

TEMPLATES = {"base.html": BASE, "macros.html": MACROS, "board.html": BOARD, "history.html": HISTORY,
             "agent.html": AGENT, "days.html": DAYS, "day.html": DAY, "question.html": QUESTION,
             "downloads.html": DOWNLOADS, "methodology.html": METHODOLOGY}

# The question families of construction/families.py (docs/construction.md keeps the same table).
FAMILIES = (
    ("growth_period", "a statement field of the latest reported period against the same period a year earlier",
     "1 call, pct_difference with years_back: 1"),
    ("growth_year", "the latest annual report against the fiscal year before (A-shares, end_type 4)",
     "1 call, anchor at the last year end"),
    ("margin", "two fields of the latest report: net margin, operating margin, R&D expense ratio", "1 call, ratio (×100)"),
    ("payout", "the latest implemented dividend → the EPS of the period it pays for",
     "dividend → fina_indicator (period ref), ratio"),
    ("exdate_close, since_exdate", "the ex-date of the latest implemented dividend → the close that day / the return since",
     "dividend → daily (trade_date / start_date ref)"),
    ("since_report", "the announcement day of the latest report → the return since",
     "income → daily (start_date ref), pct_change"),
    ("top_holding", "a fund's largest holding in its latest report → that stock's close, change, turnover, turnover rate, "
     "market value", "fund_portfolio → daily/daily_basic (ts_code ref: argmax of mkv across the holdings)"),
    ("top_constituent", "an index's heaviest constituent at its latest rebalance → that stock's figures",
     "index_weight → daily/daily_basic"),
    ("adj_return", "a 20- or 60-session return with each close times its adjustment factor",
     "bars + adjustment factor, times join, pct_change"),
    ("fx_convert", "a Hong Kong (US) figure on the latest session → CNY at that day's USD/CNH (and USD/HKD) bid close",
     "bars → fx_daily (trade_date ref), product then ratio"),
    ("price_to_nav", "the latest published NAV date → the ETF's close that day, premium over the NAV",
     "fund_nav → fund_daily, pct_difference"),
    ("compare", "two instruments of one class over the same 5/20/60 sessions, each against a near and a far one on the "
     "visibility scale", "2 bar calls, pct_change each, difference"),
    ("drawdown", "the maximum drawdown over 60/120 sessions of adjusted closes (an index's levels): the fall in percent, "
     "its peak day, its trough day", "bars × adjustment factor, max_drawdown / drawdown_peak / drawdown_trough"),
    ("volume_day", "the change on the session of the highest volume among the last 20/60", "bars, argmax of vol read at pct_chg"),
    ("best_month", "the month of the largest gain among the last 12/24 completed months → its close, its turnover value",
     "monthly bars, argmax of pct_chg read at close / amount"),
    ("screen", "an index's constituents or an industry index's members on the latest session: which fell most, which "
     "had the highest turnover value or rate, how many closed up", "index_weight/index_member → the session's "
     "cross-section of daily/daily_basic, select.within"),
    ("three_indices", "three named indices over the same 5/20/60 sessions: which rose (fell) most",
     "3 index_daily windows, pct_change each, pick"),
    ("holding_industry", "a fund's largest holding → that stock's industry index → the index's return over 5/20/60 "
     "sessions", "fund_portfolio → index_member → index_daily (two ts_code refs), pct_change"),
    ("named_high", "a stock named by its short name or ticker alone (where exactly one entity answers to it) → its "
     "highest close since its latest report's announcement", "income → daily (start_date ref), max"),
)


def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.DictLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
