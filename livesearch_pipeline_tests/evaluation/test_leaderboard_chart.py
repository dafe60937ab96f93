"""The PNG chart of accuracy by visibility level and tier (one panel per tier, one line per agent)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.evaluation.leaderboard import (
    CHART_PNG,
    CHART_SIZE_INCHES,
    CHART_DPI,
    build_leaderboard,
    render_chart_png,
    write_leaderboard,
)
from livesearch_pipeline_tests.evaluation.eval_fixtures import qid, standard_cases, write_gold, write_predictions, write_served

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RIGHT = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing", qid(4): "42"}


def _run(root: Path, name: str, answers: dict[str, str]) -> Path:
    cases = standard_cases()
    served = write_served(root, cases)
    gold_path = root / "gold" / "gold_answers_2026-03-03.jsonl"
    gold = gold_path if gold_path.exists() else write_gold(root, [c.gold for c in cases])
    predictions = write_predictions(root, answers, served_qids=[c.served.qid for c in cases], agent=name, model=None,
                                    name=f"pred_{name}")
    out = root / "runs" / name
    write_evaluation(evaluate(served, gold, predictions), out)
    return out


@pytest.fixture()
def board(tmp_path: Path):
    return build_leaderboard([_run(tmp_path, "oracle", RIGHT), _run(tmp_path, "half", {qid(1): "1234.56", qid(3): "x"})])


def _image(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def test_chart_is_a_png_with_one_panel_per_tier(board) -> None:
    png = render_chart_png(board)
    assert png.startswith(PNG_SIGNATURE) and len(png) > 10_000
    tiers = {p.tier for p in board.chart}
    assert tiers == {"T1", "T2", "T3"}
    width, height = _image(png).size
    assert width == round(CHART_SIZE_INCHES[0] * len(tiers) * CHART_DPI)
    assert height == round((CHART_SIZE_INCHES[1] + 0.6) * CHART_DPI)


def test_chart_bytes_are_reproducible_and_carry_no_software_or_date_tag(board) -> None:
    first, second = render_chart_png(board), render_chart_png(board)
    assert first == second
    info = _image(first).info
    assert "Software" not in info and not any("date" in key.lower() or "time" in key.lower() for key in info)


def test_chart_depends_on_the_scores(tmp_path: Path, board) -> None:
    other = build_leaderboard([_run(tmp_path / "other", "oracle", RIGHT), _run(tmp_path / "other", "none", {})])
    assert render_chart_png(other) != render_chart_png(board)


def test_chart_is_written_beside_the_leaderboard(tmp_path: Path, board) -> None:
    written = write_leaderboard(board, tmp_path / "board")
    png_path = tmp_path / "board" / CHART_PNG
    assert png_path in written and png_path.read_bytes() == render_chart_png(board)
