"""Issue 30, cases 3 and 15: one source of truth for a score. The leaderboard ranks what each run's
predictions score again against the configured gold (judge verdicts only from the LLM cache),
never a verdicts file alone; it ranks one day, the newest, and the oracle like any run."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.judge import LLMJudge
from livesearch_pipeline.evaluation.leaderboard import LeaderboardError, build_leaderboard
from livesearch_pipeline.evaluation.outputs import SUMMARY_FILE, VERDICTS_FILE, write_evaluation
from livesearch_pipeline.infra.llm import LLMResponse, ResponseCache, build_request, request_key
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    DAY,
    qid,
    standard_cases,
    write_gold,
    write_predictions,
    write_served,
)

RIGHT = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing Co., Ltd.", qid(4): "42"}
HALF = {qid(1): "1234.56", qid(2): "9.99%"}


def _day(root: Path, date: dt.date = DAY) -> tuple[Path, Path]:
    cases = standard_cases(date)
    return write_served(root, cases, date), write_gold(root, [c.gold for c in cases], date)


def _run(root: Path, name: str, answers: dict[str, str], *, date: dt.date = DAY, model: str | None = "openai/x",
         judge: LLMJudge | None = None) -> Path:
    served, gold = root / "served" / f"served_questions_{date}.jsonl", root / "gold" / f"gold_answers_{date}.jsonl"
    qids = [json.loads(line)["qid"] for line in served.read_text().splitlines()]
    predictions = write_predictions(root / "runs" / date.isoformat(), answers, served_qids=qids, agent=name,
                                    model=model, date=date, name=name)
    write_evaluation(evaluate(served, gold, predictions, judge=judge), predictions.parent)
    return predictions.parent


def _forge_all_correct(run: Path) -> None:
    """The red team's edit: every verdict correct, the summary's hash and counts updated to match."""
    lines = [json.loads(line) for line in (run / VERDICTS_FILE).read_text().splitlines()]
    forged = "".join(json.dumps({**v, "correct": True, "reason": "forged"}, sort_keys=True) + "\n" for v in lines)
    (run / VERDICTS_FILE).write_text(forged, encoding="utf-8")
    summary = json.loads((run / SUMMARY_FILE).read_text())
    summary.update(verdicts_sha256=hashlib.sha256(forged.encode()).hexdigest(), correct=len(lines),
                   accuracy=1.0, judge_errors=0, flagged=False)
    (run / SUMMARY_FILE).write_text(json.dumps(summary), encoding="utf-8")


def test_case3_forged_verdicts_never_rank(tmp_path: Path, monkeypatch, capsys) -> None:
    _day(tmp_path)
    oracle = _run(tmp_path, "oracle", RIGHT, model=None)
    web = _run(tmp_path, "web", HALF)
    _forge_all_correct(web)
    board = build_leaderboard([oracle, web], gold_dir=tmp_path / "gold", served_dir=tmp_path / "served",
                              llm_cache=tmp_path / "cache")
    assert [r.agent for r in board.rows] == ["oracle"]
    [unranked] = board.unranked
    assert unranked.agent == "web"
    assert "its verdicts are not what its predictions score against the gold: 3 differ" in unranked.reason
    # The README's command, with the data root configured, says the same.
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path))
    assert main(["leaderboard", "--runs", str(oracle), str(web), "--out", str(tmp_path / "board")]) == 0
    out = capsys.readouterr().out
    assert "| 1 | oracle |" in out and "| 1 | web |" not in out and "| 2 | web |" not in out


def _caching_judge_completer(messages, *, model: str, cache_dir, api_base=None, cache_context=None,
                             **_: object) -> LLMResponse:
    """A judge reply recorded in the LLM cache as `complete` records it (same request key)."""
    request = build_request(messages, model=model, tools=None, response_format=None, api_base=api_base,
                            max_tokens=None, cache_context=cache_context)
    key = request_key(request)
    payload = {"content": json.dumps({"correct": True, "reason": "same company"}), "tool_calls": [],
               "finish_reason": "stop", "model": model, "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    ResponseCache(Path(cache_dir)).put(key, request, payload)
    return LLMResponse.from_payload(payload, cached=False, cache_key=key)


def test_a_judge_verdict_is_reused_only_from_the_cache(tmp_path: Path) -> None:
    _day(tmp_path)
    cache = tmp_path / "cache"
    judge = LLMJudge("anthropic/claude-judge", cache_dir=cache, completer=_caching_judge_completer)
    judged = _run(tmp_path, "web", {**RIGHT, qid(3): "the Kunlun brewery"}, judge=judge)  # a semantic verdict
    assert json.loads((judged / SUMMARY_FILE).read_text())["correct"] == 4
    options = dict(gold_dir=tmp_path / "gold", served_dir=tmp_path / "served", judge_api_base="")
    board = build_leaderboard([judged], llm_cache=cache, **options)
    assert [(r.agent, r.correct) for r in board.rows] == [("web", 4)]
    # Without the cached judgement, the judge's verdict cannot be re-derived: not ranked.
    with pytest.raises(LeaderboardError, match="no complete evaluation run"):
        build_leaderboard([judged], llm_cache=tmp_path / "empty-cache", **options)


def test_case15_the_newest_day_alone_is_ranked_and_mixed_days_are_refused(tmp_path: Path) -> None:
    older, newer = DAY - dt.timedelta(days=1), DAY
    _day(tmp_path, older)
    _day(tmp_path, newer)
    # An older day's group (two runs) copied into the newest day's folder beside the oracle.
    stale_group = [_run(tmp_path, name, HALF, date=older) for name in ("web", "plugin")]
    oracle = _run(tmp_path, "oracle", RIGHT, date=newer, model=None)
    options = dict(gold_dir=tmp_path / "gold", served_dir=tmp_path / "served", llm_cache=tmp_path / "cache")
    with pytest.raises(LeaderboardError, match=rf"scored against the gold of 2 days: {older} .*{newer} .*fix: pass "
                                               rf"--date {newer} \(the newest\)"):
        build_leaderboard([*stale_group, oracle], **options)
    board = build_leaderboard([*stale_group, oracle], date=newer.isoformat(), **options)
    assert board.gold_date == newer.isoformat()
    assert [(r.rank, r.agent, r.accuracy) for r in board.rows] == [(1, "oracle", 1.0)]
    assert {u.agent for u in board.unranked} == {"web", "plugin"}
    # One day's runs alone: ranked without --date, the oracle among them.
    board = build_leaderboard([oracle, _run(tmp_path, "web-new", HALF, date=newer)], **options)
    assert [r.agent for r in board.rows] == ["oracle", "web-new"]


def _plant(cache: Path, request: dict, payload: dict, key: str | None = None) -> Path:
    """An entry written straight into the cache folder, as the red team did (not through `complete`)."""
    key = key or request_key(request)
    path = ResponseCache(cache).path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "key": key, "request": request, "response": payload}), encoding="utf-8")
    return path


def test_planted_judge_entries_do_not_make_a_no_idea_answer_correct(tmp_path: Path) -> None:
    """Issue 38, finding 6 (a): one planted 'correct' judgement per candidate name (read from public
    data), keyed as the judge's request once was (question, reference, answer: no gold), made a
    "no idea" answer correct in the cache-only re-score, and the forged run ranked."""
    from livesearch_pipeline.evaluation.prompts import semantic_messages

    _day(tmp_path)
    cache = tmp_path / "cache"
    honest = LLMJudge("anthropic/claude-judge", completer=lambda *a, **k: LLMResponse(
        content=json.dumps({"correct": False, "reason": "no answer"}), tool_calls=(), finish_reason="stop",
        model="anthropic/claude-judge", prompt_tokens=1, completion_tokens=1, cached=False, cache_key="x"))
    run = _run(tmp_path, "web", {**RIGHT, qid(3): "no idea"}, judge=honest)
    _forge_all_correct(run)
    question = "Question 3 about the most recent trading day?"
    ok = {"content": json.dumps({"correct": True, "reason": "same"}), "tool_calls": [], "finish_reason": "stop",
          "model": "anthropic/claude-judge", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    for name in ("Kunlun Brewing Co., Ltd.", "Other Brewing Co., Ltd.", "Third Holdings Ltd."):
        request = build_request(semantic_messages(question, name, "no idea", "en"), model="anthropic/claude-judge",
                                tools=None, response_format=None, api_base=None, max_tokens=None)
        _plant(cache, request, ok)
    with pytest.raises(LeaderboardError, match="its verdicts are not what its predictions score against the gold"):
        build_leaderboard([run], gold_dir=tmp_path / "gold", served_dir=tmp_path / "served", llm_cache=cache,
                          judge_api_base="")


def test_a_cache_entry_is_used_only_for_the_request_it_holds(tmp_path: Path) -> None:
    """An entry copied under another request's key (or planted with a request that does not hash to its
    name) is never an answer: the cache names it instead."""
    from livesearch_pipeline.infra.llm import LLMError, complete

    cache = tmp_path / "cache"
    asked = build_request([{"role": "user", "content": "is 1 equal to 2?"}], model="m", tools=None,
                          response_format=None, api_base=None, max_tokens=None)
    other = build_request([{"role": "user", "content": "is 1 equal to 1?"}], model="m", tools=None,
                          response_format=None, api_base=None, max_tokens=None)
    yes = {"content": "yes", "tool_calls": [], "finish_reason": "stop", "model": "m", "usage": {}}
    _plant(cache, other, yes, key=request_key(asked))  # another request's answer under this request's name
    with pytest.raises(LLMError, match="does not hold the request it is filed under"):
        ResponseCache(cache).get(request_key(asked), asked)
    with pytest.raises(LLMError, match="does not hold the request it is filed under"):
        complete(asked["messages"], model="m", cache_dir=cache)
    _plant(cache, asked, yes)
    assert ResponseCache(cache).get(request_key(asked), asked) == yes
