"""The LLM verbalizer through litellm: canned mock replies and a scripted local HTTP server."""

from __future__ import annotations

import json
import os
import time

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import anyio

from livesearch_pipeline.construction.pipeline import verbalize_candidates
from livesearch_pipeline.construction.verbalize import LLMVerbalizerConfig, finalize, llm_verbalize
from livesearch_pipeline_tests.construction.builders import candidate
from livesearch_pipeline_tests.evaluation.llm_fakes import scripted_chat_server

MODEL = "openai/verbalizer-test"
GOOD = {
    "keep": True, "reason": "answerable from exchange data",
    "question": "What was the closing price of Kweichow Moutai (600519.SH) on the most recent trading day, "
                "in CNY to 2 decimals?",
    "question_zh": "贵州茅台（600519.SH）最近一个交易日的收盘价是多少元？保留2位小数。",
    "match": {"rule": "approx", "abs_tol": 0.005, "rel_tol": None, "unit": "CNY", "decimals": 2},
}


def _run(config: LLMVerbalizerConfig, n: int = 1):
    return anyio.run(lambda: llm_verbalize([candidate()] if n == 1 else
                                           [candidate(f"60000{i}.SH") for i in range(n)], config))


def _mock(reply: str):
    return _run(LLMVerbalizerConfig(model=MODEL, mock_response=reply))


# --------------------------------------------------------------------------- litellm mock_response


def test_mock_kept_reply_becomes_a_question_after_finalize():
    kept, rejects = _mock(json.dumps(GOOD))
    assert rejects == []
    (v,) = kept
    assert v.verbalizer == f"litellm:{MODEL}" and v.question == GOOD["question"]
    questions, gate = finalize(kept)
    assert gate == [] and questions[0].question_zh == GOOD["question_zh"]


def test_mock_reply_in_code_fences_is_accepted():
    kept, rejects = _mock("```json\n" + json.dumps(GOOD) + "\n```")
    assert rejects == [] and len(kept) == 1


def test_mock_malformed_json_is_a_malformed_reject():
    kept, rejects = _mock('{"keep": true, "question": ')
    assert kept == []
    (r,) = rejects
    assert r.stage == "malformed" and r.qid == candidate().qid


def test_mock_kept_without_a_rule_is_malformed():
    kept, rejects = _mock(json.dumps({**GOOD, "match": None}))
    assert kept == [] and [r.stage for r in rejects] == ["malformed"]


def test_mock_refusal_is_an_llm_reject_with_its_reason():
    kept, rejects = _mock(json.dumps({"keep": False, "reason": "not findable in public sources"}))
    assert kept == []
    (r,) = rejects
    assert (r.stage, r.reason) == ("llm_reject", "not findable in public sources")


def test_mock_absolute_date_is_rejected_by_the_date_gate_after_finalize():
    dated = {**GOOD, "question": "What was the closing price of Kweichow Moutai (600519.SH) on 27 Oct 2026?"}
    kept, rejects = _mock(json.dumps(dated))
    assert rejects == [] and len(kept) == 1
    questions, gate = finalize(kept)
    assert questions == [] and [r.stage for r in gate] == ["date_gate"]


# --------------------------------------------------------------------------- a scripted local server


def _served(*replies, n: int = 1):
    with scripted_chat_server(*replies) as server:
        config = LLMVerbalizerConfig(model=MODEL, api_base=server.api_base, api_key="sk-test", concurrency=1)
        kept, rejects = _run(config, n)
        return kept, rejects, server.requests


def test_server_reply_is_kept_and_the_request_carries_the_candidate():
    kept, rejects, requests = _served(json.dumps(GOOD))
    assert rejects == [] and len(kept) == 1
    (request,) = requests
    assert request["response_format"] == {"type": "json_object"}
    user = json.loads(request["messages"][-1]["content"])
    assert user["instrument"]["code"] == "600519.SH" and user["anchor"] == "latest"


def test_server_malformed_refusal_and_dated_text_each_land_in_their_stage():
    dated = {**GOOD, "question": "What was the close of 600519.SH in Q3 2026?"}
    replies = ["not json at all", json.dumps({"keep": False, "reason": "ambiguous"}), json.dumps(dated)]
    kept, rejects, requests = _served(*replies, n=3)
    assert len(requests) == 3
    assert sorted(r.stage for r in rejects) == ["llm_reject", "malformed"]
    assert len(kept) == 1
    questions, gate = finalize(kept)
    assert questions == [] and [r.stage for r in gate] == ["date_gate"]


def test_server_rate_limit_then_success_is_kept():
    started = time.perf_counter()
    kept, rejects, requests = _served(429, json.dumps(GOOD))
    assert rejects == [] and len(kept) == 1
    assert len(requests) == 2, "the 429 must be retried once"
    assert time.perf_counter() - started < 10


def test_server_persistent_error_is_an_llm_error_reject():
    kept, rejects, _ = _served(400)
    assert kept == [] and [r.stage for r in rejects] == ["llm_error"]


def test_rerun_with_a_disk_cache_costs_no_llm_calls(tmp_path):
    candidates = [candidate(f"60000{i}.SH") for i in range(3)]
    replies = [json.dumps({**GOOD, "question": GOOD["question"].replace("600519.SH", c.entity)}) for c in candidates]
    with scripted_chat_server(*replies) as server:
        config = LLMVerbalizerConfig(model=MODEL, api_base=server.api_base, api_key="sk-test",
                                     cache_dir=tmp_path / "llm", concurrency=1)
        first = anyio.run(llm_verbalize, candidates, config)
        assert len(server.requests) == 3
        second = anyio.run(llm_verbalize, candidates, config)
        assert len(server.requests) == 3, "a rerun must be served from the disk cache"
    assert [v.question for v in first[0]] == [v.question for v in second[0]]
    assert first[1] == second[1] == []


def test_dated_text_from_the_server_lands_in_the_rejects_table_with_its_span():
    dated = {**GOOD, "question_zh": "2026年10月27日，贵州茅台（600519.SH）的收盘价是多少？"}
    with scripted_chat_server(json.dumps(dated)) as server:
        config = LLMVerbalizerConfig(model=MODEL, api_base=server.api_base, api_key="sk-test", concurrency=1)
        questions, rejects = anyio.run(verbalize_candidates, [candidate()], config)
    assert questions == []
    (row,) = rejects
    assert row.stage == "date_gate" and "2026" in row.reason
    assert row.question_zh == dated["question_zh"] and row.proposed_match is not None
