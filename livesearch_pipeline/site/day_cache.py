"""The site's cache of parsed days: `<cache>/site/day-<D>.json`, plain data, never code.

A parsed day (`inputs.SiteDay`) is written as JSON under the request that made it — the data root,
the day, the cache format and the fingerprint of every input file (`inputs.fingerprint`) — and read back only when
that request is the current one; an entry that is not valid JSON of the expected shape, or of
another request, is parsed again from the source files (it only costs time). Nothing in an entry is
ever executed: each model is kept as its own JSON and validated again (`model_validate_json`), the
records rebuilt as tuples.
The cache is the pipeline's own folder (`cache/`, docs/operations.md's threat model): no run writer
may write there.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from livesearch_pipeline.core.models import MatchRule, SnapshotManifest
from livesearch_pipeline.core.snapshot import write_atomic
from livesearch_pipeline.core.untrusted import UntrustedFileError, read_untrusted
from livesearch_pipeline.evaluation.audits import StaleGoldAudit
from livesearch_pipeline.evaluation.leaderboard import Leaderboard
from livesearch_pipeline.evaluation.summary import EvaluationSummary
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline.site.inputs import (
    GoldRow,
    RunDay,
    ServedRow,
    SiteDay,
    SkippedRun,
    VerdictRow,
    fingerprint,
    load_day,
)

# Bumped when SiteDay's shape changes, so an old entry is never read into new code.
CACHE_VERSION = 5
MAX_ENTRY_BYTES = 1024 * 1024 * 1024


def _encode(day: SiteDay) -> dict:
    rules: dict[str, int] = {}
    rule_list: list[str] = []
    gold = []
    for row in day.gold.values():
        rule = row.match.model_dump_json()
        if rule not in rules:
            rules[rule] = len(rule_list)
            rule_list.append(rule)
        gold.append([row.qid, row.date.isoformat(), row.status, row.answer, row.value, row.unit, row.observed_period,
                     rules[rule]])
    return {
        "date": day.date.isoformat(), "fingerprint": day.fingerprint,
        "manifest": day.manifest.model_dump_json(), "served": [list(q) for q in day.served],
        "rules": rule_list, "gold": gold,
        "board": day.board.model_dump_json() if day.board else None, "retrieval": day.retrieval,
        "stale": day.stale.model_dump_json() if day.stale else None,
        "runs": [{"agent": r.agent, "folder": r.folder, "ranked": r.ranked, "rank": r.rank,
                  "unranked_reason": r.unranked_reason, "summary": r.summary.model_dump_json(),
                  "wilson_low": r.wilson_low, "wilson_high": r.wilson_high,
                  "verdicts": [list(v) for v in r.verdicts.values()],
                  "trajectories": str(r.trajectories) if r.trajectories else None} for r in day.runs],
        "evidence": day.evidence, "families": day.families,
        "skipped": [[s.agent, s.run_dir, s.reason] for s in day.skipped],
    }


def _decode(data: dict) -> SiteDay:
    rules = [MatchRule.model_validate_json(r) for r in data["rules"]]
    gold = {}
    for qid, date, status, answer, value, unit, period, rule in data["gold"]:
        gold[qid] = GoldRow(qid, dt.date.fromisoformat(date), status, answer, value, unit, period, rules[rule])
    runs = [RunDay(agent=r["agent"], folder=r["folder"], ranked=r["ranked"], rank=r["rank"],
                   unranked_reason=r["unranked_reason"], summary=EvaluationSummary.model_validate_json(r["summary"]),
                   wilson_low=r["wilson_low"], wilson_high=r["wilson_high"],
                   verdicts={v[0]: VerdictRow(*v) for v in r["verdicts"]},
                   trajectories=Path(r["trajectories"]) if r["trajectories"] else None) for r in data["runs"]]
    return SiteDay(
        date=dt.date.fromisoformat(data["date"]), fingerprint=data["fingerprint"],
        manifest=SnapshotManifest.model_validate_json(data["manifest"]), served=[ServedRow(*q) for q in data["served"]],
        gold=gold, board=Leaderboard.model_validate_json(data["board"]) if data["board"] is not None else None,
        retrieval=data["retrieval"],
        stale=StaleGoldAudit.model_validate_json(data["stale"]) if data["stale"] is not None else None,
        runs=runs, evidence=data["evidence"], families=data["families"],
        skipped=[SkippedRun(*s) for s in data["skipped"]],
    )


def _entry_path(cache_dir: Path, day: dt.date) -> Path:
    return cache_dir / f"day-{day.isoformat()}.json"


def _request(paths: DataPaths, day: dt.date, print_: str) -> dict:
    # The data root too: an entry names its runs' trajectory files by path.
    return {"version": CACHE_VERSION, "root": str(paths.root), "day": day.isoformat(), "fingerprint": print_}


def from_cache(paths: DataPaths, day: dt.date, cache_dir: Path) -> tuple[SiteDay | None, str]:
    """(D's inputs from the cache, or None when its entry is missing, unreadable or of another request;
    the fingerprint)."""
    print_ = fingerprint(paths, day)
    try:
        entry = json.loads(read_untrusted(_entry_path(cache_dir, day), max_bytes=MAX_ENTRY_BYTES))
        if not isinstance(entry, dict) or entry.get("request") != _request(paths, day, print_):
            return None, print_
        stored = _decode(entry["day"])
    except (UntrustedFileError, ValueError, KeyError, TypeError, IndexError):
        return None, print_  # parsed again from the source files
    if stored.date != day or stored.fingerprint != print_:
        return None, print_
    return stored, print_


def parse_and_cache(paths: DataPaths, day: dt.date, print_: str, cache_dir: Path) -> SiteDay:
    """Parse every input of D and keep it in the cache under its request."""
    parsed = load_day(paths, day, print_)
    cache_dir.mkdir(parents=True, exist_ok=True)
    entry = {"request": _request(paths, day, print_), "day": _encode(parsed)}
    write_atomic(_entry_path(cache_dir, day), json.dumps(entry, ensure_ascii=False).encode("utf-8"))
    return parsed


def cached_day(paths: DataPaths, day: dt.date, cache_dir: Path) -> tuple[SiteDay, bool]:
    """(D's inputs, whether they came from the cache): parsed again only when the fingerprint moved."""
    stored, print_ = from_cache(paths, day, cache_dir)
    if stored is not None:
        return stored, True
    return parse_and_cache(paths, day, print_, cache_dir), False
