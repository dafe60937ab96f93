"""What each page of the site shows: the context its template renders, and its large tables.

The tables of a day (every served question × every agent) and of a question (every frozen day ×
every agent) are written here as HTML rows with escaped strings (a template loop per cell costs
seconds over 30 days of 2,322 questions); the rest is left to the templates (templates.py).
No function here reads a file: they take the parsed days (inputs.py) and the live-answer rule's
decisions (liverule.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections import defaultdict
from html import escape

from livesearch_pipeline.core.models import GoldAnswer, Question, Verdict
from livesearch_pipeline.core.pool import visibility_band
from livesearch_pipeline.evaluation.registry import AgentSpec
from livesearch_pipeline.site.agent_cards import AgentCard, agent_card
from livesearch_pipeline.site.chart import Point, history_svg
from livesearch_pipeline.site.inputs import SiteDay
from livesearch_pipeline.site.program_text import program_lines, rule_text
from livesearch_pipeline.site.liverule import SHORT_REASONS
from livesearch_pipeline.site.templates import FILTER_JS, SORT_JS, rate

UNKNOWN_FAMILY = "unknown (no evidence map)"
BANDS = ("low", "mid", "high", "market")


_PLAIN_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def slug(name: str) -> str:
    """A file name for an agent, one per name: a registry-style name (lower-case letters, digits, '.',
    '_', '-') is its own slug; any other name is its readable part, '~' and a hash of the whole name
    (`lab~agent` -> `lab_agent~…`), so no two names share a page, not even on a case-insensitive disk
    (a plain name never holds '~' or a capital)."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    readable = re.sub(r"[^a-z0-9._-]", "_", name.lower())[:40].lstrip(".") or "_"
    return f"{readable}~{hashlib.sha256(name.encode('utf-8')).hexdigest()[:16]}"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def gold_html(gold: GoldAnswer | None, reason: str | None) -> str:
    if gold is None:
        return '<span class="muted">not in the snapshot</span>'
    if gold.status != "ok":
        return f'<span class="muted">{escape(gold.status)}</span>'
    if reason is not None:
        short = SHORT_REASONS.get(reason, "live")
        return f'<span class="hidden-gold" title="{escape(reason)}">withheld: {escape(short)}</span>'
    answer = gold.answer or ""
    # The unit once: an answer that already says it ("0.47 CNY") is not followed by "(CNY)".
    unit = f' <span class="muted">({escape(gold.unit)})</span>' if gold.unit and gold.unit not in answer else ""
    return f"<b>{escape(answer)}</b>{unit}"


_VERDICT = {True: '<span class="ok" title="correct">&#10003;</span>',
            False: '<span class="ko" title="wrong">&#10007;</span>',
            None: '<span class="muted" title="judge error">?</span>'}
_NO_VERDICT = '<span class="muted">-</span>'
# A verdict on a question whose gold is withheld would tell the gold: three runs answering A, B and C
# to "which of A, B and C" read it off their ticks. Its correctness is withheld with the gold.
_WITHHELD_VERDICT = '<span class="hidden-gold" title="withheld with the live gold">·</span>'
_WITHHELD_PAGES = '<span class="hidden-gold" title="withheld with the live gold">withheld</span>'


def evidence_published(gold, reason: str | None) -> bool:
    """Whether a question's evidence pages (where on D's web its answer is) may be shown: only with
    its gold — an ok gold the live-answer rule shows. A withheld gold's pages are a map to a live
    answer; a question without an ok gold has no answer they could be checked against."""
    return gold is not None and gold.status == "ok" and reason is None


def verdict_html(verdict: Verdict | None, withheld: bool = False) -> str:
    if verdict is None:
        return _NO_VERDICT
    return _WITHHELD_VERDICT if withheld else _VERDICT[verdict.correct]


def _recall_reports(day: SiteDay) -> dict[str, dict]:
    """The retrieval report's figures by run folder (its `folder`; reports written before name it `agent`)."""
    if not day.retrieval:
        return {}
    return {run.get("folder", run.get("agent")): run for run in day.retrieval.get("runs", []) if isinstance(run, dict)}


def _bucket_rates(buckets: dict) -> dict[str, dict | None]:
    return {key: rate(b.correct, b.n) for key, b in buckets.items()}


def _recall_rate(report: dict | None) -> dict | None:
    """Evidence recall with its interval: the share of the report's `n` web-answerable questions."""
    if not report or report.get("evidence_recall") is None or not report.get("n"):
        return None
    n = int(report["n"])
    return rate(round(report["evidence_recall"] * n), n)


def _ranks_among(rows: list) -> list[int]:
    """The board's ranking (its order, ties sharing a rank) among `rows` alone: the competitors
    ranked without the reference rows."""
    ranks: list[int] = []
    for index, row in enumerate(rows):
        tied = index > 0 and (row.correct, row.n) == (rows[index - 1].correct, rows[index - 1].n)
        ranks.append(ranks[-1] if tied else index + 1)
    return ranks


def display_ranks(day: SiteDay, references: frozenset[str]) -> dict[str, int | None]:
    """Each run's rank among the day's ranked competitors (the board's ranks with the reference runs
    taken out, ties kept); None for a reference or an unranked run."""
    ranked = [run.rank for run in day.runs if run.rank is not None and run.agent not in references]
    return {run.agent: (1 + sum(1 for other in ranked if other < run.rank)
                        if run.rank is not None and run.agent not in references else None) for run in day.runs}


def cards_of(days: list[SiteDay], specs: dict[str, AgentSpec]) -> dict[str, AgentCard]:
    """Every agent's card, from its registry entry and its newest published run."""
    newest: dict[str, object] = {}
    for d in days:
        for run in d.runs:
            newest[run.agent] = run.summary
    names = set(newest) | {s.agent for d in days for s in d.skipped if s.agent}
    return {agent: agent_card(agent, specs.get(agent), newest.get(agent)) for agent in sorted(names)}


def board_context(day: SiteDay, cards: dict[str, AgentCard]) -> dict:
    board = day.board
    if board is None:
        return {"day": day, "board": None, "rows": [], "reference": [], "tiers": [], "bands": [], "sort_js": SORT_JS,
                "cards": []}
    by_agent = {run.agent: run for run in day.runs if run.ranked}
    recall = _recall_reports(day)
    tiers = sorted({t for r in board.rows for t in r.by_tier})
    bands = [b for b in BANDS if any(b in by_agent[r.agent].summary.by_visibility_band
                                     for r in board.rows if r.agent in by_agent)]
    rows, reference = [], []
    competitors = [r for r in board.rows if not (r.agent in cards and cards[r.agent].reference)]
    display_rank = dict(zip((id(r) for r in competitors), _ranks_among(competitors)))
    for r in board.rows:
        run = by_agent.get(r.agent)
        summary = run.summary if run else None
        folder = run.folder if run else None  # a run the site could not bind has no recall of its own
        card = cards.get(r.agent)
        row = {
            "rank": display_rank.get(id(r)), "agent": r.agent, "slug": slug(r.agent), "model": r.model,
            "accuracy": r.accuracy, "low": r.wilson_low, "high": r.wilson_high, "correct": r.correct, "n": r.n,
            "tiers": _bucket_rates(summary.by_tier) if summary else {},
            "bands": _bucket_rates(summary.by_visibility_band) if summary else {},
            "recall": _recall_rate(recall.get(folder)), "budget": card.budget if card else (r.budget or "-"),
            "kind": card.kind if card else "-",
            "cost_per_correct": r.usage.cost_per_correct_usd if r.usage else None,
        }
        (reference if id(r) not in display_rank else rows).append(row)
    on_board = [r.agent for r in board.rows] + [u.agent for u in board.unranked if u.agent]
    return {"day": day, "board": board, "rows": rows, "reference": reference, "tiers": tiers, "bands": bands,
            "sort_js": SORT_JS, "skipped": day.skipped,
            "cards": [cards[a] for a in dict.fromkeys(on_board) if a in cards]}


def history_context(days: list[SiteDay]) -> dict:
    series: dict[str, list[Point]] = defaultdict(list)
    rows = []
    pool_changes: dict[dt.date, str] = {}
    previous_pool = None
    for d in days:
        version = d.manifest.pool_version
        changed = previous_pool is not None and version != previous_pool
        if changed:
            pool_changes[d.date] = version
        previous_pool = version
        points = {}
        if d.board is not None:
            for r in d.board.rows:
                point = Point(d.date, r.accuracy, r.wilson_low, r.wilson_high)
                series[r.agent].append(point)
                points[r.agent] = point
        rows.append({"date": d.date, "pool": version, "pool_change": changed, "points": points})
    return {"svg": history_svg(dict(series), [d.date for d in days], pool_changes), "days": list(reversed(rows)),
            "agents": [{"agent": a, "slug": slug(a)} for a in sorted(series)]}


def agent_context(agent: str, days: list[SiteDay],
                  trajectory_links: dict[tuple[dt.date, str], tuple[str, int, int] | str], card: AgentCard,
                  references: frozenset[str] = frozenset()) -> dict:
    runs = []
    pooled: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    latest_buckets: dict[str, dict[str, list[int]]] = {}
    latest_date = None
    for d in days:
        for run in d.runs:
            if run.agent != agent:
                continue
            s = run.summary
            link = trajectory_links.get((d.date, agent))
            problem = link if isinstance(link, str) else None
            link = link if isinstance(link, tuple) else None
            runs.append({"date": d.date, "model": s.model, "rank": display_ranks(d, references)[agent],
                         "accuracy": s.accuracy,
                         "low": run.wilson_low, "high": run.wilson_high, "correct": s.correct, "n": s.n_scored,
                         "usage": s.usage, "unranked_reason": run.unranked_reason, "n_served": s.n_served,
                         "trajectories": link[0] if link else None, "trajectory_lines": link[1] if link else 0,
                         "trajectory_withheld": link[2] if link else 0, "trajectory_problem": problem})
            buckets: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
            for name, source in (("tier", s.by_tier), ("visibility band", s.by_visibility_band),
                                 ("language", s.by_language), ("asset class", s.by_asset_class),
                                 ("refresh class", s.by_refresh_class)):
                for key, bucket in source.items():
                    buckets[name][key][0] += bucket.correct
                    buckets[name][key][1] += bucket.n
            for qid, verdict in run.verdicts.items():
                family = d.families.get(qid, UNKNOWN_FAMILY)
                buckets["family"][family][0] += verdict.correct is True
                buckets["family"][family][1] += 1
            for name, keys in buckets.items():
                for key, (correct, n) in keys.items():
                    pooled[name][key][0] += correct
                    pooled[name][key][1] += n
            latest_buckets, latest_date = buckets, d.date
    breakdowns = []
    for name in ("tier", "visibility band", "family", "language", "asset class", "refresh class"):
        if name not in pooled:
            continue
        rows = []
        for key, (correct, n) in sorted(pooled[name].items()):
            latest = latest_buckets.get(name, {}).get(key)
            rows.append({"key": key, "pooled": rate(correct, n),
                         "latest": rate(latest[0], latest[1]) if latest and latest[1] else None})
        breakdowns.append({"name": name, "rows": rows})
    skipped = [{"date": d.date, "run_dir": s.run_dir, "reason": s.reason} for d in reversed(days) for s in d.skipped
               if s.agent == agent]
    return {"title": f"agent {agent}", "agent": agent, "runs": list(reversed(runs)), "breakdowns": breakdowns,
            "latest_date": latest_date, "skipped": skipped, "card": card}


def day_context(d: SiteDay, hidden: dict[str, str], references: frozenset[str] = frozenset()) -> dict:
    """The page of a day: its facts, its agents (the references marked), and its question table, each
    row carrying its tier, band and family for the page's filters."""
    ranks = display_ranks(d, references)
    runs = [{"agent": run.agent, "slug": slug(run.agent), "rank": ranks[run.agent], "accuracy": run.summary.accuracy,
             "low": run.wilson_low, "high": run.wilson_high, "reference": run.agent in references} for run in d.runs]
    verdicts = [run.verdicts for run in d.runs]
    rows = []
    for q in d.served:
        withheld = q.qid in hidden
        evidence = d.evidence.get(q.qid, []) if evidence_published(d.gold.get(q.qid), hidden.get(q.qid)) else []
        pages = (f"{len(evidence)}: " + ", ".join(f"<code>{escape(p)}</code>" for p in evidence[:3])
                 + (" …" if len(evidence) > 3 else "")) if evidence else _NO_VERDICT
        band = visibility_band(q.visibility, q.asset_class)
        family = escape(d.families.get(q.qid, UNKNOWN_FAMILY))
        rows.append(
            f'<tr data-tier="{q.tier}" data-band="{band}" data-family="{family}">'
            f'<td><a href="../questions/{q.qid}.html"><code>{q.qid}</code></a></td>'
            f'<td class="q">{escape(q.question)}</td><td>{q.tier}</td><td>{q.refresh_class}</td>'
            f'<td class="num">{q.visibility}</td><td>{gold_html(d.gold.get(q.qid), hidden.get(q.qid))}</td>'
            + "".join(f"<td>{verdict_html(v.get(q.qid), withheld)}</td>" for v in verdicts)
            + f"<td>{_WITHHELD_PAGES if withheld and d.evidence.get(q.qid) else pages}</td></tr>")
    shown = sum(1 for q in d.served if q.qid in d.gold and d.gold[q.qid].status == "ok" and q.qid not in hidden)
    filters = [
        {"name": "tier", "dimension": "tier", "options": sorted({q.tier for q in d.served})},
        {"name": "band", "dimension": "band",
         "options": [b for b in BANDS if any(visibility_band(q.visibility, q.asset_class) == b for q in d.served)]},
        {"name": "family", "dimension": "family",
         "options": sorted({d.families.get(q.qid, UNKNOWN_FAMILY) for q in d.served})},
    ]
    if runs:
        filters.append({"name": "agent", "dimension": "agent", "options": [r["agent"] for r in runs]})
    return {"title": f"questions of {d.date}", "day": d, "runs": runs, "rows_html": "\n".join(rows), "shown": shown,
            "hidden_count": sum(1 for q in d.served if q.qid in hidden), "skipped": d.skipped, "filters": filters,
            "filter_js": FILTER_JS}


def question_context(qid: str, served, on_days: list[SiteDay], question: Question | None,
                     hidden: dict[dt.date, dict[str, str]]) -> dict:
    agents = sorted({run.agent for d in on_days for run in d.runs if qid in run.verdicts})
    rows = []
    rule = question.match if question is not None else None
    family = None
    for d in reversed(on_days):
        gold = d.gold.get(qid)
        reason = hidden[d.date].get(qid)
        if rule is None and gold is not None:
            rule = gold.match
        family = family or d.families.get(qid)
        by_agent = {run.agent: run.verdicts.get(qid) for run in d.runs}
        period = gold.observed_period if gold is not None and reason is None and gold.observed_period else ""
        rows.append(
            f'<tr><td><a href="../days/{d.date}.html">{d.date}</a></td>'
            f'<td>{escape(gold.status) if gold else "absent"}</td><td class="gold">{gold_html(gold, reason)}</td>'
            f"<td>{escape(period)}</td>"
            + "".join(f"<td>{verdict_html(by_agent.get(a), reason is not None)}</td>" for a in agents)
            + "</tr>")
    return {
        "title": f"question {qid}", "qid": qid, "text_en": served.question, "text_zh": served.question_zh,
        "entity": served.entity, "entity_name": question.entity_name if question else None, "tier": served.tier,
        "refresh_class": served.refresh_class, "asset_class": served.asset_class,
        "visibility": f"{served.visibility} ({visibility_band(served.visibility, served.asset_class)})",
        "family": family,
        "program_lines": program_lines(question.program) if question else [],
        "program_json": json.dumps(question.program.model_dump(mode="json", exclude_defaults=True), indent=2,
                                   ensure_ascii=False) if question else "",
        "rule": rule_text(rule) if rule is not None else "-", "agents": agents, "rows_html": "\n".join(rows),
    }
