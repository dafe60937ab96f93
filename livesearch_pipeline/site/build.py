"""Build the static site of a day: `build_site(paths, as_of, out_dir)` writes every page and
download under `out_dir` (default `data/site/`) and returns what it did.

The site of D shows the frozen days up to D (`inputs.site_days`); the latest of them is the day the
live-answer rule (`liverule`) protects. Pages:

    index.html                 the board of the latest day with a leaderboard
    history.html               every agent's accuracy per day (SVG chart and table)
    agents/<agent>.html        an agent's runs, usage, trajectories, breakdowns
    days/index.html, days/<D>.html       the frozen days; a day's questions, gold, verdicts, evidence
    questions/<qid>.html       a question's texts, program, rule and gold on each frozen day
    downloads/...              per day JSONL + Parquet (downloads.py), the dataset card, trajectories
    methodology.html           how questions are made, re-dated and scored; the live-answer rule
    style.css

Incremental: every output has a key made from the inputs it depends on (a day's fingerprint,
the gold the rule hides that day, the pool line of a question); an output whose key is unchanged
and whose file is there is neither rendered nor written (`<cache>/site/build_index.json` holds
the keys). The few site-wide pages are rendered every time and written only when their bytes
change. Outputs of an earlier build that this one no longer makes are deleted. Every file is
written atomically.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Callable

from livesearch_pipeline.core.models import Question
from livesearch_pipeline.core.pool import POOL_FILE, visibility_band
from livesearch_pipeline.core.program import load_pool
from livesearch_pipeline.core.snapshot import write_atomic
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline.site import downloads, liverule
from livesearch_pipeline.site.chart import Point, history_svg
from livesearch_pipeline.site.inputs import SiteDay, SiteInputError, cached_day, site_days
from livesearch_pipeline.site.program_text import program_lines, rule_text
from livesearch_pipeline.site.templates import FAMILIES, SORT_JS, STYLE_CSS, environment

SITE_DIR = "site"
INDEX_FILE = "build_index.json"
BUILD_VERSION = "1"  # part of every key: a change of the templates' code rebuilds everything
RULE_LINES = (
    "every gold of the latest frozen day (tomorrow's answer may be the same, whatever the class);",
    "every gold of a static question (its answer does not change);",
    "a gold of an earlier day that still passes as the latest day's answer under the question's matching rule "
    "(slow classes — weekly, monthly, quarterly, annual — until their answer moves; a daily question on a day "
    "its value did not move), or that only a judge could tell from it;",
    "a gold of an earlier day when the latest day has no ok gold for the question (withdrawn): whether it "
    "changed cannot be told.",
    "A question no longer served on the latest day (retired from the pool) is never asked again: its gold is "
    "shown. Empty or error gold carries no answer and is shown as its status.",
)


class SiteBuildError(ValueError):
    """The site cannot be built (no frozen day, unreadable inputs)."""


@dataclass
class SiteBuild:
    out_dir: Path
    latest: dt.date
    days: int
    questions: int
    written: int = 0
    unchanged: int = 0
    skipped: int = 0  # outputs whose inputs did not change: not rendered at all
    removed: int = 0
    days_parsed: int = 0
    days_cached: int = 0
    hidden: int = 0
    seconds: float = 0.0
    by_kind: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def line(self) -> str:
        return (f"site of {self.latest}: {self.days} day(s), {self.questions} questions; {self.written} file(s) "
                f"written, {self.unchanged} unchanged, {self.skipped} skipped (inputs unchanged), {self.removed} "
                f"removed; days parsed {self.days_parsed}, from cache {self.days_cached}; {self.hidden} gold "
                f"answer(s) withheld (live-answer rule); {self.seconds:.1f} s; open {self.out_dir / 'index.html'}")


def site_dir(paths: DataPaths) -> Path:
    return paths.root / SITE_DIR


def cache_dir(paths: DataPaths) -> Path:
    return paths.cache / SITE_DIR


def slug(name: str) -> str:
    """A file name for an agent (its registry name, kept readable)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def _key(*parts: object) -> str:
    digest = hashlib.sha256(BUILD_VERSION.encode())
    for part in parts:
        digest.update(b"\0" + (part if isinstance(part, bytes) else str(part).encode()))
    return digest.hexdigest()


class _Writer:
    """Writes outputs under `out_dir`, skipping those whose key is unchanged (see the module doc)."""

    def __init__(self, out_dir: Path, index_path: Path, build: SiteBuild) -> None:
        self.out_dir, self.index_path, self.build = out_dir, index_path, build
        try:
            previous = json.loads(index_path.read_text(encoding="utf-8")) if index_path.is_file() else {}
        except (OSError, ValueError):
            previous = {}  # an unreadable index only costs a full rebuild
        self.previous: dict[str, str] = previous.get("outputs", {}) if previous.get("out_dir") == str(out_dir) else {}
        self.current: dict[str, str] = {}

    def output(self, relative: str, kind: str, produce: Callable[[], bytes], key: str | None = None) -> None:
        target = self.out_dir / relative
        self.build.by_kind[kind] += 1
        if key is not None and self.previous.get(relative) == key and target.is_file():
            self.current[relative] = key
            self.build.skipped += 1
            return
        data = produce()
        if key is None:
            key = _key("bytes", hashlib.sha256(data).hexdigest())
        self.current[relative] = key
        if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
            self.build.unchanged += 1
            return
        write_atomic(target, data)
        self.build.written += 1

    def finish(self) -> None:
        for relative in sorted(set(self.previous) - set(self.current)):
            path = self.out_dir / relative
            if path.is_file():
                path.unlink()
                self.build.removed += 1
        write_atomic(self.index_path, json.dumps({"out_dir": str(self.out_dir), "outputs": self.current},
                                                 sort_keys=True).encode("utf-8"))


def _pool(paths: DataPaths) -> tuple[dict[str, Question], dict[str, str]]:
    """The current pool's questions and each one's JSON line (its key); empty without a pool."""
    pool_file = paths.pool / POOL_FILE
    if not pool_file.is_file():
        return {}, {}
    try:
        questions = load_pool(pool_file)
    except ValueError as exc:
        raise SiteBuildError(f"{pool_file}: {exc}") from exc
    return {q.qid: q for q in questions}, {q.qid: q.model_dump_json() for q in questions}


def _gold_html(gold, reason: str | None) -> str:
    if gold is None:
        return '<span class="muted">not in the snapshot</span>'
    if gold.status != "ok":
        return f'<span class="muted">{escape(gold.status)}</span>'
    if reason is not None:
        return f'<span class="hidden-gold" title="{escape(reason)}">withheld (live)</span>'
    unit = f" <span class=\"muted\">({escape(gold.unit)})</span>" if gold.unit else ""
    return f"<b>{escape(gold.answer or '')}</b>{unit}"


def _family(question: Question | None) -> str:
    if question is None:
        return "unknown (not in the current pool)"
    from livesearch_pipeline.web.evidence import family_of

    return family_of(question)


def build_site(paths: DataPaths, as_of: dt.date, out_dir: Path | None = None,
               progress: Callable[[str], None] | None = None) -> SiteBuild:
    """Build (or update) the site of `as_of` under `out_dir` (default `data/site/`)."""
    started = time.perf_counter()
    out_dir = Path(out_dir) if out_dir is not None else site_dir(paths)
    dates = site_days(paths, as_of)
    if not dates:
        raise SiteBuildError(f"no frozen day on or before {as_of} under {paths.root} (a gold snapshot and a served "
                             "file): run the daily loop first (livesearch run)")
    cache = cache_dir(paths)
    days: list[SiteDay] = []
    build = SiteBuild(out_dir=out_dir, latest=dates[-1], days=len(dates), questions=0)
    for day in dates:
        loaded, from_cache = cached_day(paths, day, cache)
        days.append(loaded)
        build.days_cached += from_cache
        build.days_parsed += not from_cache
    if progress:
        progress(f"inputs of {len(days)} day(s) read ({build.days_cached} from the cache)")
    latest = days[-1]
    latest_classes = {q.qid: q.refresh_class for q in latest.served}
    hidden: dict[dt.date, dict[str, str]] = {
        d.date: liverule.hidden_on_day(d.gold, is_latest_day=d.date == latest.date, latest_classes=latest_classes,
                                       latest_answers=latest.gold)
        for d in days}
    build.hidden = sum(len(h) for h in hidden.values())
    hidden_key = {d: _key(*sorted(f"{q}={r}" for q, r in h.items())) for d, h in hidden.items()}
    pool, pool_lines = _pool(paths)
    out_dir.mkdir(parents=True, exist_ok=True)
    writer = _Writer(out_dir, cache / INDEX_FILE, build)
    env = environment()
    site = {"latest": latest.date}
    agents = sorted({run.agent for d in days for run in d.runs})
    nav_key = _key(*agents, *(d.date for d in days))

    def render(template: str, root: str, **context) -> bytes:
        return env.get_template(template).render(root=root, site=site, **context).encode("utf-8")

    writer.output("style.css", "asset", lambda: STYLE_CSS.lstrip().encode("utf-8"))

    # --- the board
    board_day = next((d for d in reversed(days) if d.board is not None), latest)
    writer.output("index.html", "page", lambda: render("board.html", "", title=f"board {board_day.date}",
                                                                **_board_context(board_day)))

    # --- history
    writer.output("history.html", "page", lambda: render("history.html", "", title="history", **_history_context(days, agents)))

    # --- downloads and trajectories of each day
    trajectory_links: dict[tuple[dt.date, str], tuple[str, int, int]] = {}
    for d in days:
        served_by_qid = {q.qid for q in d.served}
        day_key = _key(d.fingerprint, hidden_key[d.date])
        base = f"downloads/{d.date}"
        writer.output(f"{base}/questions.jsonl", "download", lambda d=d: downloads.jsonl_bytes(
            downloads.question_rows(d.date, d.served)), key=_key("questions.jsonl", day_key))
        writer.output(f"{base}/questions.parquet", "download", lambda d=d: downloads.parquet_bytes(
            downloads.question_rows(d.date, d.served), downloads.QUESTIONS_SCHEMA), key=_key("questions.parquet", day_key))
        writer.output(f"{base}/gold.jsonl", "download", lambda d=d: downloads.jsonl_bytes(
            downloads.gold_rows(d.date, d.served, d.gold, hidden[d.date])), key=_key("gold.jsonl", day_key))
        writer.output(f"{base}/gold.parquet", "download", lambda d=d: downloads.parquet_bytes(
            downloads.gold_rows(d.date, d.served, d.gold, hidden[d.date]), downloads.GOLD_SCHEMA),
            key=_key("gold.parquet", day_key))
        writer.output(f"{base}/verdicts.jsonl", "download", lambda d=d: downloads.jsonl_bytes(
            downloads.verdict_rows(d.date, d.runs, hidden[d.date])), key=_key("verdicts.jsonl", day_key))
        writer.output(f"{base}/verdicts.parquet", "download", lambda d=d: downloads.parquet_bytes(
            downloads.verdict_rows(d.date, d.runs, hidden[d.date]), downloads.VERDICTS_SCHEMA),
            key=_key("verdicts.parquet", day_key))
        for run in d.runs:
            if run.trajectories is None:
                continue
            relative = f"{base}/trajectories/{slug(run.folder)}.jsonl"
            kept, withheld = _filtered_trajectories(run.trajectories, hidden[d.date], served_by_qid)
            trajectory_links[(d.date, run.agent)] = (relative, kept.count(b"\n"), withheld)
            writer.output(relative, "download", lambda kept=kept: kept)
    writer.output("downloads/README.md", "download", lambda: downloads.dataset_card(
        [d.date.isoformat() for d in days], RULE_LINES).encode("utf-8"))
    writer.output("downloads/index.html", "page", lambda: render("downloads.html", "../", title="downloads", days=[
        {"date": d.date, "trajectories": [(run.agent, f"../{trajectory_links[(d.date, run.agent)][0]}")
                                          for run in d.runs if (d.date, run.agent) in trajectory_links]}
        for d in reversed(days)]))

    # --- agents
    for agent in agents:
        writer.output(f"agents/{slug(agent)}.html", "page", lambda agent=agent: render(
            "agent.html", "../", **_agent_context(agent, days, pool, trajectory_links)))

    # --- days
    writer.output("days/index.html", "page", lambda: render("days.html", "../", title="frozen days", days=[
        {"date": d.date, "pool": d.manifest.pool_version, "served": len(d.served), "withdrawn": len(d.manifest.withdrawn),
         "shown": sum(1 for q in d.served if q.qid in d.gold and q.qid not in hidden[d.date]
                      and d.gold[q.qid].status == "ok"), "sha256": d.manifest.sha256}
        for d in reversed(days)]))
    for d in days:
        writer.output(f"days/{d.date}.html", "page", lambda d=d: render("day.html", "../", **_day_context(d, hidden[d.date])),
                      key=_key("day", d.fingerprint, hidden_key[d.date], nav_key))

    # --- questions
    served_on: dict[str, list[SiteDay]] = defaultdict(list)
    last_served = {}
    for d in days:
        for q in d.served:
            served_on[q.qid].append(d)
            last_served[q.qid] = q
    build.questions = len(served_on)
    for qid, on_days in sorted(served_on.items()):
        key = _key("question", pool_lines.get(qid, "-"), nav_key,
                   *(f"{d.date}|{d.fingerprint}|{hidden[d.date].get(qid)}" for d in on_days))
        writer.output(f"questions/{qid}.html", "page", lambda qid=qid, on_days=on_days: render(
            "question.html", "../", **_question_context(qid, last_served[qid], on_days, pool.get(qid), hidden)), key=key)

    # --- methodology
    counts = liverule.count_by_class([(d.gold, hidden[d.date]) for d in days], latest_classes)
    writer.output("methodology.html", "page", lambda: render(
        "methodology.html", "", title="methodology", families=FAMILIES, rule_lines=RULE_LINES, counts=counts, n_days=len(days)))
    writer.finish()
    build.seconds = time.perf_counter() - started
    return build


def _filtered_trajectories(path: Path, hidden: dict[str, str], served: set[str]) -> tuple[bytes, int]:
    """The run's trajectory lines of questions whose gold is shown (bytes as recorded), and how many
    were withheld: an agent's answer to a live question may be that live gold."""
    kept: list[bytes] = []
    withheld = 0
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                qid = json.loads(line)["qid"]
            except (ValueError, KeyError, TypeError) as exc:
                raise SiteInputError(f"{path}:{number}: not a trajectory line with a qid ({exc})") from exc
            if qid in hidden or qid not in served:
                withheld += 1
            else:
                kept.append(line if line.endswith(b"\n") else line + b"\n")
    return b"".join(kept), withheld


def _recall(day: SiteDay) -> dict[str, float | None]:
    if not day.retrieval:
        return {}
    return {run.get("agent"): run.get("evidence_recall") for run in day.retrieval.get("runs", [])}


def _board_context(day: SiteDay) -> dict:
    board = day.board
    if board is None:
        return {"day": day, "board": None, "rows": [], "tiers": [], "bands": [], "sort_js": SORT_JS}
    by_agent = {run.agent: run for run in day.runs if run.ranked}
    recall = _recall(day)
    tiers = sorted({t for r in board.rows for t in r.by_tier})
    band_order = ("low", "mid", "high", "market")
    bands = [b for b in band_order if any(b in by_agent[r.agent].summary.by_visibility_band
                                          for r in board.rows if r.agent in by_agent)]
    rows = []
    for r in board.rows:
        run = by_agent.get(r.agent)
        summary = run.summary if run else None
        folder = run.folder if run else Path(r.run_dir).name
        rows.append({
            "rank": r.rank, "agent": r.agent, "slug": slug(r.agent), "model": r.model, "accuracy": r.accuracy,
            "low": r.wilson_low, "high": r.wilson_high, "correct": r.correct, "n": r.n, "tiers": r.by_tier,
            "bands": {k: b.accuracy for k, b in summary.by_visibility_band.items()} if summary else {},
            "recall": recall.get(folder), "cost_per_correct": r.usage.cost_per_correct_usd if r.usage else None,
            "qid_set_hash": summary.qid_set_hash if summary else board.qid_set_hash,
            "gold_sha256": summary.gold_sha256 if summary else day.manifest.sha256,
        })
    return {"day": day, "board": board, "rows": rows, "tiers": tiers, "bands": bands, "sort_js": SORT_JS}


def _history_context(days: list[SiteDay], agents: list[str]) -> dict:
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
    ranked_agents = sorted(series)
    return {"svg": history_svg(dict(series), [d.date for d in days], pool_changes), "days": list(reversed(rows)),
            "agents": [{"agent": a, "slug": slug(a)} for a in ranked_agents]}


def _agent_context(agent: str, days: list[SiteDay], pool: dict[str, Question],
                   trajectory_links: dict[tuple[dt.date, str], tuple[str, int, int]]) -> dict:
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
            runs.append({"date": d.date, "model": s.model, "rank": run.rank, "accuracy": s.accuracy,
                         "low": run.wilson_low, "high": run.wilson_high, "correct": s.correct, "n": s.n_scored,
                         "usage": s.usage, "unranked_reason": run.unranked_reason, "n_served": s.n_served,
                         "trajectories": link[0] if link else None, "trajectory_lines": link[1] if link else 0,
                         "trajectory_withheld": link[2] if link else 0})
            buckets: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
            for name, source in (("tier", s.by_tier), ("visibility band", s.by_visibility_band),
                                 ("language", s.by_language), ("asset class", s.by_asset_class),
                                 ("refresh class", s.by_refresh_class)):
                for key, bucket in source.items():
                    buckets[name][key][0] += bucket.correct
                    buckets[name][key][1] += bucket.n
            for qid, verdict in run.verdicts.items():
                family = _family(pool.get(qid))
                buckets["family"][family][0] += verdict.correct is True
                buckets["family"][family][1] += 1
            for name, keys in buckets.items():
                for key, (correct, n) in keys.items():
                    pooled[name][key][0] += correct
                    pooled[name][key][1] += n
            latest_buckets, latest_date = buckets, d.date
    order = ("tier", "visibility band", "family", "language", "asset class", "refresh class")
    breakdowns = []
    for name in order:
        if name not in pooled:
            continue
        rows = []
        for key, (correct, n) in sorted(pooled[name].items()):
            latest = latest_buckets.get(name, {}).get(key)
            rows.append({"key": key, "pooled": {"correct": correct, "n": n},
                         "latest": {"correct": latest[0], "n": latest[1]} if latest and latest[1] else None})
        breakdowns.append({"name": name, "rows": rows})
    return {"title": f"agent {agent}", "agent": agent, "runs": list(reversed(runs)), "breakdowns": breakdowns,
            "latest_date": latest_date}


def _day_context(d: SiteDay, hidden: dict[str, str]) -> dict:
    runs = [{"agent": run.agent, "slug": slug(run.agent), "rank": run.rank, "accuracy": run.summary.accuracy,
             "low": run.wilson_low, "high": run.wilson_high, "verdicts": run.verdicts} for run in d.runs]
    questions = [{"qid": q.qid, "text": q.question, "tier": q.tier, "refresh_class": q.refresh_class,
                  "visibility": q.visibility, "gold_html": _gold_html(d.gold.get(q.qid), hidden.get(q.qid)),
                  "evidence": d.evidence.get(q.qid, [])} for q in d.served]
    shown = sum(1 for q in d.served if q.qid in d.gold and d.gold[q.qid].status == "ok" and q.qid not in hidden)
    return {"title": f"questions of {d.date}", "day": d, "runs": runs, "questions": questions, "shown": shown,
            "hidden_count": sum(1 for q in d.served if q.qid in hidden)}


def _question_context(qid: str, served, on_days: list[SiteDay], question: Question | None,
                      hidden: dict[dt.date, dict[str, str]]) -> dict:
    agents = sorted({run.agent for d in on_days for run in d.runs if qid in run.verdicts})
    rows = []
    rule = None
    for d in reversed(on_days):
        gold = d.gold.get(qid)
        reason = hidden[d.date].get(qid)
        rule = rule or (gold.match if gold is not None else None)
        rows.append({"date": d.date, "status": gold.status if gold else "absent",
                     "gold_html": _gold_html(gold, reason),
                     "period": gold.observed_period if gold is not None and reason is None else None,
                     "verdicts": {run.agent: run.verdicts.get(qid) for run in d.runs}})
    if question is not None:
        rule = question.match
    return {
        "title": f"question {qid}", "qid": qid, "text_en": served.question, "text_zh": served.question_zh,
        "entity": served.entity, "entity_name": question.entity_name if question else None, "tier": served.tier,
        "refresh_class": served.refresh_class, "asset_class": served.asset_class,
        "visibility": f"{served.visibility} ({visibility_band(served.visibility, served.asset_class)})",
        "family": _family(question) if question else None,
        "program_lines": program_lines(question.program) if question else [],
        "program_json": json.dumps(question.program.model_dump(mode="json", exclude_defaults=True), indent=2,
                                   ensure_ascii=False) if question else "",
        "rule": rule_text(rule) if rule is not None else "-", "agents": agents, "rows": rows,
    }
