"""The evaluator reads `lang` and `usage` from predictions (issue 21): the Chinese text's unit,
labels in either language, accuracy by the text answered, and the run's cost per correct answer."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from livesearch_pipeline.core.models import MatchRule, Prediction, PredictionRunMeta, Usage
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.evaluation.leaderboard import build_leaderboard, render_markdown
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    DAY,
    SEMANTIC,
    case,
    qid,
    write_gold,
    write_jsonl,
    write_served,
)

MILLION_SHARES = MatchRule(rule="approx", unit="million shares", decimals=2)
BILLION_CNY = MatchRule(rule="approx", unit="billion CNY", decimals=2)
# The three measured Chinese-unit cases, and an industry label answered in English.
CASES = [
    case(1, 20.5625, "20.56 million shares", MILLION_SHARES, unit="million shares", zh=True),
    case(2, 16.721, "16.72 billion CNY", BILLION_CNY, unit="billion CNY", zh=True),
    case(3, 550.822, "550.82 billion CNY", BILLION_CNY, unit="billion CNY", zh=True),
    case(4, "建筑工程", "建筑工程", SEMANTIC, zh=True),
    case(5, 1.5, "1.50 billion CNY", BILLION_CNY, unit="billion CNY"),
]


def _write(root: Path, predictions: list[Prediction], *, model: str | None = "openai/gpt-4o-mini",
           agent: str = "analyst", finished: bool = True) -> tuple[Path, Path, Path]:
    served = write_served(root, CASES)
    gold = write_gold(root, [c.gold for c in CASES])
    path = write_jsonl(root / agent / "predictions.jsonl", [p.model_dump_json(exclude_none=True) for p in predictions])
    started = dt.datetime(2026, 3, 3, 12, 0, tzinfo=dt.timezone.utc)
    meta = PredictionRunMeta(agent=agent, model=model, date=DAY, served_qid_set_hash=qid_set_hash(c.served.qid for c in CASES),
                             started_at=started, finished_at=started + dt.timedelta(seconds=90) if finished else None)
    (path.parent / "predictions.meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return served, gold, path


def test_bare_numbers_answering_the_chinese_text_are_read_in_its_unit(tmp_path: Path) -> None:
    answers = {1: "2056.25", 2: "167.21", 3: "5508.22"}
    chinese = [Prediction(qid=qid(n), answer=a, lang="zh") for n, a in answers.items()]
    served, gold, path = _write(tmp_path, chinese)
    verdicts = {v.qid: v for v in evaluate(served, gold, path).verdicts}
    assert all(verdicts[qid(n)].correct for n in answers), [verdicts[qid(n)].reason for n in answers]
    assert "read in 万股" in verdicts[qid(1)].reason and "read in 亿元" in verdicts[qid(2)].reason

    # The same numbers without `lang` are read in the English rule's unit (million, billion): wrong.
    english = [Prediction(qid=qid(n), answer=a) for n, a in answers.items()]
    served, gold, path = _write(tmp_path / "en", english)
    assert not any(v.correct for v in evaluate(served, gold, path).verdicts)


def test_a_label_in_english_matches_the_chinese_gold_without_a_judge(tmp_path: Path) -> None:
    served, gold, path = _write(tmp_path, [Prediction(qid=qid(4), answer="Construction engineering")])
    result = evaluate(served, gold, path)  # no judge configured
    verdict = next(v for v in result.verdicts if v.qid == qid(4))
    assert verdict.correct and verdict.judge == "deterministic"
    assert result.summary.unresolved_without_judge == 0


def test_lang_zh_for_a_question_without_a_chinese_text_is_refused(tmp_path: Path) -> None:
    served, gold, path = _write(tmp_path, [Prediction(qid=qid(5), answer="15.0", lang="zh")])
    with pytest.raises(EvaluationError, match=r"lang 'zh' for 1 qid\(s\): ls-0000000000000005 served without a Chinese"):
        evaluate(served, gold, path)


def test_accuracy_by_answer_language_and_usage_reach_summary_and_leaderboard(tmp_path: Path) -> None:
    usage = Usage(model_calls=2, tool_calls=1, input_tokens=1000, output_tokens=50, cost_usd=0.002, wall_s=3.5)
    predictions = [
        Prediction(qid=qid(1), answer="2056.25", lang="zh", usage=usage),
        Prediction(qid=qid(2), answer="1.0", lang="zh", usage=usage),
        Prediction(qid=qid(5), answer="1.50 billion CNY", lang="en", usage=usage),
    ]
    served, gold, path = _write(tmp_path, predictions)
    result = evaluate(served, gold, path)
    s = result.summary
    assert s.correct == 2
    assert {k: (b.n, b.correct) for k, b in s.by_answer_language.items()} == {"en": (3, 1), "zh": (2, 1)}
    assert s.usage is not None
    assert (s.usage.model_calls, s.usage.tool_calls, s.usage.input_tokens, s.usage.output_tokens) == (6, 3, 3000, 150)
    assert s.usage.cost_usd == pytest.approx(0.006) and s.usage.cost_per_correct_usd == pytest.approx(0.003)
    assert s.usage.wall_s == pytest.approx(10.5) and s.usage.run_wall_s == pytest.approx(90.0)
    write_evaluation(result, path.parent)

    # A local model: costs unknown, the sum is unknown too (never a partial sum shown as the cost).
    local = [p.model_copy(update={"usage": usage.model_copy(update={"cost_usd": None})}) for p in predictions]
    served, gold, local_path = _write(tmp_path, local, agent="local", model="openai/my-local-model")
    local_result = evaluate(served, gold, local_path)
    assert local_result.summary.usage.cost_usd is None and local_result.summary.usage.cost_per_correct_usd is None
    write_evaluation(local_result, local_path.parent)

    board = build_leaderboard([path.parent, local_path.parent])
    rows = {r.agent: r for r in board.rows}
    assert rows["analyst"].usage.cost_per_correct_usd == pytest.approx(0.003)
    assert rows["analyst"].by_answer_language == {"en": pytest.approx(1 / 3), "zh": 0.5}
    assert rows["analyst"].by_language == {"en": 1.0, "zh": 0.25}  # by the question: only case 5 is English-only
    markdown = render_markdown(board)
    assert "## Languages and usage" in markdown
    assert "| $0.0060 | $0.0030 |" in markdown
    local_line = next(line for line in markdown.splitlines() if "| local |" in line and "tokens" not in line
                      and line.count("|") == 15)
    assert "| - | - |" in local_line


def test_runs_without_usage_have_none(tmp_path: Path) -> None:
    served, gold, path = _write(tmp_path, [Prediction(qid=qid(5), answer="1.50 billion CNY")], model=None)
    assert evaluate(served, gold, path).summary.usage is None


def test_a_web_runs_budget_and_reads_per_correct_answer_reach_summary_and_leaderboard(tmp_path: Path) -> None:
    from livesearch_pipeline.core.models import ReadBudget

    reads = {1: 4, 2: 9, 5: 2}  # question 2 read nine pages and still missed
    answers = {1: "20.56 million shares", 2: "1.00 billion CNY", 5: "1.50 billion CNY"}
    predictions = [Prediction(qid=qid(n), answer=answers[n],
                              usage=Usage(tool_calls=reads[n] + 1, searches=1, page_reads=reads[n],
                                          budget_refusals=int(n == 2)))
                   for n in reads]
    served, gold, path = _write(tmp_path, predictions, model=None, agent="navigator-x")
    meta = PredictionRunMeta.model_validate_json((path.parent / "predictions.meta.json").read_bytes())
    declared = meta.model_copy(update={"budget": ReadBudget(max_reads=9, max_searches=3)})
    (path.parent / "predictions.meta.json").write_text(declared.model_dump_json(), encoding="utf-8")
    result = evaluate(served, gold, path)
    assert result.summary.correct == 2
    assert result.summary.budget == ReadBudget(max_reads=9, max_searches=3)
    usage = result.summary.usage
    assert (usage.page_reads, usage.searches, usage.budget_refusals) == (15, 3, 1)
    assert usage.reads_per_correct == 7.5  # 15 reads for 2 correct answers
    write_evaluation(result, path.parent)
    board = build_leaderboard([path.parent])
    row = board.rows[0]
    assert row.budget == "9 reads, 3 searches" and row.usage.reads_per_correct == 7.5
    markdown = render_markdown(board)
    assert "| navigator-x | - | 9 reads, 3 searches |" in markdown
    assert "| 3 | 15 | 7.50 | 1 |" in markdown
