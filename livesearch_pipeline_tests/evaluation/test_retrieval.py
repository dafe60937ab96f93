"""Retrieval metrics: evidence recall from the pages a run opened, the ceiling per band."""

from __future__ import annotations

import json
from pathlib import Path

from livesearch_pipeline.evaluation.retrieval import (
    build_retrieval, pages_of_trace, render_retrieval_markdown, write_retrieval,
)

EVIDENCE = {
    "clock": "2026-11-30", "gold_sha256": "abc",
    "questions": {
        "ls-1": {"band": "low", "tools_only": False, "present": True, "pages": ["/exchange/daily/A.html"]},
        "ls-2": {"band": "low", "tools_only": False, "present": True, "pages": ["/exchange/daily/B.html"]},
        "ls-3": {"band": "high", "tools_only": False, "present": True, "pages": ["/finquote/daily/C.html"]},
        "ls-4": {"band": "high", "tools_only": True, "present": False, "pages": []},
    },
    "summary": {"tools_only": 1, "evidence": {"n": 3, "share": 1.0},
                "by_band": {"low": {"share": 1.0}, "mid": {"share": None}, "high": {"share": 1.0}}},
}


def _run(root: Path, name: str, traces: dict[str, list], correct: set[str]) -> Path:
    run = root / name
    run.mkdir()
    (run / "predictions.jsonl").write_text("".join(json.dumps({"qid": q, "answer": "1", "trace": t}) + "\n"
                                                   for q, t in traces.items()))
    (run / "verdicts.jsonl").write_text("".join(json.dumps({"qid": q, "correct": q in correct}) + "\n"
                                                for q in traces))
    return run


def test_recall_counts_questions_whose_evidence_page_was_opened(tmp_path: Path) -> None:
    host = "http://127.0.0.1:8890"
    web = _run(tmp_path, "web", {
        "ls-1": [{"tool": "web_search", "urls": [f"{host}/exchange/daily/A.html"]},
                 {"tool": "fetch_page", "url": f"{host}/exchange/daily/A.html"}],
        "ls-2": [{"tool": "web_search", "urls": [f"{host}/exchange/daily/B.html"]},
                 {"tool": "fetch_page", "url": f"{host}/spam/B.html"}],
        "ls-3": [{"tool": "fetch_page", "url": f"{host}/finquote/daily/C.html?x=1"}],
        "ls-4": [{"tool": "fetch_page", "url": f"{host}/anything.html"}],
    }, correct={"ls-1", "ls-3"})
    oracle = _run(tmp_path, "oracle", {q: [] for q in EVIDENCE["questions"]}, correct=set(EVIDENCE["questions"]))
    report = build_retrieval([web, oracle], EVIDENCE)
    by_agent = {r["agent"]: r for r in report["runs"]}
    assert by_agent["web"]["n"] == 3, "tools-only questions are left out"
    assert by_agent["web"]["evidence_recall"] == round(2 / 3, 4)
    assert by_agent["web"]["evidence_in_results"] == round(2 / 3, 4)
    assert by_agent["web"]["accuracy"] == round(2 / 3, 4)
    assert by_agent["web"]["by_band"]["low"]["evidence_recall"] == 0.5
    assert by_agent["web"]["by_band"]["high"]["evidence_recall"] == 1.0
    assert by_agent["oracle"]["evidence_recall"] is None and by_agent["oracle"]["accuracy"] == 1.0
    assert report["ceiling"] == 1.0 and report["ceiling_by_band"]["mid"] is None
    markdown = render_retrieval_markdown(report)
    assert "| web | 3 | 66.7% | 66.7% |" in markdown and "| oracle | 3 | 100.0% | - |" in markdown
    written = write_retrieval(report, tmp_path / "leaderboard")
    assert [p.name for p in written] == ["retrieval.json", "retrieval.md"]


def test_pages_of_a_trace() -> None:
    opened, searched = pages_of_trace([{"tool": "web_search", "urls": ["http://h/a.html", "http://h/b.html"]},
                                       {"tool": "fetch_page", "url": "http://h/b.html", "final_url": "http://h/c.html"},
                                       {"type": "final", "answer": "1"}])
    assert opened == {"/b.html", "/c.html"} and searched == {"/a.html", "/b.html"}
    assert pages_of_trace(None) == (set(), set())


def test_the_report_shows_the_effort_per_band_and_family(tmp_path: Path) -> None:
    from livesearch_pipeline.web.evidence import effort_summary

    entries = [{"band": "low", "family": "window", "effort": 20}, {"band": "low", "family": "window", "effort": 21},
               {"band": "low", "family": "lookup", "effort": 1}, {"band": "high", "family": "window", "effort": 1},
               {"band": "high", "family": "lookup", "effort": None}]
    effort = effort_summary(entries)
    assert effort["by_band"]["low"] == {"n": 3, "median": 20, "mean": 14.0, "p90": 21, "max": 21}
    assert effort["by_band"]["mid"]["n"] == 0 and effort["by_band_family"]["high/window"]["median"] == 1
    evidence = {**EVIDENCE, "summary": {**EVIDENCE["summary"], "effort": effort}}
    navigator = _run(tmp_path, "navigator-6", {"ls-1": [{"tool": "fetch_page", "url": "http://h/exchange/daily/A.html"}]},
                     correct={"ls-1"})
    markdown = render_retrieval_markdown(build_retrieval([navigator], evidence))
    assert "| navigator-6 | 1 | 100.0% |" in markdown
    assert "| band low | 3 | 20 | 14.0 | 21 | 21 |" in markdown and "| low/window | 2 | 20.5 | 20.5 | 21 | 21 |" in markdown
