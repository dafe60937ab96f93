"""Small benchmark days on disk (served questions, gold snapshot + manifest, predictions)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from livesearch_pipeline.core.models import GoldAnswer, MatchRule, Prediction, PredictionRunMeta, ServedQuestion
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.core.qid import qid_set_hash

if TYPE_CHECKING:
    from livesearch_pipeline.evaluation.day_inputs import AgentDay
    from livesearch_pipeline.infra.llm import LLMResponse

DAY = dt.date(2026, 3, 3)


def qid(n: int) -> str:
    return f"ls-{n:016x}"


@dataclass(frozen=True)
class Case:
    served: ServedQuestion
    gold: GoldAnswer


def case(
    n: int,
    value: float | str,
    answer: str,
    rule: MatchRule,
    *,
    unit: str | None = None,
    tier: str = "T1",
    asset_class: str = "cn_equity",
    refresh_class: str = "daily",
    visibility: int = 5,
    zh: bool = False,
    date: dt.date = DAY,
) -> Case:
    served = ServedQuestion(
        qid=qid(n), question=f"Question {n} about the most recent trading day?",
        question_zh=f"关于最近一个交易日的问题{n}？" if zh else None,
        tier=tier, asset_class=asset_class, refresh_class=refresh_class, visibility=visibility, entity=f"E{n}",
    )
    gold = GoldAnswer(qid=qid(n), date=date, status="ok", answer=answer, value=value, unit=unit, match=rule)
    return Case(served, gold)


CNY2 = MatchRule(rule="approx", unit="CNY", decimals=2)
PCT2 = MatchRule(rule="approx", unit="%", decimals=2)
SEMANTIC = MatchRule(rule="semantic")
EXACT = MatchRule(rule="exact")


def standard_cases(date: dt.date = DAY) -> list[Case]:
    return [
        case(1, 1234.56, "1234.56", CNY2, unit="CNY", tier="T1", visibility=9, zh=True, date=date),
        case(2, 1.23, "1.23%", PCT2, unit="%", tier="T2", asset_class="us_equity",
             refresh_class="monthly", visibility=2, date=date),
        case(3, "Kunlun Brewing Co., Ltd.", "Kunlun Brewing Co., Ltd.", SEMANTIC, tier="T3",
             asset_class="hk_equity", refresh_class="static", visibility=5, date=date),
        case(4, 42, "42", EXACT, tier="T2", asset_class="index", refresh_class="quarterly", visibility=0, date=date),
    ]


def write_jsonl(path: Path, lines: Sequence[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_served(root: Path, cases: Sequence[Case], date: dt.date = DAY) -> Path:
    return write_jsonl(
        root / "served" / f"served_questions_{date.isoformat()}.jsonl",
        [c.served.model_dump_json() for c in sorted(cases, key=lambda c: c.served.qid)],
    )


POOL_SHA256 = "0" * 64
CUTOFF = dt.datetime(2026, 3, 3, 22, 0, tzinfo=dt.timezone.utc)


def write_gold(root: Path, answers: Sequence[GoldAnswer], date: dt.date = DAY, *, manifest: bool = True,
               max_withdrawn_share: float = 0.5) -> Path:
    store = SnapshotStore(root / "gold")
    if manifest:
        return store.write(
            date, list(answers), pool_version="test-pool", pool_sha256=POOL_SHA256, data_service="synthetic-test",
            code_version="test", max_withdrawn_share=max_withdrawn_share, cutoff=CUTOFF,
        ).path
    return write_jsonl(store.path_for(date), [a.model_dump_json() for a in sorted(answers, key=lambda a: a.qid)])


def write_predictions(
    root: Path,
    answers: dict[str, str | None],
    *,
    served_qids: Sequence[str] | None = None,
    agent: str = "test-agent",
    model: str | None = "openai/gpt-4o-mini",
    date: dt.date = DAY,
    errors: dict[str, str] | None = None,
    name: str = "run",
) -> Path:
    errors = errors or {}
    path = write_jsonl(
        root / name / "predictions.jsonl",
        [Prediction(qid=q, answer=a, error=errors.get(q)).model_dump_json(exclude_none=True) for q, a in answers.items()],
    )
    served_file = root / "served" / f"served_questions_{date.isoformat()}.jsonl"
    if served_qids is None and served_file.is_file():
        # The evaluator requires the run metadata: default to the day's served set beside it.
        served_qids = [json.loads(line)["qid"] for line in served_file.read_text(encoding="utf-8").splitlines()]
    if served_qids is not None:
        meta = PredictionRunMeta(
            agent=agent, model=model, date=date, served_qid_set_hash=qid_set_hash(served_qids),
            started_at=dt.datetime(2026, 3, 3, 12, 0, tzinfo=dt.timezone.utc),
        )
        (path.parent / "predictions.meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return path


def write_day(root: Path, cases: Sequence[Case], answers: dict[str, str | None], **prediction_options: object) -> tuple[Path, Path, Path]:
    served = write_served(root, cases)
    gold = write_gold(root, [c.gold for c in cases])
    predictions = write_predictions(root, answers, served_qids=[c.served.qid for c in cases], **prediction_options)
    return served, gold, predictions


def agent_day(root: Path, date: dt.date = DAY) -> AgentDay:
    """The `AgentDay` of `date` under the data root `root`, with a served file and gold (the standard
    cases) written first: building it requires both."""
    from livesearch_pipeline.evaluation.day_inputs import AgentDay
    from livesearch_pipeline.settings import DataPaths

    cases = standard_cases(date)
    write_served(root, cases, date)
    write_gold(root, [c.gold for c in cases], date)
    return AgentDay.build(DataPaths(root), date)


def json_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


class ScriptedCompleter:
    """Stands in for `llm.complete`: returns scripted contents in order, records the messages."""

    def __init__(self, *contents: str) -> None:
        self.contents = list(contents)
        self.calls: list[list[dict[str, object]]] = []

    def __call__(self, messages: Sequence[dict[str, object]], *, model: str, **_: object) -> "LLMResponse":
        from livesearch_pipeline.infra.llm import LLMResponse

        self.calls.append(list(messages))
        if not self.contents:
            raise AssertionError(f"unexpected LLM call #{len(self.calls)} for {model}")
        return LLMResponse(
            content=self.contents.pop(0), tool_calls=(), finish_reason="stop", model=model,
            prompt_tokens=1, completion_tokens=1, cached=False, cache_key="scripted",
        )
