from __future__ import annotations

from pathlib import Path

import pytest

from livesearch_pipeline.evaluation.judge import (
    ExtractionReply,
    JudgeIndependenceError,
    LLMJudge,
    SemanticReply,
    ensure_judge_independent,
    model_family,
    parse_reply,
)
from livesearch_pipeline.infra.llm import RetryPolicy
from livesearch_pipeline.evaluation.prompts import detect_language, extraction_messages, semantic_messages
from livesearch_pipeline_tests.evaluation.llm_fakes import scripted_chat_server

FAST = RetryPolicy(attempts=2, base_delay_s=0.0, max_delay_s=0.0)
VALID = '{"correct": true, "reason": "same company"}'


@pytest.mark.parametrize(
    "model,family",
    [
        ("openai/gpt-4o-mini", "openai"),
        ("gpt-4.1", "openai"),
        ("o3-mini", "openai"),
        ("azure/o4-mini", "openai"),
        ("anthropic/claude-3-5-sonnet-20241022", "anthropic"),
        ("openrouter/anthropic/claude-sonnet-4", "anthropic"),
        ("gemini/gemini-2.5-pro", "google"),
        ("openai/qwen2.5-72b-instruct", "qwen"),
        ("dashscope/qwq-32b", "qwen"),
        ("deepseek/deepseek-chat", "deepseek"),
        ("together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", "meta-llama"),
        ("mistral/mistral-large-latest", "mistral"),
        ("zai/glm-4.5", "zhipu"),
        ("moonshot/kimi-k2", "moonshot"),
        ("xai/grok-4", "xai"),
        ("openai/scripted", "unknown:scripted"),
    ],
)
def test_model_family(model: str, family: str) -> None:
    assert model_family(model) == family


def test_model_family_rejects_empty_names() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        model_family("  ")


def test_judge_from_an_agents_family_is_refused() -> None:
    ensure_judge_independent("anthropic/claude-3-5-haiku", {"web": "openai/gpt-4o", "oracle": None})
    with pytest.raises(JudgeIndependenceError, match=r"web \(openai/gpt-4o\)"):
        ensure_judge_independent("azure/gpt-4.1", {"web": "openai/gpt-4o", "oracle": None})


@pytest.mark.parametrize(
    "content,ok",
    [
        (VALID, True),
        ("```json\n" + VALID + "\n```", True),
        ("  " + VALID + "\n", True),
        ('{"correct": "true", "reason": "x"}', False),  # strict: a string is not a bool
        ('{"correct": true}', False),
        ('{"correct": true, "reason": "x", "score": 0.9}', False),
        ("Correct. " + VALID, False),
        ("", False),
        (None, False),
    ],
)
def test_parse_reply_is_strict(content: str | None, ok: bool) -> None:
    reply, problem = parse_reply(content, SemanticReply)
    assert (reply is not None) == ok
    assert bool(problem) != ok


def test_extraction_reply_allows_null() -> None:
    reply, _ = parse_reply('{"final_answer": null, "reason": "hedges"}', ExtractionReply)
    assert reply is not None and reply.final_answer is None


def test_prompts_exist_in_both_languages() -> None:
    assert detect_language("收盘价为1234.56元") == "zh" and detect_language("close 1234.56") == "en"
    en = semantic_messages("Q?", "Ref", "Cand", "en")
    zh = extraction_messages("问题？", "回答", "亿元", "zh")
    assert "JSON" in en[0]["content"] and "Ref" in en[1]["content"]
    assert "只回复一个 JSON 对象" in zh[0]["content"] and "亿元" in zh[1]["content"]


def test_litellm_mock_valid_verdict() -> None:
    judge = LLMJudge("anthropic/claude-3-5-haiku", mock_response=VALID)
    judgement = judge.judge_semantic("Which company?", "Kunlun Brewing Co., Ltd.", "KB Brewing")
    assert (judgement.correct, judgement.reason, judgement.error) == (True, "same company", None)
    assert judge.stats.llm_calls == 1 and judge.label == "llm:anthropic/claude-3-5-haiku"


def test_litellm_mock_unparseable_twice_is_a_judge_error() -> None:
    judge = LLMJudge("anthropic/claude-3-5-haiku", mock_response="Yes, that looks right to me.")
    judgement = judge.judge_semantic("Which company?", "Kunlun Brewing", "KB Brewing")
    assert judgement.correct is None and "unparseable" in (judgement.error or "")
    assert (judge.stats.llm_calls, judge.stats.reasks, judge.stats.errors) == (2, 1, 1)


def test_fake_server_unparseable_then_valid_is_reasked_once(tmp_path: Path) -> None:
    with scripted_chat_server("Correct!", VALID) as server:
        judge = LLMJudge("openai/judge-model", api_base=server.api_base, api_key="k", retry=FAST, cache_dir=tmp_path)
        judgement = judge.judge_semantic("Which company?", "Kunlun Brewing", "KB Brewing")
    assert judgement.correct is True
    assert len(server.requests) == 2
    reask = server.requests[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "Correct!"}
    assert "could not be used" in reask[-1]["content"]
    assert all(r["temperature"] == 0 for r in server.requests)


def test_fake_server_unparseable_twice_is_an_error() -> None:
    with scripted_chat_server("maybe", '{"correct": 1, "reason": "x"}') as server:
        judge = LLMJudge("openai/judge-model", api_base=server.api_base, api_key="k", retry=FAST)
        judgement = judge.judge_semantic("Which company?", "Kunlun Brewing", "KB Brewing")
    assert judgement.correct is None and "after one re-ask" in (judgement.error or "")
    assert len(server.requests) == 2


def test_failed_calls_become_judge_errors() -> None:
    with scripted_chat_server(500, 500) as server:
        judge = LLMJudge("openai/judge-model", api_base=server.api_base, api_key="k", retry=FAST)
        extraction = judge.extract_final_answer("Close?", "1.0 or 2.0", unit="CNY")
    assert extraction.final_answer is None and "judge call failed" in (extraction.error or "")
    assert judge.stats.errors == 1


def test_judgements_are_cached_on_disk(tmp_path: Path) -> None:
    with scripted_chat_server('{"final_answer": "2.0 CNY", "reason": "concluding value"}') as server:
        options = dict(api_base=server.api_base, api_key="k", retry=FAST, cache_dir=tmp_path)
        first = LLMJudge("openai/judge-model", **options).extract_final_answer("Close?", "1.0, so 2.0 CNY", unit="CNY")
        again_judge = LLMJudge("openai/judge-model", **options)
        again = again_judge.extract_final_answer("Close?", "1.0, so 2.0 CNY", unit="CNY")
    assert first.final_answer == again.final_answer == "2.0 CNY"
    assert len(server.requests) == 1
    assert (again_judge.stats.cache_hits, again_judge.stats.llm_calls) == (1, 0)
