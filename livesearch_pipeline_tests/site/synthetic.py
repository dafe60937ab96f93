"""Synthetic frozen days for the site's tests and benchmarks/site.py, written by the real writers.

A pool of `n` questions (one `daily` bar program each, on fictional codes, with a mix of refresh
classes, tiers, asset classes and Chinese texts), then for each day: the served file
(`core.served.write_served`), a gold snapshot (`SnapshotStore.write`) whose values follow each
question's refresh class (daily: a seeded walk that moves every day; weekly, monthly, quarterly:
steps; static: a constant), three agent runs scored by the real evaluator (`oracle` answers the
gold, `stale` the previous day's gold, `reader` the gold of one question in three), their
trajectories, the leaderboard, the stale-gold audit and an evidence map of the day's web.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from pathlib import Path
from typing import Sequence

from livesearch_pipeline.core.models import (
    Call, DateSpec, Extractor, Format, GoldAnswer, MatchRule, Prediction, PredictionRunMeta, Program, Provenance,
    Question, Selection, TrajectoryLine, Usage,
)
from livesearch_pipeline.core.pool import MANIFEST_FILE, POOL_FILE
from livesearch_pipeline.core.qid import compute_qid, qid_set_hash
from livesearch_pipeline.core.served import served_from_pool, write_served
from livesearch_pipeline.core.snapshot import SnapshotStore, write_atomic
from livesearch_pipeline.evaluation.audits import stale_gold_audit, write_stale_audit
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.leaderboard import build_leaderboard, write_leaderboard
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.settings import DataPaths

AGENTS = ("oracle", "reader", "stale")
CLASSES = ("daily",) * 14 + ("weekly", "monthly", "monthly", "quarterly", "annual", "static")
STEP = {"weekly": 5, "monthly": 21, "quarterly": 63, "annual": 250}
RULE = MatchRule(rule="approx", abs_tol=0.005, decimals=2, unit="CNY")


def _seed(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def synthetic_pool(n: int) -> list[Question]:
    questions = []
    for i in range(n):
        code = f"6{i:05d}.SH"
        refresh_class = CLASSES[i % len(CLASSES)]
        window = 0 if i % 3 else 4
        program = Program(
            calls=[Call(id="c1", tool="daily", args={"ts_code": code},
                        dates={"start_date": DateSpec(sessions_back=window, calendar="XSHG"),
                               "end_date": DateSpec(sessions_back=0, calendar="XSHG")})],
            extract=Extractor(call="c1", select=Selection(mode="all" if window else "latest", key="trade_date"),
                              field="close", aggregate="mean" if window else None,
                              format=Format(kind="number", decimals=2, unit="CNY")))
        tier = "T1" if refresh_class == "daily" and not window else ("T3" if window else "T2")
        questions.append(Question(
            qid=compute_qid(program, code),
            question=f"What was the {'mean close over the last 5 sessions' if window else 'close'} of Fictional "
                     f"Company {i} ({code}) on the most recent trading day, in CNY to 2 decimals?",
            question_zh=f"虚构公司{i}（{code}）最近一个交易日的收盘价是多少元？" if i % 2 else None,
            program=program, match=RULE, refresh_class=refresh_class, tier=tier, asset_class="cn_equity",
            entity=code, entity_name=f"Fictional Company {i}", visibility=i % 11, signature=f"sig-{i % 7:012d}",
            provenance=Provenance(verbalizer="template")))
    return sorted(questions, key=lambda q: q.qid)


def write_pool(paths: DataPaths, pool: Sequence[Question]) -> None:
    """questions.jsonl only: the site reads the pool with `load_pool` (no manifest check)."""
    data = "".join(q.model_dump_json() + "\n" for q in pool).encode("utf-8")
    write_atomic(paths.pool / POOL_FILE, data)
    write_atomic(paths.pool / MANIFEST_FILE, json.dumps({"note": "synthetic pool of the site tests"}).encode())


def _value(question: Question, index: int) -> float:
    """The question's value on the index-th day: moves as its refresh class says."""
    rng_base = 10 + _seed(question.qid) % 900
    if question.refresh_class == "static":
        return float(rng_base)
    if question.refresh_class == "daily":
        return rng_base + (_seed(question.qid, index) % 2000) / 100
    return rng_base + (index // STEP[question.refresh_class]) * 1.25


def gold_answers(pool: Sequence[Question], day: dt.date, index: int) -> list[GoldAnswer]:
    answers = []
    for q in pool:
        value = round(_value(q, index), 2)
        answers.append(GoldAnswer(qid=q.qid, date=day, status="ok", answer=f"{value:.2f}", value=value, unit="CNY",
                                  observed_period=day.strftime("%Y%m%d"), args={"c1": {"ts_code": q.entity}},
                                  match=q.match))
    return answers


def _predictions(agent: str, answers: list[GoldAnswer], previous: list[GoldAnswer] | None) -> list[Prediction]:
    if agent == "oracle":
        return [Prediction(qid=a.qid, answer=a.answer) for a in answers]
    if agent == "stale":
        return [Prediction(qid=a.qid, answer=a.answer) for a in (previous or [])]
    out = []
    for a in answers:
        right = _seed(agent, a.qid, a.date) % 3 == 0
        out.append(Prediction(qid=a.qid, answer=a.answer if right else "0.01",
                              usage=Usage(model_calls=2, tool_calls=3, input_tokens=1500, output_tokens=40,
                                          cost_usd=0.0004, wall_s=1.5)))
    return out


def write_day(paths: DataPaths, pool: Sequence[Question], day: dt.date, index: int, *,
              previous: list[GoldAnswer] | None, pool_version: str = "pool-synthetic1",
              trajectories: bool = True) -> list[GoldAnswer]:
    served = served_from_pool(pool)
    write_served(paths.served_file(day), served)
    answers = gold_answers(pool, day, index)
    store = SnapshotStore(paths.gold)
    store.write(day, answers, pool_version=pool_version, pool_sha256="0" * 64, data_service="synthetic",
                code_version="test", max_withdrawn_share=0.05,
                cutoff=dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=dt.timezone.utc),
                created_at=dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=dt.timezone.utc))
    run_dirs = []
    for agent in AGENTS:
        if agent == "stale" and previous is None:
            continue
        run_dir = paths.run_dir(day, agent)
        run_dir.mkdir(parents=True, exist_ok=True)
        predictions = _predictions(agent, answers, previous)
        (run_dir / "predictions.jsonl").write_text(
            "".join(p.model_dump_json(exclude_none=True) + "\n" for p in predictions), encoding="utf-8")
        started = dt.datetime.combine(day, dt.time(12), tzinfo=dt.timezone.utc)
        meta = PredictionRunMeta(agent=agent, model="synthetic/reader-1" if agent == "reader" else None, date=day,
                                 served_qid_set_hash=qid_set_hash(q.qid for q in served), started_at=started,
                                 finished_at=started + dt.timedelta(minutes=5))
        (run_dir / "predictions.meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
        if trajectories:
            (run_dir / "trajectories.jsonl").write_text("".join(
                TrajectoryLine(qid=p.qid, messages=[{"role": "assistant", "content": p.answer}]).model_dump_json()
                + "\n" for p in predictions), encoding="utf-8")
        result = evaluate(paths.served_file(day), store.path_for(day), run_dir / "predictions.jsonl")
        write_evaluation(result, run_dir)
        run_dirs.append(run_dir)
    board = build_leaderboard(run_dirs, date=day.isoformat(), gold_dir=paths.gold, served_dir=paths.served)
    write_leaderboard(board, paths.runs / day.isoformat() / "leaderboard")
    if previous is not None:
        audit = stale_gold_audit(paths.gold, day, served_path=paths.served_file(day))
        write_stale_audit(audit, paths.runs / day.isoformat() / "audits")
    web_dir = paths.web / day.isoformat()
    web_dir.mkdir(parents=True, exist_ok=True)
    evidence = {"version": 1, "clock": day.isoformat(), "questions": {
        q.qid: {"pages": [f"/quote/{q.entity}/history.html", f"/company/{q.entity}.html"],
                "family": "window" if q.program.extract.aggregate else "lookup"} for q in pool}}
    (web_dir / "evidence.json").write_text(json.dumps(evidence), encoding="utf-8")
    return answers


def sessions(start: dt.date, count: int) -> list[dt.date]:
    """`count` weekdays from `start` (the synthetic market needs no holiday)."""
    days, day = [], start
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def write_days(root: Path, n_questions: int, days: Sequence[dt.date], *, pool_change_at: int | None = None,
               trajectories: bool = True) -> list[Question]:
    """A data root with the pool and every day of `days` (see the module doc)."""
    paths = DataPaths(Path(root))
    pool = synthetic_pool(n_questions)
    write_pool(paths, pool)
    previous = None
    for index, day in enumerate(days):
        version = "pool-synthetic2" if pool_change_at is not None and index >= pool_change_at else "pool-synthetic1"
        previous = write_day(paths, pool, day, index, previous=previous, pool_version=version,
                             trajectories=trajectories)
    return pool


def random_answers(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.uniform(1, 100):.2f}" for _ in range(n)]
