"""Audits of the benchmark itself: the stale-gold rate and the longitudinal value table.

Stale-gold audit for D: the gold of the previous date that has a snapshot (normally the
previous trading day) answers D's served questions as if it were an agent, and is scored by the
evaluator's deterministic matcher against D's gold. A live benchmark must fail most daily-class
questions this way and no static-class question. The rate is over questions whose gold is `ok`
on both dates; questions absent from (or not `ok` in) the previous snapshot, and questions whose
gold of D is not `ok`, are counted separately and left out of the rate, because neither says
anything about staleness. Semantic answers that differ after normalisation count as failed (no
LLM is involved in an audit). Both snapshots are verified against their manifests.

Longitudinal audit: for a fixed qid set over a date range, the frozen answer of every qid on
every date that has a snapshot — the table an auditor reads to see which values moved when.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from livesearch_pipeline.core.models import GoldAnswer, Prediction, ServedQuestion
from livesearch_pipeline.core.snapshot import (
    SnapshotIntegrityError,
    SnapshotNotFoundError,
    SnapshotStore,
    write_atomic,
)
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.inputs import load_served
from livesearch_pipeline.evaluation.scoring import score_deterministic
from livesearch_pipeline.settings import DataPaths


class AuditError(ValueError):
    """An audit cannot be computed (missing or corrupt snapshot, missing served questions)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RateStats(_Model):
    n: int
    failed: int
    failure_rate: float


class StaleRow(_Model):
    qid: str
    refresh_class: str
    gold_answer: str
    stale_answer: str | None
    failed: bool
    reason: str


class StaleGoldAudit(_Model):
    date: dt.date
    previous_date: dt.date
    calendar_days_between: int
    n_served: int
    n_compared: int
    n_failed: int
    failure_rate: float
    by_refresh_class: dict[str, RateStats]
    not_ok_on_date: int
    not_ok_or_absent_on_previous: int
    rows: list[StaleRow]


def _rate(rows: Sequence[StaleRow]) -> RateStats:
    failed = sum(1 for r in rows if r.failed)
    return RateStats(n=len(rows), failed=failed, failure_rate=failed / len(rows) if rows else 0.0)


def _read_snapshot(store: SnapshotStore, date: dt.date) -> list[GoldAnswer]:
    try:
        return store.read(date)
    except (SnapshotIntegrityError, SnapshotNotFoundError) as exc:
        raise AuditError(str(exc)) from exc


def previous_snapshot_date(store: SnapshotStore, date: dt.date) -> dt.date:
    earlier = [d for d in store.dates() if d < date]
    if not earlier:
        raise AuditError(f"no gold snapshot before {date} under {store.root}: nothing to audit against")
    return earlier[-1]


def default_served_path(gold_dir: Path, date: dt.date) -> Path:
    """The served file of D in the data root that holds `gold_dir` (`DataPaths.served_file`, DESIGN §4.7)."""
    return DataPaths(root=Path(gold_dir).parent).served_file(date)


def stale_gold_audit(gold_dir: Path, date: dt.date, *, served_path: Path | None = None) -> StaleGoldAudit:
    store = SnapshotStore(Path(gold_dir))
    served_file = served_path or default_served_path(gold_dir, date)
    try:
        served: list[ServedQuestion] = load_served(Path(served_file))
    except EvaluationError as exc:
        raise AuditError(str(exc)) from exc
    current = {a.qid: a for a in _read_snapshot(store, date)}
    previous_date = previous_snapshot_date(store, date)
    previous = {a.qid: a for a in _read_snapshot(store, previous_date)}
    missing = sorted(q.qid for q in served if q.qid not in current)
    if missing:
        raise AuditError(
            f"the gold of {date} misses {len(missing)} served qid(s) of {served_file}: {', '.join(missing[:5])}"
        )
    rows: list[StaleRow] = []
    not_ok_now = not_ok_before = 0
    for question in sorted(served, key=lambda q: q.qid):
        gold = current[question.qid]
        if gold.status != "ok":
            not_ok_now += 1
            continue
        stale = previous.get(question.qid)
        if stale is None or stale.status != "ok":
            not_ok_before += 1
            continue
        verdict, _ = score_deterministic(gold, Prediction(qid=question.qid, answer=stale.answer))
        rows.append(
            StaleRow(
                qid=question.qid, refresh_class=question.refresh_class, gold_answer=gold.answer or "",
                stale_answer=stale.answer, failed=verdict.correct is not True, reason=verdict.reason,
            )
        )
    overall = _rate(rows)
    classes = sorted({r.refresh_class for r in rows})
    return StaleGoldAudit(
        date=date, previous_date=previous_date,
        calendar_days_between=(date - previous_date).days,
        n_served=len(served), n_compared=overall.n, n_failed=overall.failed,
        failure_rate=overall.failure_rate,
        by_refresh_class={c: _rate([r for r in rows if r.refresh_class == c]) for c in classes},
        not_ok_on_date=not_ok_now, not_ok_or_absent_on_previous=not_ok_before, rows=rows,
    )


def render_stale_report(audit: StaleGoldAudit) -> str:
    lines = [
        f"Stale-gold audit for {audit.date}: gold of {audit.previous_date} "
        f"({audit.calendar_days_between} calendar day(s) earlier) scored against the gold of {audit.date}",
        f"overall: {audit.n_failed}/{audit.n_compared} failed ({audit.failure_rate:.1%})",
    ]
    for name, stats in audit.by_refresh_class.items():
        lines.append(f"  {name:<10} {stats.failed}/{stats.n} failed ({stats.failure_rate:.1%})")
    if audit.not_ok_on_date or audit.not_ok_or_absent_on_previous:
        lines.append(
            f"left out: {audit.not_ok_on_date} without ok gold on {audit.date}, "
            f"{audit.not_ok_or_absent_on_previous} absent or not ok on {audit.previous_date}"
        )
    return "\n".join(lines) + "\n"


def write_stale_audit(audit: StaleGoldAudit, out_dir: Path) -> Path:
    path = Path(out_dir) / f"stale_gold_audit_{audit.date.isoformat()}.json"
    write_atomic(path, (json.dumps(audit.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n").encode())
    return path


# --------------------------------------------------------------------------- longitudinal


class LongitudinalCell(_Model):
    date: dt.date
    qid: str
    status: str  # ok / empty / error, or "absent" when the snapshot has no such qid
    answer: str | None
    observed_period: str | None


class LongitudinalAudit(_Model):
    start: dt.date
    end: dt.date
    dates: list[dt.date]
    qids: list[str]
    cells: list[LongitudinalCell]  # date-major, then qid
    changes: dict[str, int]  # per qid: how many times the answer differs from the previous date


def longitudinal_audit(gold_dir: Path, qids: Sequence[str], start: dt.date, end: dt.date, *,
                       store_dir: Path | None = None) -> LongitudinalAudit:
    """With `store_dir` (the Parquet store, `<data>/analytics`) the answers come from its gold
    table, after checking that every date's partition was derived from the frozen snapshot; the
    result is the same as from the JSONL, which is read only when `store_dir` is None."""
    if end < start:
        raise AuditError(f"the date range is empty: {start} is after {end}")
    wanted = sorted(set(qids))
    if not wanted:
        raise AuditError("the longitudinal audit needs at least one qid")
    store = SnapshotStore(Path(gold_dir))
    dates = [d for d in store.dates() if start <= d <= end]
    if not dates:
        raise AuditError(f"no gold snapshot between {start} and {end} under {gold_dir}")
    cells: list[LongitudinalCell] = []
    by_date = _stored_answers(Path(store_dir), Path(gold_dir), dates, wanted) if store_dir is not None else None
    for date in dates:
        answers = by_date[date] if by_date is not None else {a.qid: a for a in _read_snapshot(store, date)}
        for qid in wanted:
            gold = answers.get(qid)
            cells.append(
                LongitudinalCell(
                    date=date, qid=qid, status=gold.status if gold else "absent",
                    answer=gold.answer if gold else None,
                    observed_period=gold.observed_period if gold else None,
                )
            )
    changes = {}
    for qid in wanted:
        series = [c.answer for c in cells if c.qid == qid]
        changes[qid] = sum(1 for before, after in zip(series, series[1:]) if before != after)
    return LongitudinalAudit(start=start, end=end, dates=dates, qids=wanted, cells=cells, changes=changes)


def _stored_answers(store_dir: Path, gold_dir: Path, dates: Sequence[dt.date],
                    qids: Sequence[str]) -> dict[dt.date, dict[str, GoldAnswer]]:
    """The wanted qids' gold of every date, from the Parquet store (one scan, qid-filtered)."""
    from livesearch_pipeline.evaluation.store import StoreError, current_gold_dates, gold_answer_from_row, read_table

    try:
        current_gold_dates(store_dir, gold_dir, dates)
        rows = read_table(store_dir, "gold", dates=dates, qids=qids).to_pylist()
    except StoreError as exc:
        raise AuditError(str(exc)) from exc
    by_date: dict[dt.date, dict[str, GoldAnswer]] = {d: {} for d in dates}
    for row in rows:
        by_date[row["date"]][row["qid"]] = gold_answer_from_row(row["date"], row)
    return by_date


def render_longitudinal_csv(audit: LongitudinalAudit) -> str:
    """Wide table: one row per date, one column per qid, the frozen answer in each cell."""
    by_key = {(c.date, c.qid): c for c in audit.cells}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["date", *audit.qids])
    for date in audit.dates:
        row = []
        for qid in audit.qids:
            cell = by_key[(date, qid)]
            row.append(cell.answer if cell.status == "ok" else f"<{cell.status}>")
        writer.writerow([date.isoformat(), *row])
    return buffer.getvalue()


def write_longitudinal_audit(audit: LongitudinalAudit, out_dir: Path) -> tuple[Path, Path]:
    stem = f"longitudinal_{audit.start.isoformat()}_{audit.end.isoformat()}"
    json_path, csv_path = Path(out_dir) / f"{stem}.json", Path(out_dir) / f"{stem}.csv"
    write_atomic(json_path, (json.dumps(audit.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n").encode())
    write_atomic(csv_path, render_longitudinal_csv(audit).encode("utf-8"))
    return json_path, csv_path


# --------------------------------------------------------------------------- stale-gold series (Parquet)


class StaleSeriesPoint(_Model):
    date: dt.date
    previous_date: dt.date
    n_compared: int
    n_failed: int
    failure_rate: float
    by_refresh_class: dict[str, RateStats]


def stale_gold_series(store_dir: Path, gold_dir: Path, start: dt.date, end: dt.date) -> list[StaleSeriesPoint]:
    """The stale-gold rate of every snapshot date in [start, end], from the Parquet store.

    Each point is what `stale_gold_audit` reports for that date (same rows left out, same
    deterministic matcher), computed from the store's gold and served tables in one scan
    instead of re-reading two snapshots and a served file per date.
    """
    from livesearch_pipeline.evaluation.store import StoreError, current_gold_dates, gold_answer_from_row, read_table

    if end < start:
        raise AuditError(f"the date range is empty: {start} is after {end}")
    all_dates = [d for d in SnapshotStore(Path(gold_dir)).dates() if d <= end]
    targets = [d for d in all_dates if d >= start and d > all_dates[0]]
    if not targets:
        raise AuditError(f"no gold snapshot with an earlier one between {start} and {end} under {gold_dir}")
    needed = sorted({all_dates[all_dates.index(d) - 1] for d in targets} | set(targets))
    try:
        current_gold_dates(Path(store_dir), Path(gold_dir), needed)
        gold_rows = read_table(Path(store_dir), "gold", dates=needed).to_pylist()
        served_rows = read_table(Path(store_dir), "served", dates=targets,
                                 columns=["date", "qid", "refresh_class"]).to_pylist()
    except StoreError as exc:
        raise AuditError(str(exc)) from exc
    gold: dict[dt.date, dict[str, GoldAnswer]] = {d: {} for d in needed}
    for row in gold_rows:
        gold[row["date"]][row["qid"]] = gold_answer_from_row(row["date"], row)
    served: dict[dt.date, list[tuple[str, str]]] = {d: [] for d in targets}
    for row in served_rows:
        served[row["date"]].append((row["qid"], row["refresh_class"]))
    points = []
    for date in targets:
        previous_date = all_dates[all_dates.index(date) - 1]
        rows: list[tuple[str, bool]] = []
        for qid, refresh_class in sorted(served[date]):
            now, before = gold[date].get(qid), gold[previous_date].get(qid)
            if now is None or now.status != "ok" or before is None or before.status != "ok":
                continue
            verdict, _ = score_deterministic(now, Prediction(qid=qid, answer=before.answer))
            rows.append((refresh_class, verdict.correct is not True))
        failed = sum(1 for _, f in rows if f)
        n_by_class = Counter(c for c, _ in rows)
        failed_by_class = Counter(c for c, f in rows if f)
        points.append(StaleSeriesPoint(
            date=date, previous_date=previous_date, n_compared=len(rows), n_failed=failed,
            failure_rate=failed / len(rows) if rows else 0.0,
            by_refresh_class={c: RateStats(n=n, failed=failed_by_class[c], failure_rate=failed_by_class[c] / n)
                              for c, n in sorted(n_by_class.items())},
        ))
    return points
