"""Evaluator benchmark: deterministic throughput, and LLM judge calls per 1,000 answers.

    python benchmarks/evaluate.py [--predictions 10000] [--judge-sample 1000]

1. Throughput: N served questions, their gold snapshot (with manifest) and N predictions are
   written to a temporary directory; `evaluate()` runs with no judge (the deterministic path,
   file loading and every fail-loud check included). Target: 10,000 in under 2 s of wall time.
   CPU time and the load average are printed beside it: on a machine shared with other jobs
   the wall time includes waiting for a core, and both are slowed by shared caches.
2. Judge calls: a realistic mix of 1,000 answers (mostly numeric, some text for semantic rules,
   some long answers quoting several numbers) is evaluated with a mocked judge that counts
   calls. FinSearchComp's harness makes one judge call per answer, i.e. 1,000 per 1,000.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from livesearch_pipeline.core.jsonl import write_jsonl
from livesearch_pipeline.core.models import GoldAnswer, MatchRule, Prediction, PredictionRunMeta, ServedQuestion
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.core.matching import match_answer
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.inputs import load_gold, load_predictions
from livesearch_pipeline.evaluation.judge import LLMJudge
from livesearch_pipeline.infra.llm import LLMResponse

DAY = dt.date(2026, 3, 3)
TARGET_SECONDS = 2.0
NAMES = ["Kunlun Brewing Co., Ltd.", "Harbor Light Holdings", "东海精密制造股份有限公司", "Aster Semiconductor Inc."]
ALIASES = ["Kunlun Brewing", "HLH", "东海精密", "Aster Semi"]
TIERS = ["T1", "T2", "T3"]
CLASSES = ["cn_equity", "hk_equity", "us_equity", "index", "fund", "macro"]
REFRESH = ["daily", "weekly", "monthly", "quarterly", "annual", "static"]


def _question(n: int, rng: random.Random) -> ServedQuestion:
    return ServedQuestion(
        qid=f"ls-{n:016x}", question=f"Question {n} about the most recent trading day?",
        question_zh=f"问题{n}" if n % 3 == 0 else None, tier=rng.choice(TIERS),
        asset_class=rng.choice(CLASSES), refresh_class=rng.choice(REFRESH),
        visibility=rng.randint(0, 10), entity=f"E{n}",
    )


def _item(n: int, rng: random.Random, *, long_share: float) -> tuple[GoldAnswer, str]:
    """One gold answer and a realistic agent answer for it."""
    qid = f"ls-{n:016x}"
    roll = rng.random()
    if roll < 0.10:  # text answer under a semantic rule: exact name, alias, or wrong
        index = rng.randrange(len(NAMES))
        gold = GoldAnswer(qid=qid, date=DAY, status="ok", answer=NAMES[index], value=NAMES[index],
                          match=MatchRule(rule="semantic"))
        answer = rng.choice([NAMES[index], ALIASES[index], NAMES[(index + 1) % len(NAMES)]])
        return gold, answer
    value = round(rng.uniform(1, 5000), 2)
    unit, rule = ("%", MatchRule(rule="approx", unit="%", decimals=2)) if roll < 0.25 else (
        "CNY", MatchRule(rule="approx", unit="CNY", decimals=2))
    gold = GoldAnswer(qid=qid, date=DAY, status="ok", answer=f"{value:.2f}", value=value, unit=unit, match=rule)
    shown = value if rng.random() < 0.7 else round(value * rng.uniform(0.9, 1.1), 2)
    suffix = "%" if unit == "%" else " CNY"
    if roll > 1 - long_share:  # long answer quoting several numbers, no final-answer marker
        other = round(shown * 1.07, 2)
        answer = (f"Looking at the data, the session opened at {other:,.2f}{suffix}, the figure asked "
                  f"for was {shown:,.2f}{suffix}, and the prior reading was {shown * 0.95:,.2f}{suffix}.")
    elif roll > 0.6:
        answer = f"Based on the exchange data, the answer is {shown:,.2f}{suffix}, compared with {shown * 0.98:,.2f} before."
    else:
        answer = f"{shown:,.2f}{suffix}"
    return gold, answer


def write_day(root: Path, n: int, *, seed: int, long_share: float) -> tuple[Path, Path, Path]:
    rng = random.Random(seed)
    served = [_question(i, rng) for i in range(n)]
    items = [_item(i, rng, long_share=long_share) for i in range(n)]
    served_path = root / "served" / f"served_questions_{DAY.isoformat()}.jsonl"
    served_path.parent.mkdir(parents=True)
    write_jsonl(served_path, served)
    gold_path = SnapshotStore(root / "gold").write(
        DAY, [g for g, _ in items], pool_version="bench", pool_sha256="0" * 64, data_service="bench",
        code_version="bench", max_withdrawn_share=0.05,
        cutoff=dt.datetime.combine(DAY, dt.time(23, 59, 59), tzinfo=dt.timezone.utc),
    ).path
    predictions_path = root / "run" / "predictions.jsonl"
    predictions_path.parent.mkdir(parents=True)
    predictions_path.write_text(
        "".join(Prediction(qid=g.qid, answer=a).model_dump_json(exclude_none=True) + "\n" for g, a in items),
        encoding="utf-8",
    )
    meta = PredictionRunMeta(agent="bench", model="openai/gpt-4o-mini", date=DAY,
                             served_qid_set_hash=qid_set_hash(q.qid for q in served),
                             started_at=dt.datetime(2026, 3, 3, tzinfo=dt.timezone.utc))
    (predictions_path.parent / "predictions.meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return served_path, gold_path, predictions_path


_NUMBER = re.compile(r"\d[\d,]*\.\d+%?(?: CNY)?")


class CountingMockJudge:
    """Answers like a sensible judge would, counting calls (no network, no litellm)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, messages: Sequence[dict[str, Any]], *, model: str, **_: Any) -> LLMResponse:
        self.calls += 1
        system, user = messages[0]["content"], messages[1]["content"]
        if "final_answer" in system:
            numbers = _NUMBER.findall(user.split("\n\n")[-1])
            content = json.dumps({"final_answer": numbers[1] if len(numbers) > 1 else None, "reason": "asked figure"})
        else:
            content = json.dumps({"correct": True, "reason": "same entity"})
        return LLMResponse(content=content, tool_calls=(), finish_reason="stop", model=model,
                           prompt_tokens=0, completion_tokens=0, cached=False, cache_key="mock")


def _matching_cpu_seconds(files: tuple[Path, Path, Path]) -> float:
    """CPU time spent in the deterministic matcher alone, on the same answers."""
    gold = load_gold(files[1])
    predictions, _ = load_predictions(files[2])
    started = time.process_time()
    for prediction in predictions:
        answer = gold.answers[prediction.qid]
        match_answer(answer.match, answer.value, prediction.answer, gold_unit=answer.unit)
    return time.process_time() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--predictions", type=int, default=10_000)
    parser.add_argument("--judge-sample", type=int, default=1_000)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        files = write_day(Path(tmp) / "throughput", args.predictions, seed=1, long_share=0.10)
        started, cpu_started = time.perf_counter(), time.process_time()
        result = evaluate(*files)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        s = result.summary
        target = TARGET_SECONDS * args.predictions / 10_000
        print(f"deterministic evaluation: {args.predictions} predictions in {seconds:.3f} s "
              f"({args.predictions / seconds:,.0f}/s); target {target:.2f} s; ratio {seconds / target:.2f} "
              f"-> {'PASS' if seconds < target else 'FAIL'}")
        load_1min = os.getloadavg()[0]
        print(f"  CPU time {cpu_seconds:.3f} s (ratio {cpu_seconds / target:.2f}); load average {load_1min:.1f} "
              f"on {os.cpu_count()} cores{' (shared with other jobs: both times are inflated)' if load_1min > 1 else ''}")
        matching = _matching_cpu_seconds(files)
        print(f"  of which core.matching.match_answer: {matching:.3f} s CPU; evaluator overhead (loading, "
              f"checks, verdicts, summary): {max(0.0, cpu_seconds - matching):.3f} s CPU")
        print(f"  accuracy {s.accuracy:.3f}; {s.unresolved_without_judge} answers would need the judge")

        judge_files = write_day(Path(tmp) / "judge", args.judge_sample, seed=2, long_share=0.10)
        completer = CountingMockJudge()
        judge = LLMJudge("anthropic/claude-3-5-haiku", completer=completer)
        judged = evaluate(*judge_files, judge=judge).summary
        per_1000 = completer.calls * 1000 / args.judge_sample
        print(f"judge calls: {completer.calls} for {args.judge_sample} answers = {per_1000:.0f} per 1,000 "
              f"(semantic {judged.llm_semantic}, extraction {judged.llm_extraction}, "
              f"judge errors {judged.judge_errors}); one call per answer (FinSearchComp) = 1,000 per 1,000; "
              f"{1000 / per_1000 if per_1000 else float('inf'):.1f}x fewer")
    return 0 if seconds < target else 1


if __name__ == "__main__":
    sys.exit(main())
