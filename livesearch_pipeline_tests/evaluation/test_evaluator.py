from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest

from livesearch_pipeline.core.models import GoldAnswer
from livesearch_pipeline.core.pool import visibility_band
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.evaluation.judge import LLMJudge
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    CNY2,
    DAY,
    SEMANTIC,
    ScriptedCompleter,
    case,
    json_lines,
    qid,
    standard_cases,
    write_day,
    write_gold,
    write_jsonl,
    write_predictions,
    write_served,
)

ALL_RIGHT = {qid(1): "1,234.56 CNY", qid(2): "1.23%", qid(3): "Kunlun Brewing", qid(4): "42"}


def _judge(*replies: str, model: str = "anthropic/claude-3-5-haiku") -> tuple[LLMJudge, ScriptedCompleter]:
    completer = ScriptedCompleter(*replies)
    return LLMJudge(model, completer=completer), completer


def test_qid_set_hash_is_order_free_and_documented() -> None:
    qids = [qid(2), qid(1), qid(1)]
    expected = hashlib.sha256(f"{qid(1)}\n{qid(2)}".encode()).hexdigest()
    assert qid_set_hash(qids) == expected == qid_set_hash(reversed(qids))
    assert qid_set_hash([qid(1)]) != expected


@pytest.mark.parametrize("level,band", [(0, "low"), (3, "low"), (4, "mid"), (6, "mid"), (7, "high"), (10, "high")])
def test_visibility_bands(level: int, band: str) -> None:
    assert visibility_band(level) == band


def test_all_correct_run_scores_one_with_breakdowns(tmp_path: Path) -> None:
    result = evaluate(*write_day(tmp_path, standard_cases(), ALL_RIGHT))
    s = result.summary
    assert [v.qid for v in result.verdicts] == sorted(ALL_RIGHT)
    assert all(v.correct and v.judge == "deterministic" for v in result.verdicts)
    assert (s.accuracy, s.correct, s.n_served, s.llm_verdicts, s.judge_errors) == (1.0, 4, 4, 0, 0)
    assert s.gold_date == DAY and (s.n_scored, s.n_withdrawn) == (4, 0)
    assert s.qid_set_hash == qid_set_hash(ALL_RIGHT)
    assert (s.agent, s.model) == ("test-agent", "openai/gpt-4o-mini")
    assert set(s.by_tier) == {"T1", "T2", "T3"} and s.by_tier["T2"].n == 2
    assert s.by_visibility_band["low"].n == 2 and s.by_visibility_band["high"].n == 1
    assert s.by_language == {"en": s.by_language["en"], "zh": s.by_language["zh"]}
    assert s.by_language["zh"].n == 1
    assert s.by_refresh_class["static"].correct == 1
    assert s.by_tier_and_visibility["T2"]["0"].n == 1
    assert not s.flagged and s.warnings == []


def test_missing_empty_and_errored_predictions_score_zero_over_the_served_set(tmp_path: Path) -> None:
    answers = {qid(1): "1234.56", qid(2): None, qid(3): "  "}
    result = evaluate(*write_day(tmp_path, standard_cases(), answers, errors={qid(2): "timeout after 120 s"}))
    by_qid = {v.qid: v for v in result.verdicts}
    s = result.summary
    assert s.n_served == 4 and s.correct == 1 and s.accuracy == 0.25
    assert (s.n_missing, s.n_empty, s.n_agent_errors) == (1, 2, 1)
    assert by_qid[qid(4)].reason == "no prediction"
    assert "timeout after 120 s" in by_qid[qid(2)].reason
    assert by_qid[qid(3)].correct is False


def test_wrong_and_sign_mismatched_answers_fail(tmp_path: Path) -> None:
    answers = {**ALL_RIGHT, qid(1): "-1,234.56 CNY", qid(2): "1.30%"}
    result = evaluate(*write_day(tmp_path, standard_cases(), answers))
    by_qid = {v.qid: v for v in result.verdicts}
    assert by_qid[qid(1)].correct is False and "sign mismatch" in by_qid[qid(1)].reason
    assert by_qid[qid(2)].correct is False
    assert result.summary.accuracy == 0.5


def test_semantic_without_judge_is_deterministic_and_reported(tmp_path: Path) -> None:
    result = evaluate(*write_day(tmp_path, standard_cases(), {**ALL_RIGHT, qid(3): "KB Brewing"}))
    verdict = {v.qid: v for v in result.verdicts}[qid(3)]
    assert verdict.correct is False and verdict.judge == "deterministic"
    assert result.summary.unresolved_without_judge == 1
    assert any("no LLM judge" in w or "none was configured" in w for w in result.summary.warnings)


def test_semantic_judge_decides_only_undecided_answers(tmp_path: Path) -> None:
    judge, completer = _judge('{"correct": true, "reason": "KB Brewing is the short name"}')
    result = evaluate(*write_day(tmp_path, standard_cases(), {**ALL_RIGHT, qid(3): "KB Brewing"}), judge=judge)
    verdict = {v.qid: v for v in result.verdicts}[qid(3)]
    assert verdict.correct is True and verdict.judge == "llm:anthropic/claude-3-5-haiku"
    assert len(completer.calls) == 1
    prompt = completer.calls[0][1]["content"]
    assert "Kunlun Brewing Co., Ltd." in prompt and "KB Brewing" in prompt
    s = result.summary
    assert (s.llm_verdicts, s.llm_semantic, s.llm_extraction, s.judge_llm_calls, s.accuracy) == (1, 1, 0, 1, 1.0)


AMBIGUOUS = (
    "On the last day it traded at 1,230.10 CNY while the average was 1,234.56 CNY "
    "and the high was 1,250.00 CNY."
)


def test_ambiguous_long_answer_is_extracted_by_the_judge_then_matched_deterministically(tmp_path: Path) -> None:
    judge, completer = _judge('{"final_answer": "1,234.56 CNY", "reason": "the average is asked"}')
    result = evaluate(*write_day(tmp_path, standard_cases(), {**ALL_RIGHT, qid(1): AMBIGUOUS}), judge=judge)
    verdict = {v.qid: v for v in result.verdicts}[qid(1)]
    assert verdict.correct is True and verdict.judge.startswith("llm:")
    assert "1234.56" in verdict.reason or "1,234.56" in verdict.reason
    assert "1234.56" not in completer.calls[0][0]["content"]  # the gold is never shown for extraction
    assert result.summary.llm_extraction == 1


def test_extracted_value_must_be_stated_in_the_answer(tmp_path: Path) -> None:
    judge, _ = _judge('{"final_answer": "1,234.57", "reason": "invented"}')
    result = evaluate(*write_day(tmp_path, standard_cases(), {**ALL_RIGHT, qid(1): AMBIGUOUS}), judge=judge)
    verdict = {v.qid: v for v in result.verdicts}[qid(1)]
    assert verdict.correct is None and "does not state" in (verdict.error or "")
    s = result.summary
    assert s.judge_errors == 1 and s.flagged and s.accuracy == 0.75 and s.accuracy_decided == 1.0
    assert s.incorrect == 0


def test_unparseable_judge_output_is_a_judge_error_not_a_number(tmp_path: Path) -> None:
    judge, completer = _judge("I think it is correct", '{"correct": "yes", "reason": "x"}')
    result = evaluate(*write_day(tmp_path, standard_cases(), {**ALL_RIGHT, qid(3): "KB Brewing"}), judge=judge)
    verdict = {v.qid: v for v in result.verdicts}[qid(3)]
    assert verdict.correct is None and "unparseable" in (verdict.error or "")
    assert len(completer.calls) == 2
    assert result.summary.judge_errors == 1 and result.summary.flagged


def test_judge_of_the_agents_family_is_refused(tmp_path: Path) -> None:
    judge, _ = _judge(model="openai/gpt-4.1")
    with pytest.raises(EvaluationError, match="family 'openai'"):
        evaluate(*write_day(tmp_path, standard_cases(), ALL_RIGHT), judge=judge)


# --------------------------------------------------------------------------- fail-loud rules


def test_gold_missing_served_qids_names_first_few_and_count(tmp_path: Path) -> None:
    cases = [case(n, 1.0 + n, f"{1.0 + n:.2f}", CNY2, unit="CNY") for n in range(1, 9)]
    served = write_served(tmp_path, cases)
    gold = write_gold(tmp_path, [c.gold for c in cases[:1]])
    predictions = write_predictions(tmp_path, {})
    with pytest.raises(EvaluationError) as info:
        evaluate(served, gold, predictions)
    message = str(info.value)
    assert "misses served 7 qid(s)" in message and qid(2) in message and "and 2 more" in message
    assert str(gold) in message


def test_gold_with_unserved_qid_fails(tmp_path: Path) -> None:
    cases = standard_cases()
    served = write_served(tmp_path, cases[:3])
    gold = write_gold(tmp_path, [c.gold for c in cases])
    with pytest.raises(EvaluationError, match=f"holds 1 qid\\(s\\): {qid(4)} that were not served"):
        evaluate(served, gold, write_predictions(tmp_path, {}))


@pytest.mark.parametrize("status", ["empty", "error"])
def test_unusable_answer_the_manifest_does_not_withdraw_fails(tmp_path: Path, status: str) -> None:
    cases = standard_cases()
    broken = GoldAnswer(qid=qid(4), date=DAY, status=status, match=cases[3].gold.match,
                        error="c1 daily: boom" if status == "error" else None)
    served = write_served(tmp_path, cases)
    gold = write_gold(tmp_path, [c.gold for c in cases[:3]] + [broken])
    manifest_path = gold.with_name(gold.name.replace(".jsonl", ".manifest.json"))
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["withdrawn"] = {}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(EvaluationError, match=f"not withdrawn: \\['{qid(4)}'\\]"):
        evaluate(served, gold, write_predictions(tmp_path, {}))


@pytest.mark.parametrize("status", ["empty", "error"])
def test_withdrawn_answer_is_left_out_of_the_scoring_set(tmp_path: Path, status: str) -> None:
    cases = standard_cases()
    broken = GoldAnswer(qid=qid(4), date=DAY, status=status, match=cases[3].gold.match,
                        error="c1 daily: boom" if status == "error" else None)
    served = write_served(tmp_path, cases)
    gold = write_gold(tmp_path, [c.gold for c in cases[:3]] + [broken])
    result = evaluate(served, gold, write_predictions(tmp_path, ALL_RIGHT))
    s = result.summary
    assert [v.qid for v in result.verdicts] == [qid(1), qid(2), qid(3)]
    assert (s.n_served, s.n_withdrawn, s.n_scored, s.n_ignored_withdrawn, s.correct) == (4, 1, 3, 1, 3)
    assert s.qid_set_hash == qid_set_hash([qid(1), qid(2), qid(3)]) != s.served_qid_set_hash


def test_gold_bytes_differing_from_manifest_fail(tmp_path: Path) -> None:
    served, gold, predictions = write_day(tmp_path, standard_cases(), ALL_RIGHT)
    gold.write_bytes(gold.read_bytes().replace(b"1234.56", b"1234.57"))
    with pytest.raises(EvaluationError, match="modified or truncated"):
        evaluate(served, gold, predictions)


def test_gold_without_manifest_is_refused(tmp_path: Path) -> None:
    cases = standard_cases()
    served = write_served(tmp_path, cases)
    gold = write_gold(tmp_path, [c.gold for c in cases], manifest=False)
    with pytest.raises(EvaluationError, match="has no manifest .*cannot be trusted"):
        evaluate(served, gold, write_predictions(tmp_path, ALL_RIGHT))


def test_gold_of_another_date_is_refused(tmp_path: Path) -> None:
    cases = standard_cases()
    served = write_served(tmp_path, cases)
    other_day = dt.date(2026, 3, 2)
    gold = write_gold(tmp_path, [c.gold.model_copy(update={"date": other_day}) for c in cases], other_day)
    with pytest.raises(EvaluationError, match="only scored against its own gold"):
        evaluate(served, gold, write_predictions(tmp_path, ALL_RIGHT))


def test_predictions_with_unknown_qid_fail(tmp_path: Path) -> None:
    served, gold, _ = write_day(tmp_path, standard_cases(), ALL_RIGHT)
    predictions = write_predictions(tmp_path, {**ALL_RIGHT, qid(99): "1"}, name="other")
    with pytest.raises(EvaluationError, match=f"unknown .*{qid(99)}"):
        evaluate(served, gold, predictions)


def test_predictions_with_duplicate_qid_fail(tmp_path: Path) -> None:
    served, gold, predictions = write_day(tmp_path, standard_cases(), ALL_RIGHT)
    lines = predictions.read_text(encoding="utf-8").splitlines()
    write_jsonl(predictions, [*lines, lines[0]])
    with pytest.raises(EvaluationError, match=f"repeat 1 qid\\(s\\): {qid(1)}"):
        evaluate(served, gold, predictions)


def test_malformed_prediction_lines_are_reported_with_file_and_line_numbers(tmp_path: Path) -> None:
    served, gold, predictions = write_day(tmp_path, standard_cases(), ALL_RIGHT)
    lines = predictions.read_text(encoding="utf-8").splitlines()
    write_jsonl(predictions, [lines[0], "{not json", lines[1], '{"qid": "ls-1", "answer": "x"}', '{"qid": "%s", "extra": 1}' % qid(3)])
    with pytest.raises(EvaluationError) as info:
        evaluate(served, gold, predictions)
    message = str(info.value)
    assert str(predictions) in message and "3 malformed prediction line(s)" in message
    assert "line 2" in message and "line 4" in message and "line 5" in message


def test_run_metadata_of_another_question_set_fails(tmp_path: Path) -> None:
    cases = standard_cases()
    served = write_served(tmp_path, cases)
    gold = write_gold(tmp_path, [c.gold for c in cases])
    predictions = write_predictions(tmp_path, ALL_RIGHT, served_qids=[qid(1)])
    with pytest.raises(EvaluationError, match="another question set"):
        evaluate(served, gold, predictions)


def test_missing_predictions_file_fails(tmp_path: Path) -> None:
    served, gold, _ = write_day(tmp_path, standard_cases(), ALL_RIGHT)
    with pytest.raises(EvaluationError, match="does not exist"):
        evaluate(served, gold, tmp_path / "nope.jsonl")


def test_write_evaluation_is_deterministic(tmp_path: Path) -> None:
    files = write_day(tmp_path, standard_cases(), {**ALL_RIGHT, qid(2): "2%"})
    first = write_evaluation(evaluate(*files), tmp_path / "out1")
    second = write_evaluation(evaluate(*files), tmp_path / "out2")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    verdicts = json_lines(first[0])
    assert [v["qid"] for v in verdicts] == sorted(ALL_RIGHT)
    assert set(verdicts[0]) == {"qid", "correct", "rule", "judge", "reason", "error"}
    assert json.loads(first[1].read_text())["accuracy"] == 0.75


def test_semantic_rule_on_text_gold_is_passed_to_judge_in_chinese(tmp_path: Path) -> None:
    cases = [case(1, "昆仑酿酒股份有限公司", "昆仑酿酒股份有限公司", SEMANTIC, zh=True)]
    judge, completer = _judge('{"correct": false, "reason": "不同公司"}')
    result = evaluate(*write_day(tmp_path, cases, {qid(1): "天山酿酒"}), judge=judge)
    assert result.verdicts[0].correct is False
    system, user = completer.calls[0]
    assert "严格评分员" in system["content"] and "关于最近一个交易日的问题1" in user["content"]


def test_a_line_with_two_objects_is_malformed(tmp_path: Path) -> None:
    served, gold, predictions = write_day(tmp_path, standard_cases(), ALL_RIGHT)
    lines = predictions.read_text(encoding="utf-8").splitlines()
    write_jsonl(predictions, [lines[0] + "," + lines[1], *lines[2:]])
    with pytest.raises(EvaluationError, match="line 1"):
        evaluate(served, gold, predictions)


def test_the_same_inputs_scored_again_give_the_first_result_and_any_changed_byte_scores_anew(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import livesearch_pipeline.evaluation.evaluator as evaluator

    scored: list[str] = []
    real = evaluator.score_deterministic

    def counting(gold, prediction):
        scored.append(gold.qid)
        return real(gold, prediction)

    monkeypatch.setattr(evaluator, "score_deterministic", counting)
    served, gold, predictions = write_day(tmp_path, standard_cases(), ALL_RIGHT)
    first = evaluate(served, gold, predictions)
    assert len(scored) == 4
    again = evaluate(served, gold, predictions)  # the leaderboard re-deriving the run's verdicts
    assert len(scored) == 4 and again.verdicts == first.verdicts and again.summary == first.summary
    # One byte more in the predictions (or any other input) and they are scored again.
    predictions.write_bytes(predictions.read_bytes().replace(b"1,234.56 CNY", b"1,234.57 CNY"))
    changed = evaluate(served, gold, predictions)
    assert len(scored) == 8 and changed.summary.correct == 3
    meta = predictions.with_name("predictions.meta.json")
    meta.write_bytes(meta.read_bytes() + b" ")  # the same metadata, other bytes
    evaluate(served, gold, predictions)
    assert len(scored) == 12
    # With a judge nothing is reused (its verdicts are its own).
    judge, _ = _judge()
    evaluate(served, gold, predictions, judge=judge)
    assert len(scored) == 16
