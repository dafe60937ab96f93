"""The site's HTML templates (jinja2, autoescaped); the stylesheet and scripts are in assets.py.

Every page is self-contained: the stylesheet is a file of the site, the scripts are inline,
links are relative (`root` is the way back to the site's top), and nothing is requested from
another host: no CDN, no web font, no external script or image.
"""

from __future__ import annotations

import jinja2

from livesearch_pipeline.evaluation.leaderboard import wilson_interval
from livesearch_pipeline.site.assets import FILTER_JS, SORT_JS, STYLE_CSS

__all__ = ["FAMILIES", "FILTER_JS", "SORT_JS", "STYLE_CSS", "TEMPLATES", "environment", "rate"]


def rate(correct: int, n: int) -> dict | None:
    """A rate with its 95% Wilson interval, as the macro `m.rate` prints it (a global of the
    templates too); None without trials."""
    if n <= 0:
        return None
    low, high = wilson_interval(correct, n)
    return {"value": correct / n, "low": low, "high": high, "correct": correct, "n": n}

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
<a href="{{ root }}run-it-yourself.html">Run it yourself</a>
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
{% macro ci(lo, hi) %}{% if lo is none %}-{% else %}<span class="ci" title="95% Wilson interval">[{{ '%.1f%%' % (lo * 100) }}, {{ '%.1f%%' % (hi * 100) }}]</span>{% endif %}{% endmacro %}
{% macro rate(r, br=true) %}{% if r is none %}-{% else %}{{ '%.1f%%' % (r.value * 100) }}{% if br %}<br>{% else %} {% endif %}<span class="ci" title="95% Wilson interval of {{ r.correct }}/{{ r.n }}">[{{ '%.1f%%' % (r.low * 100) }}, {{ '%.1f%%' % (r.high * 100) }}]</span>{% endif %}{% endmacro %}
{% macro usd(v) %}{% if v is none %}-{% else %}${{ '%.4f' % v }}{% endif %}{% endmacro %}
{% macro hash(v, n=12) %}<code class="hash" title="{{ v }}">{{ v[:n] }}…</code>{% endmacro %}
{% macro sortable(label, numeric=false, id=none) %}<th class="sortable{% if numeric %} num{% endif %}" tabindex="0" aria-sort="none"{% if id %} id="{{ id }}"{% endif %}>{{ label }}</th>{% endmacro %}
"""

BOARD = """{% extends "base.html" %}{% import "macros.html" as m %}
{% macro board_row(r, ranked) %}<tr data-agent="{{ r.agent }}">
{% if ranked %}<td class="num rank" data-value="{{ r.rank }}">{{ r.rank }}</td>{% endif %}
<td data-value="{{ r.agent }}"><a href="agents/{{ r.slug }}.html">{{ r.agent }}</a></td>
<td data-value="{{ r.model or '' }}">{{ r.model or '-' }}</td>
<td data-value="{{ r.budget }}">{{ r.budget }}</td>
<td class="num accuracy" data-value="{{ '%.6f' % r.accuracy }}">{{ m.pct(r.accuracy) }}<br>{{ m.ci(r.low, r.high) }}</td>
<td class="num" data-value="{{ r.correct }}">{{ r.correct }}/{{ r.n }}</td>
{% for t in tiers %}{% set x = r.tiers.get(t) %}<td class="num" data-value="{{ '' if x is none else x.value }}">{{ m.rate(x) }}</td>{% endfor %}
{% for b in bands %}{% set x = r.bands.get(b) %}<td class="num" data-value="{{ '' if x is none else x.value }}">{{ m.rate(x) }}</td>{% endfor %}
<td class="num" data-value="{{ '' if r.recall is none else r.recall.value }}">{{ m.rate(r.recall) }}</td>
<td class="num" data-value="{{ '' if r.cost_per_correct is none else r.cost_per_correct }}">{{ m.usd(r.cost_per_correct) }}</td>
</tr>{% endmacro %}
{% macro board_head(ranked, id) %}<thead><tr>
{% if ranked %}{{ m.sortable('rank', true) }}{% endif %}{{ m.sortable('agent') }}{{ m.sortable('model') }}{{ m.sortable('read budget') }}
{{ m.sortable('accuracy', true, id) }}<th class="num">correct/n</th>
{% for t in tiers %}{{ m.sortable(t, true) }}{% endfor %}
{% for b in bands %}{{ m.sortable(b, true) }}{% endfor %}
{{ m.sortable('evidence recall', true) }}{{ m.sortable('cost per correct', true) }}
</tr></thead>{% endmacro %}
{% block main %}
<h1>Board — gold of {{ day.date }}</h1>
{% if board is none %}<p>No leaderboard has been built yet.</p>{% else %}
<div class="facts">
<div><b>scoring set (qid-set hash)</b><code class="hash" id="qid-set-hash">{{ board.qid_set_hash }}</code></div>
<div><b>gold sha256</b><code class="hash" id="gold-sha256">{{ day.manifest.sha256 }}</code></div>
<div><b>scored / withdrawn</b>{{ board.scored }} / {{ board.withdrawn }}</div>
<div><b>pool</b>{{ day.manifest.pool_version }}</div>
<div id="stale-gold"><b>stale-gold rate (gold of the day before, scored on this day)</b>
{% if day.stale %}{{ m.rate(rate(day.stale.n_failed, day.stale.n_compared), false) }} of {{ day.stale.n_compared }} (gold of {{ day.stale.previous_date }}):
{% for name, stats in day.stale.by_refresh_class.items() %}{{ name }} {{ m.rate(rate(stats.failed, stats.n), false) }}{% if not loop.last %}, {% endif %}{% endfor %}
{% else %}not audited{% endif %}</div>
</div>
<p>Click a column header (or focus it and press Enter) to sort. Every rate carries its 95% Wilson interval
(its counts on hover); bands are the entity's visibility (low 0–3, mid 4–6, high 7–10, market for market-wide series).
Every run in these tables was scored on the scoring set and gold above (the same qid-set hash and gold sha256:
runs rank together only then). <a href="index.html#agents">What each agent is</a> is below the tables.</p>
<h2>Ranked agents</h2>
{% if rows %}<div class="table-scroll"><table id="board" class="sortable-table">
{{ board_head(true, 'sort-accuracy') }}
<tbody>
{% for r in rows %}{{ board_row(r, true) }}{% endfor %}
</tbody></table></div>{% else %}<p>No agent other than the references was ranked on this day.</p>{% endif %}
{% if reference %}<h2 id="reference-runs">Reference runs — calibration, not ranked</h2>
<p>The oracle runs each question's gold program itself (the gold's self-test) and stale answers with the previous
day's gold (what a stale answer scores): they bound the scale, they do not compete.</p>
<div class="table-scroll"><table id="reference" class="sortable-table">
{{ board_head(false, none) }}
<tbody>
{% for r in reference %}{{ board_row(r, false) }}{% endfor %}
</tbody></table></div>{% endif %}
{% if board.unranked %}<h2>Not ranked</h2><ul>
{% for u in board.unranked %}<li>{{ u.agent or '(unreadable run)' }}: {{ u.reason }}</li>{% endfor %}</ul>{% endif %}
{% if skipped %}<h2 id="skipped-runs">Runs not published</h2><ul>
{% for s in skipped %}<li>{{ s.agent or '(unreadable run)' }} (<code>{{ s.run_dir }}</code>): {{ s.reason }}</li>{% endfor %}</ul>{% endif %}
{% for n in board.notes %}<p class="note">{{ n }}</p>{% endfor %}
{% if board.judge_models %}<p>Judge: {{ board.judge_models | join(', ') }}</p>{% endif %}
<h2 id="agents">What each agent is</h2>
<div class="table-scroll"><table id="agent-cards">
<thead><tr><th>agent</th><th>kind</th><th>what it does</th><th>model</th><th>read budget</th><th>code version</th></tr></thead>
<tbody>{% for c in cards %}<tr data-agent="{{ c.agent }}"{% if c.reference %} class="reference"{% endif %}>
<td><a href="agents/{{ card_slugs[c.agent] }}.html">{{ c.agent }}</a></td><td>{{ c.kind }}</td><td>{{ c.what }}</td>
<td>{{ c.model or '-' }}</td><td>{{ c.budget }}</td><td><code>{{ c.code_version }}</code></td></tr>{% endfor %}
</tbody></table></div>
{% endif %}
<p><a href="days/{{ day.date }}.html">The questions of {{ day.date }}</a> ·
<a href="history.html">Every agent over time</a> ·
<a href="downloads/index.html">Download the data</a> ·
<a href="run-it-yourself.html">Score your own agent</a> ·
<a href="methodology.html">How a score is made</a></p>
{% endblock %}
{% block script %}<script>{{ sort_js | safe }}</script>{% endblock %}
"""

HISTORY = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>History</h1>
<p>Each agent's accuracy per gold date with its 95% Wilson interval; a dashed line marks a new pool version.</p>
{{ svg | safe }}
<div class="table-scroll"><table id="history-table">
<thead><tr><th>gold date</th><th>pool</th>{% for a in agents %}<th><a href="agents/{{ a.slug }}.html">{{ a.agent }}</a></th>{% endfor %}</tr></thead>
<tbody>
{% for d in days %}<tr{% if d.pool_change %} class="pool-change"{% endif %}>
<td><a href="days/{{ d.date }}.html">{{ d.date }}</a></td>
<td>{{ d.pool }}{% if d.pool_change %} <b>(new)</b>{% endif %}</td>
{% for a in agents %}{% set p = d.points.get(a.agent) %}<td class="num">{% if p %}{{ m.pct(p.accuracy) }}<br>{{ m.ci(p.low, p.high) }}{% else %}-{% endif %}</td>{% endfor %}
</tr>{% endfor %}
</tbody></table></div>
{% endblock %}
"""

AGENT = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Agent {{ agent }}</h1>
<section id="agent-card" class="card{% if card.reference %} reference{% endif %}" data-kind="{{ card.kind }}">
<div class="facts">
<div><b>kind</b>{{ card.kind }}{% if card.reference %} (reference: calibration, not ranked){% endif %}</div>
<div><b>model</b>{{ card.model or 'none' }}</div>
<div><b>read budget per question</b>{{ card.budget }}</div>
<div><b>code version of its newest run</b><code class="hash">{{ card.code_version }}</code></div>
{% if card.harness %}<div><b>harness</b>{{ card.harness }}</div>{% endif %}
</div>
<p>{{ card.what }}.</p>
<p>{% if card.source %}Its code: <code>{{ card.source }}</code> in {% if repository %}<a href="{{ repository }}">the repository</a>{% else %}the livesearch_pipeline repository{% endif %}.{% endif %}
{% if card.registry %} Its registry entry (what the daily loop runs it with):{% else %} Not in this pipeline's registry: its runs were scored from predictions made elsewhere.{% endif %}</p>
{% if card.registry %}<pre id="registry-entry">{{ card.registry | tojson(indent=2) }}</pre>{% endif %}
</section>
<h2>Runs</h2>
<div class="table-scroll"><table id="runs">
<thead><tr><th>gold date</th><th>model</th><th class="num">rank</th><th class="num">accuracy</th>
<th class="num">correct/n</th><th class="num">tool calls</th><th class="num">input tokens</th><th class="num">output tokens</th>
<th class="num">cost</th><th class="num">cost per correct</th><th class="num">wall s</th><th>trajectories</th></tr></thead>
<tbody>
{% for r in runs %}<tr>
<td><a href="../days/{{ r.date }}.html">{{ r.date }}</a></td><td>{{ r.model or '-' }}</td>
<td class="num">{% if card.reference %}reference{% elif r.rank is not none %}{{ r.rank }}{% else %}not ranked{% endif %}</td>
<td class="num">{{ m.pct(r.accuracy) }}<br>{{ m.ci(r.low, r.high) }}</td><td class="num">{{ r.correct }}/{{ r.n }}</td>
{% if r.usage %}<td class="num">{{ r.usage.tool_calls }}</td><td class="num">{{ r.usage.input_tokens }}</td><td class="num">{{ r.usage.output_tokens }}</td>
<td class="num">{{ m.usd(r.usage.cost_usd) }}</td><td class="num">{{ m.usd(r.usage.cost_per_correct_usd) }}</td><td class="num">{{ '%.1f' % r.usage.wall_s }}</td>
{% else %}<td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td>{% endif %}
<td>{% if r.trajectories %}<a href="../{{ r.trajectories }}">trajectories.jsonl</a> ({{ r.trajectory_lines }} of {{ r.n_served }}{% if r.trajectory_withheld %}; {{ r.trajectory_withheld }} withheld with their live gold{% endif %}){% elif r.trajectory_problem %}<span class="muted trajectory-problem">{{ r.trajectory_problem }}</span>{% else %}<span class="muted">none recorded</span>{% endif %}</td>
</tr>{% if r.unranked_reason %}<tr><td colspan="12" class="muted">not ranked: {{ r.unranked_reason }}</td></tr>{% endif %}{% endfor %}
</tbody></table></div>
{% if skipped %}<h2 id="skipped-runs">Runs not published</h2><ul>
{% for s in skipped %}<li>{{ s.date }} (<code>{{ s.run_dir }}</code>): {{ s.reason }}</li>{% endfor %}</ul>{% endif %}
<h2>Breakdowns</h2>
<p>The latest run ({{ latest_date }}) and every run pooled: accuracy with its 95% Wilson interval (correct / questions scored).</p>
{% for dim in breakdowns %}
<h3>By {{ dim.name }}</h3>
<div class="table-scroll"><table class="breakdown" data-dimension="{{ dim.name }}">
<thead><tr><th>{{ dim.name }}</th><th class="num">latest</th><th class="num">all runs</th></tr></thead>
<tbody>{% for row in dim.rows %}<tr><td>{{ row.key }}</td>
<td class="num">{% if row.latest %}{{ m.rate(row.latest, false) }} ({{ row.latest.correct }}/{{ row.latest.n }}){% else %}-{% endif %}</td>
<td class="num">{{ m.rate(row.pooled, false) }} ({{ row.pooled.correct }}/{{ row.pooled.n }})</td></tr>{% endfor %}
</tbody></table></div>
{% endfor %}
{% endblock %}
"""

DAYS = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Frozen days</h1>
<div class="table-scroll"><table id="days">
<thead><tr><th>gold date</th><th>pool</th><th class="num">served</th><th class="num">withdrawn</th><th class="num">gold shown</th><th>gold sha256</th><th>downloads</th></tr></thead>
<tbody>{% for d in days %}<tr><td><a href="{{ d.date }}.html">{{ d.date }}</a></td><td>{{ d.pool }}</td>
<td class="num">{{ d.served }}</td><td class="num">{{ d.withdrawn }}</td><td class="num">{{ d.shown }}</td>
<td>{{ m.hash(d.sha256, 16) }}</td><td><a href="../downloads/index.html#d{{ d.date }}">files</a></td></tr>{% endfor %}
</tbody></table></div>
{% endblock %}
"""

DAY = """{% extends "base.html" %}{% import "macros.html" as m %}
{% block main %}
<h1>Questions of {{ day.date }}</h1>
<div class="facts">
<div><b>gold sha256</b><code class="hash">{{ day.manifest.sha256 }}</code></div>
<div><b>pool</b>{{ day.manifest.pool_version }}</div>
<div><b>served / withdrawn</b>{{ day.served | length }} / {{ day.manifest.withdrawn | length }}</div>
<div><b>gold shown</b>{{ shown }} of {{ day.served | length }}{% if hidden_count %} ({{ hidden_count }} withheld: <a href="../methodology.html#live-answer-rule">why</a>){% endif %}</div>
<div><b>stale-gold rate</b>{% if day.stale %}{{ m.rate(rate(day.stale.n_failed, day.stale.n_compared), false) }} ({{ day.stale.n_failed }}/{{ day.stale.n_compared }}){% else %}not audited{% endif %}</div>
</div>
{% if runs %}<h2>Agents</h2><div class="table-scroll"><table id="day-agents"><thead><tr><th class="num">rank</th><th>agent</th><th class="num">accuracy</th></tr></thead><tbody>
{% for r in runs %}<tr><td class="num">{% if r.reference %}reference{% elif r.rank is not none %}{{ r.rank }}{% else %}-{% endif %}</td><td><a href="../agents/{{ r.slug }}.html">{{ r.agent }}</a></td>
<td class="num">{{ m.pct(r.accuracy) }} {{ m.ci(r.low, r.high) }}</td></tr>{% endfor %}</tbody></table></div>{% endif %}
{% if skipped %}<h2 id="skipped-runs">Runs not published</h2><ul>
{% for s in skipped %}<li>{{ s.agent or '(unreadable run)' }} (<code>{{ s.run_dir }}</code>): {{ s.reason }}</li>{% endfor %}</ul>{% endif %}
<h2>Served questions</h2>
<p>Where a gold is withheld (the live-answer rule), so are the agents' verdicts on that question and its evidence pages:
a tick would tell the answer. Evidence pages are shown only beside a shown gold.</p>
<form id="question-filters" class="filters" hidden>
{% for f in filters %}<label>{{ f.name }} <select data-dimension="{{ f.dimension }}"><option value="">all</option>
{% for v in f.options %}<option value="{{ v }}">{{ v }}</option>{% endfor %}</select></label>
{% endfor %}<span class="pager"><button type="button" id="pager-previous">previous</button>
<span id="pager-status" aria-live="polite"></span><button type="button" id="pager-next">next</button></span>
</form>
<div class="table-scroll"><table id="questions">
<thead><tr><th>qid</th><th>question</th><th>tier</th><th>class</th><th class="num">vis.</th><th>gold</th>
{% for r in runs %}<th data-agent="{{ r.agent }}">{{ r.agent }}</th>{% endfor %}<th>evidence pages</th></tr></thead>
<tbody>
{{ rows_html | safe }}
</tbody></table></div>
{% endblock %}
{% block script %}<script>{{ filter_js | safe }}</script>{% endblock %}
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
<div class="table-scroll"><table id="gold-by-day">
<thead><tr><th>gold date</th><th>status</th><th>gold</th><th>observed period</th>{% for a in agents %}<th>{{ a }}</th>{% endfor %}</tr></thead>
<tbody>
{{ rows_html | safe }}
</tbody></table></div>
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
<p>To score your own agent with these files, <a href="../run-it-yourself.html">run it yourself</a>: a day's
<code>served_questions_D.jsonl</code>, <code>gold.jsonl</code> and <code>gold.manifest.json</code> are what
<code>livesearch evaluate</code> reads.</p>
<div class="table-scroll"><table id="downloads">
<thead><tr><th>gold date</th><th>questions</th><th>gold</th><th>to score a run</th><th>verdicts</th><th>trajectories</th></tr></thead>
<tbody>{% for d in days %}<tr id="d{{ d.date }}"><td><a href="../days/{{ d.date }}.html">{{ d.date }}</a></td>
<td><a href="{{ d.date }}/questions.jsonl">JSONL</a> · <a href="{{ d.date }}/questions.parquet">Parquet</a></td>
<td><a href="{{ d.date }}/gold.jsonl">JSONL</a> · <a href="{{ d.date }}/gold.parquet">Parquet</a><br>
<span class="muted">{{ d.shown }} shown{% if d.withheld %}, {{ d.withheld }} withheld (live){% endif %}</span></td>
<td><a href="{{ d.date }}/served_questions_{{ d.date }}.jsonl">served file</a> · <a href="{{ d.date }}/gold.manifest.json">gold manifest</a></td>
<td><a href="{{ d.date }}/verdicts.jsonl">JSONL</a> · <a href="{{ d.date }}/verdicts.parquet">Parquet</a>
{% if not d.verdicts %}<br><span class="muted empty-download">empty: no agent run was published for this day</span>
{% elif d.verdicts_shown == 0 %}<br><span class="muted empty-download">{{ d.verdicts }} rows, every one withheld with its live gold (no correct, judge or reason)</span>{% endif %}</td>
<td>{% for t in d.trajectories %}<a href="{{ t.path }}">{{ t.agent }}</a>{% if t.lines == 0 %} <span class="muted empty-download">(empty: {% if t.withheld %}all {{ t.withheld }} withheld with their live gold{% else %}no trajectory recorded{% endif %})</span>{% endif %}{% if not loop.last %} · {% endif %}{% else %}<span class="muted">none recorded</span>{% endfor %}</td>
</tr>{% endfor %}</tbody></table></div>
{% endblock %}
"""

RUN = """{% extends "base.html" %}
{% block main %}
<h1>Run it yourself</h1>
<p>Score your own agent on a day of this benchmark with the files of this site and the benchmark's code: the
same questions, the same offline web, the same evaluator. Nothing here needs the operator's files.</p>
<h2 id="scorable-days">Which days you can score</h2>
{% if scorable %}<p>A day can be scored once the site shows some of its gold: a gold that could still be tomorrow's answer
is withheld (<a href="methodology.html#live-answer-rule">the live-answer rule</a>) and only the shown ones are scored.
The newest frozen day ({{ site.protected }}) shows none yet.</p>
<div class="table-scroll"><table id="scorable">
<thead><tr><th>gold date</th><th class="num">gold shown</th><th class="num">withheld (live)</th><th>gold sha256</th></tr></thead>
<tbody>{% for d in scorable %}<tr><td><a href="days/{{ d.date }}.html">{{ d.date }}</a></td><td class="num">{{ d.shown }}</td>
<td class="num">{{ d.withheld }}</td><td><code class="hash" title="{{ d.sha256 }}">{{ d.sha256[:16] }}…</code></td></tr>{% endfor %}</tbody></table></div>
{% else %}<p id="no-scorable-day">No day can be scored yet: every gold on this site could still be an answer. Come back
after the next frozen day.</p>{% endif %}
{% if example %}
<p>The steps below use <b>{{ example.date }}</b>; put another scorable day in <code>D</code> to score it instead.</p>
<h2>1. Install the benchmark</h2>
<pre id="step-install">{% if repository %}git clone {{ repository }} livesearch
cd livesearch
{% else %}# get the livesearch_pipeline repository (the code version that froze this day's gold: {{ example.code_version }})
{% endif %}make install            # a virtual environment in .venv with the locked dependencies
. .venv/bin/activate    # the livesearch command</pre>
<h2>2. The day's questions and the site's gold</h2>
<p>In an empty folder, which is also your data root (the offline web is built into it):</p>
<pre id="step-download">export SITE=http://127.0.0.1:8900   # the address you read this page at
export D={{ example.date }}
export LIVESEARCH_DATA_DIR="$PWD"
curl -fsS -O "$SITE/downloads/$D/served_questions_$D.jsonl" -O "$SITE/downloads/$D/gold.jsonl" -O "$SITE/downloads/$D/gold.manifest.json"</pre>
<p><code>gold.manifest.json</code> records the sha256 of <code>gold.jsonl</code>, how many golds it shows and withholds,
and the day's frozen gold manifest: its sha256 is the board's <i>gold sha256</i> of the day.</p>
<h2>3. The day's offline web</h2>
<p>A web agent searches the offline web of D, generated from the synthetic market at D's clock (no page is later),
into <code>web/D</code> of this folder; serve it to your own harness as a SearXNG-style <code>/search</code>:</p>
<pre id="step-web">livesearch build-web --date "$D"
livesearch serve-web --date "$D" --port 8890   # /search (SearXNG JSON) at http://127.0.0.1:8890, pages at their URLs</pre>
<p class="note" id="web-limit">Not quite the operator's web yet: the operator builds it with the pool file beside it,
which reaches some entities' monthly quote histories back as far as the pool's questions look, and this site does
not publish the pool. A web built without it may lack those older history pages (its identity is not the
operator's), so some long-window questions can be harder on it than they were for the board's agents.</p>
<h2>4. Run your agent</h2>
<p>Either with Inspect AI — the task reads this folder's files and scores the shown golds only:</p>
<pre id="step-inspect">inspect eval livesearch_pipeline/livesearch -T date="$D" -T data_dir="$PWD" -T tools=web --model YOUR/MODEL</pre>
<p>or with your own harness: one JSON object per line, the question's <code>qid</code>, your <code>answer</code> as text and
the <code>lang</code> of the text you answered (<code>"en"</code> or <code>"zh"</code>), into <code>predictions.jsonl</code>:</p>
<pre>{"qid": "ls-…", "answer": "0.47 CNY", "lang": "en"}</pre>
<p>(<code>livesearch agent run --agent web --searxng-url http://127.0.0.1:8890 --served "served_questions_$D.jsonl"
--out my-run --model YOUR/MODEL</code> runs the benchmark's own web agent on any litellm model and writes
<code>my-run/predictions.jsonl</code>.) To check the route first, make a predictions file of the shown answers themselves:
it must score 100%.</p>
<pre id="step-check">python3 -c 'import json; [print(json.dumps({"qid": r["qid"], "answer": r["answer"]})) for r in map(json.loads, open("gold.jsonl")) if r["shown"] and r["status"] == "ok"]' &gt; predictions.jsonl</pre>
<h2>5. Score it</h2>
<pre id="step-score">livesearch evaluate --served "served_questions_$D.jsonl" --gold gold.jsonl \\
    --predictions predictions.jsonl --agent my-agent --model YOUR/MODEL --out my-run</pre>
<p>The evaluator scores the questions whose gold the site shows and only those, and says so: its summary
(<code>my-run/summary.json</code>) gives <code>n_scored</code> (the shown golds), <code>n_withheld</code> and
<code>published_gold: true</code>, and its first line reads <i>scored on the published questions only</i>.</p>
<h2 id="compare">6. Compare with the board of the same day</h2>
<ul>
<li><b>Same gold</b>: <code>gold_sha256</code> in your <code>summary.json</code> must be the day's gold sha256 on
<a href="days/{{ example.date }}.html">its page</a> ({{ example.sha256[:16] }}… for {{ example.date }}).</li>
<li><b>Same questions</b>: your <code>qid_set_hash</code> is the hash of the shown questions, not the board's scoring set
(the board scores every question, its golds were all hidden when the agents answered). Compare on your set: the day's
<code>verdicts.jsonl</code> download holds every published agent's verdict on each shown question.</li>
</ul>
<pre id="step-compare">curl -fsS -O "$SITE/downloads/$D/verdicts.jsonl"
python3 -c 'import json, collections; n = collections.Counter(); c = collections.Counter()
for v in map(json.loads, open("verdicts.jsonl")):
    if v["shown"]: n[v["agent"]] += 1; c[v["agent"]] += v["correct"] is True
[print(a, f"{c[a]}/{n[a]}", f"{c[a] / n[a]:.1%}") for a in sorted(n)]'</pre>
<h2 id="board">7. Getting onto the public board</h2>
<p>The board ranks runs made before their day's gold was published: a run of a past day, scored on gold this site
shows, is a replication, not a live result, and the operator does not rank it. To compete, ask the operator to register
your agent; the daily loop then runs it on each new day with the baselines:</p>
<pre>livesearch agent register my-agent --kind web --model YOUR/MODEL   # run by the operator</pre>
<p>The operator adds a run it received (a predictions file made before D's gold was frozen, with its
<code>predictions.meta.json</code>) by copying it to <code>data/runs/D/my-agent/</code>, scoring it against the full
gold — the withheld golds too — and ranking the day again; the site picks it up at its next build:</p>
<pre>livesearch evaluate --served data/served/served_questions_D.jsonl --gold data/gold/gold_answers_D.jsonl \\
    --predictions data/runs/D/my-agent/predictions.jsonl --out data/runs/D/my-agent
livesearch leaderboard --runs data/runs/D/* --out data/runs/D/leaderboard
livesearch site build</pre>
{% endif %}
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
<div class="table-scroll"><table id="families"><thead><tr><th>family</th><th>chain</th><th>program</th></tr></thead><tbody>
{% for f in families %}<tr><td><code>{{ f[0] }}</code></td><td>{{ f[1] }}</td><td>{{ f[2] }}</td></tr>{% endfor %}
</tbody></table></div>
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
<h3 id="budgets">Read budgets</h3>
<p>A web agent's score is made at a declared <b>budget</b> per question: the distinct pages it may open and the searches it
may run (<code>navigator-6</code>: 6 of each; <code>navigator-20</code>: 20). The harness refuses a read or a search beyond
it and records the refusal; every search (query, results) and read (URL, what the page showed) is in the run's
trajectories. The board shows each run's budget and its reads per correct answer: compare web scores only at the same
budget. A question's <b>effort</b> is the fewest page reads, from a search, that show every record its answer depends on
(the walk to pages no search returns included): no agent answers it in fewer reads.</p>
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
<div class="table-scroll"><table id="hidden-by-class">
<thead><tr><th>refresh class</th><th class="num">questions</th><th class="num">frozen ok gold answers</th>
<th class="num">hidden</th><th class="num">questions never shown</th></tr></thead>
<tbody>{% for name, c in counts.items() %}<tr><td>{{ name }}</td><td class="num">{{ c.questions }}</td><td class="num">{{ c.answers }}</td>
<td class="num">{{ c.hidden }}</td><td class="num">{{ c.never_shown }}</td></tr>{% endfor %}</tbody></table></div>
<h2 id="submit">How to score or submit a run</h2>
<p><a href="run-it-yourself.html">Run it yourself</a> says how to score your own agent on a day with this site's downloads,
how to compare it with the board of that day, and how the operator adds a run to the board.</p>
{% endblock %}
"""

TEMPLATES = {"base.html": BASE, "macros.html": MACROS, "board.html": BOARD, "history.html": HISTORY,
             "agent.html": AGENT, "days.html": DAYS, "day.html": DAY, "question.html": QUESTION,
             "downloads.html": DOWNLOADS, "methodology.html": METHODOLOGY, "run.html": RUN}

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
    ("cagr", "compound annual growth over the 4 or 5 fiscal years to the latest annual report, each year as most recently "
     "published (restated where restated)", "1 statement call, select.where_first, combine cagr"),
    ("fiscal_growth", "the latest annual report of a company whose fiscal year ends in March, June or September against "
     "the fiscal year before", "1 statement call, end_type 4, pct_difference"),
    ("growth_first", "year-on-year growth against the comparative as first reported", "1 statement call, "
     "select.revision first, pct_difference"),
    ("ah_premium", "an A+H company's A-share close over its H-share close in CNY at the day's closing bids",
     "daily + hk_daily → fx_daily, ratio"),
    ("cross_currency", "a Hong Kong company's market value in its reporting currency over its latest annual revenue or "
     "profit (P/S, P/E)", "hk_daily_adj → fx_daily, hk_income, ratio"),
    ("peer_best", "among an industry index's members, the highest net margin, ROE or revenue growth of their latest "
     "annual reports", "index_member → one fina_indicator call per member, pick"),
)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.DictLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.globals["rate"] = rate
    return env
