"""An outsider's route without the operator's files: the site's downloads of a day are enough for
`livesearch evaluate`, which scores the published golds only and says so; the evidence pages of a
question are published only with its gold."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.own_run import own_run_meta
from livesearch_pipeline.site.build import build_site, site_dir
from livesearch_pipeline_tests.site.conftest import DAYS


def _downloads(data_paths, tmp_path: Path, day) -> Path:
    """A clean folder holding the site's served file, gold and gold manifest of `day`, as downloaded."""
    source = site_dir(data_paths) / "downloads" / day.isoformat()
    folder = tmp_path / f"outsider-{day}"
    folder.mkdir()
    for name in ("gold.jsonl", "gold.manifest.json", f"served_questions_{day}.jsonl"):
        shutil.copy(source / name, folder / name)
    return folder


def _predict(folder: Path, wrong: int = 0) -> Path:
    """predictions.jsonl made of the shown answers (the first `wrong` of them spoiled) and its metadata."""
    rows = [json.loads(line) for line in (folder / "gold.jsonl").read_text().splitlines()]
    shown = [r for r in rows if r["status"] == "ok" and r["shown"]]
    predictions = folder / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"qid": r["qid"], "answer": r["answer"] if i >= wrong else "-1e9 CNY"})
                                   + "\n" for i, r in enumerate(shown)))
    day = rows[0]["date"]
    meta = own_run_meta(folder / f"served_questions_{day}.jsonl", folder / "gold.jsonl", predictions, agent="outsider")
    predictions.with_name("predictions.meta.json").write_text(meta.model_dump_json())
    return predictions


def test_the_site_gold_download_scores_the_shown_answers_100_percent_on_the_published_questions(
        data_paths, tmp_path: Path) -> None:
    build_site(data_paths, DAYS[-1], workers=1)
    day = DAYS[0]
    folder = _downloads(data_paths, tmp_path, day)
    manifest = json.loads((folder / "gold.manifest.json").read_text())
    assert manifest["shown"] > 0 and manifest["withheld"] > 0  # a partial gold: some of it still live
    result = evaluate(folder / f"served_questions_{day}.jsonl", folder / "gold.jsonl", _predict(folder))
    s = result.summary
    assert (s.correct, s.n_scored, s.accuracy) == (manifest["shown"], manifest["shown"], 1.0)
    assert s.published_gold and s.n_withheld == manifest["withheld"]
    assert s.gold_sha256 == manifest["snapshot"]["sha256"]  # the day's snapshot, as on the board
    assert any("published question(s) only" in w and f"{manifest['withheld']} withheld" in w for w in s.warnings)

    (tmp_path / "again").mkdir()
    spoiled = _downloads(data_paths, tmp_path / "again", day)
    result = evaluate(spoiled / f"served_questions_{day}.jsonl", spoiled / "gold.jsonl", _predict(spoiled, wrong=2))
    assert result.summary.correct == manifest["shown"] - 2


def test_a_withheld_gold_row_carries_nothing_of_its_answer(data_paths, tmp_path: Path) -> None:
    build_site(data_paths, DAYS[-1], workers=1)
    for day in DAYS:
        for line in (site_dir(data_paths) / "downloads" / day.isoformat() / "gold.jsonl").read_text().splitlines():
            row = json.loads(line)
            if not row["shown"]:
                assert row["hidden_reason"] and row["answer"] is row["value_json"] is row["match_json"] is None


def test_a_tampered_gold_download_and_a_day_with_every_gold_live_are_refused(data_paths, tmp_path: Path) -> None:
    build_site(data_paths, DAYS[-1], workers=1)
    folder = _downloads(data_paths, tmp_path, DAYS[0])
    predictions = _predict(folder)
    gold = folder / "gold.jsonl"
    gold.write_text(gold.read_text().replace('"shown": false', '"shown": true', 1))
    with pytest.raises(EvaluationError, match="sha256"):
        evaluate(folder / f"served_questions_{DAYS[0]}.jsonl", gold, predictions)

    (folder / "gold.manifest.json").unlink()
    with pytest.raises(EvaluationError, match="gold.jsonl with gold.manifest.json beside it"):
        evaluate(folder / f"served_questions_{DAYS[0]}.jsonl", gold, predictions)

    latest = _downloads(data_paths, tmp_path, DAYS[-1])
    predictions = latest / "predictions.jsonl"
    predictions.write_text("")
    meta = own_run_meta(latest / f"served_questions_{DAYS[-1]}.jsonl", latest / "gold.jsonl", predictions, agent="x")
    predictions.with_name("predictions.meta.json").write_text(meta.model_dump_json())
    with pytest.raises(EvaluationError, match="shows no answer yet"):
        evaluate(latest / f"served_questions_{DAYS[-1]}.jsonl", latest / "gold.jsonl", predictions)


def test_evidence_pages_are_published_only_with_their_gold(data_paths) -> None:
    build_site(data_paths, DAYS[-1], workers=1)
    pages = re.compile(r"<td>(\d+): <code>")
    latest = (site_dir(data_paths) / "days" / f"{DAYS[-1]}.html").read_text()
    assert "<table" in latest and not pages.search(latest)  # every gold of the latest day is withheld
    earlier = (site_dir(data_paths) / "days" / f"{DAYS[0]}.html").read_text()
    rows = re.findall(r"<tr data-tier=[^>]*><td><a href=\"../questions/.*?</tr>", earlier)
    with_pages = [row for row in rows if pages.search(row)]
    assert with_pages and all("hidden-gold" not in row for row in with_pages)


def test_evidence_goes_only_with_a_shown_ok_gold() -> None:
    import datetime as dt

    from livesearch_pipeline.core.models import MatchRule
    from livesearch_pipeline.site.inputs import GoldRow
    from livesearch_pipeline.site.pages import evidence_published

    rule = MatchRule(rule="exact")
    ok = GoldRow("ls-0", dt.date(2026, 11, 2), "ok", "1", 1, None, None, rule)
    empty = GoldRow("ls-0", dt.date(2026, 11, 2), "empty", None, None, None, None, rule)
    assert evidence_published(ok, None)
    assert not evidence_published(ok, "the latest frozen day: tomorrow's answer may be the same")
    assert not evidence_published(empty, None) and not evidence_published(None, None)


def test_the_inspect_task_reads_a_folder_of_the_site_downloads(data_paths, tmp_path: Path) -> None:
    """`inspect eval ... -T data_dir=<the download folder>`: the samples are the published questions."""
    from livesearch_pipeline.evaluation.inspect_task import load_day

    build_site(data_paths, DAYS[-1], workers=1)
    folder = _downloads(data_paths, tmp_path, DAYS[0])
    shown = {json.loads(line)["qid"] for line in (folder / "gold.jsonl").read_text().splitlines()
             if json.loads(line)["shown"] and json.loads(line)["status"] == "ok"}
    day = load_day(folder, DAYS[0])
    assert set(day.scoring) == shown and day.gold.published and len(day.gold.withheld) > 0
