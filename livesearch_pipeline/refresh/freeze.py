"""Validate, then freeze: the close guard on `latest` answers, rejected days, the preview (no Dagster
here). The served file of a day is written and read by `core.served`."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from livesearch_pipeline.core.models import GoldAnswer, Question, ServedQuestion
from livesearch_pipeline.core.publication import expected_latest_period
from livesearch_pipeline.core.served import (  # noqa: F401 - served files, re-exported for the refresh's users
    ServedConflictError, ServedWrite, render_served, served_from_pool, write_served,
)
from livesearch_pipeline.core.snapshot import render_answers, write_atomic


def preview_markdown(answers: Sequence[GoldAnswer], questions: Mapping[str, Question | ServedQuestion],
                     rows: int = 8) -> str:
    def cell(text: object) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| qid | question | status | answer | observed |", "|---|---|---|---|---|"]
    for a in list(answers)[:rows]:
        q = questions.get(a.qid)
        text = q.question if q else ""
        lines.append(f"| {a.qid} | {cell(text[:90])} | {a.status} | {cell(a.answer or a.error or '')} | "
                     f"{cell(a.observed_period or '')} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- validate, then freeze


@dataclass(frozen=True)
class LatestObservations:
    """`latest` answers of daily questions whose observed period is not the last session on or before D."""

    checked: int
    stale: list[dict] = field(default_factory=list)

    @property
    def share(self) -> float:
        return len(self.stale) / self.checked if self.checked else 0.0


def latest_observations(day: dt.date, answers: Sequence[GoldAnswer], pool: Mapping[str, Question],
                        lags: Mapping[str, int]) -> LatestObservations:
    """`lags`: the tools' publication lags (core.publication.publication_lags of the pool's catalog)."""
    checked, stale = 0, []
    for a in answers:
        q = pool.get(a.qid)
        if q is None or a.status != "ok" or q.refresh_class != "daily":
            continue
        # The last session, or the last one published for a series with a publication lag.
        expected = expected_latest_period(q.program, day, lags)
        if expected is None:
            continue
        checked += 1
        if a.observed_period != expected:
            stale.append({"qid": a.qid, "observed": a.observed_period, "expected": expected})
    return LatestObservations(checked=checked, stale=stale)


def withdraw_stale_latest(day: dt.date, answers: Sequence[GoldAnswer],
                          pool: Mapping[str, Question], lags: Mapping[str, int]) -> list[GoldAnswer]:
    """A daily `latest` answer that did not observe the last session on or before D (the last
    published one, for a series with a publication lag: core.publication) does not answer "the
    most recent trading day" (the instrument was suspended, or its bar is missing):
    it becomes `empty`, naming what it observed, and so is withdrawn from D like any other."""
    stale = {row["qid"]: row for row in latest_observations(day, answers, pool, lags).stale}
    if not stale:
        return list(answers)
    return [
        a if a.qid not in stale else GoldAnswer(
            qid=a.qid, date=a.date, status="empty", unit=a.unit, observed_period=a.observed_period, args=a.args,
            match=a.match, error=f"no record on the last session {stale[a.qid]['expected']} (the latest observed is "
                                 f"{stale[a.qid]['observed']}: suspended or not published)")
        for a in answers
    ]


def write_rejected(directory: Path, day: dt.date, answers: Sequence[GoldAnswer], problems: Sequence[str],
                   *, attempted_at: dt.datetime, context: Mapping[str, object]) -> Path:
    """Keep a refused day's answers for inspection, outside the gold store and clearly named.

    `rejected/gold_answers_<D>.rejected-<UTC time>.jsonl` plus a `.reason.json` beside it. Each
    attempt gets its own pair, so a later successful refresh of D never collides with them.
    """
    stamp = attempted_at.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    path = directory / f"gold_answers_{day.isoformat()}.rejected-{stamp}.jsonl"
    write_atomic(path, render_answers(answers), exclusive=True)
    reason = {"date": day.isoformat(), "attempted_at": attempted_at.isoformat(), "problems": list(problems),
              "answers": path.name, **context}
    write_atomic(path.with_suffix(".reason.json"), (json.dumps(reason, indent=2, sort_keys=True) + "\n").encode(),
                 exclusive=True)
    return path
