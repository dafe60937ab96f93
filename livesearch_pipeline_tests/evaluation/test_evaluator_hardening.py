"""The hardened evaluator (issue 11, items 3 and 4): refusals with exit 2 and nothing written,
scoring on served minus withdrawn, outputs as one unit, bounded answers and linear matching."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.core.matching import match_answer
from livesearch_pipeline.core.models import GoldAnswer
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.evaluation import outputs, scoring
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.inputs import evaluation_inputs
from livesearch_pipeline.evaluation.limits import MAX_ANSWER_CHARS
from livesearch_pipeline.evaluation.outputs import IncompleteEvaluationError, load_evaluation, write_evaluation
from livesearch_pipeline.evaluation.leaderboard import LeaderboardError, build_leaderboard
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    CNY2,
    DAY,
    EXACT,
    SEMANTIC,
    case,
    qid,
    standard_cases,
    write_day,
    write_gold,
    write_jsonl,
    write_predictions,
    write_served,
)

RIGHT = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing", qid(4): "42"}


def _run(files: tuple[Path, Path, Path], out: Path) -> int:
    served, gold, predictions = files
    return main(["evaluate", "--served", str(served), "--gold", str(gold), "--predictions", str(predictions),
                 "--out", str(out)])


def _refused(files: tuple[Path, Path, Path], out: Path, capsys: pytest.CaptureFixture[str], *named: object) -> str:
    """Exit 2, one line on stderr naming each of `named`, and no output file anywhere."""
    before = {p: p.stat().st_mtime_ns for p in out.parent.rglob("*") if p.is_file()}
    assert _run(files, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("livesearch evaluate: error:"), err
    for item in named:
        assert str(item) in err, (item, err)
    after = {p: p.stat().st_mtime_ns for p in out.parent.rglob("*") if p.is_file()}
    assert after == before  # nothing written, nothing changed
    return err


def _manifest(gold: Path) -> Path:
    return gold.with_name(gold.name.replace(".jsonl", ".manifest.json"))


# --------------------------------------------------------------------------- gold


def test_missing_manifest_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    _manifest(files[1]).unlink()
    _refused(files, tmp_path / "eval", capsys, files[1], "has no manifest")


def test_tampered_gold_without_manifest_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    _manifest(files[1]).unlink()
    files[1].write_bytes(files[1].read_bytes().replace(b"1234.56", b"1.00"))
    _refused(files, tmp_path / "eval", capsys, files[1])


def test_orphan_jsonl_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = standard_cases()
    served = write_served(tmp_path, cases)
    gold = write_gold(tmp_path, [c.gold for c in cases], manifest=False)  # a crash between the renames
    files = (served, gold, write_predictions(tmp_path, RIGHT))
    _refused(files, tmp_path / "eval", capsys, gold, "interrupted write")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("file", "gold_answers_2026-03-04.jsonl", "describes gold_answers_2026-03-04.jsonl"),
    ("records", 5, "manifest records 5"),
    ("counts_by_status", {"ok": 3, "empty": 1, "error": 0}, "manifest records 4"),
    ("sha256", "0" * 64, "modified or truncated"),
])
def test_mismatched_manifest_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str,
                                        value: object, message: str) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    manifest_path = _manifest(files[1])
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest[field] = value
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    _refused(files, tmp_path / "eval", capsys, files[1], message)


def test_unreadable_manifest_is_refused_on_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    manifest_path = _manifest(files[1])
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["records"], manifest["withdrawn"] = "many", []
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    _refused(files, tmp_path / "eval", capsys, manifest_path, "is not a valid snapshot manifest")


def test_gold_holding_an_unserved_qid_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = standard_cases()
    served = write_served(tmp_path, cases[:3])
    gold = write_gold(tmp_path, [c.gold for c in cases])
    _refused((served, gold, write_predictions(tmp_path, {})), tmp_path / "eval", capsys, qid(4), "not served")


def test_empty_scoring_set_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = standard_cases()
    served = write_jsonl(tmp_path / "served" / f"served_questions_{DAY}.jsonl", [])
    gold = write_gold(tmp_path, [c.gold for c in cases])
    files = (served, gold, write_predictions(tmp_path, {}))
    _refused(files, tmp_path / "eval", capsys, "scoring set of 2026-03-03 is empty", served)


def test_scoring_set_emptied_by_withdrawals_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = standard_cases()[:1]
    empty = GoldAnswer(qid=qid(1), date=DAY, status="empty", match=CNY2)
    served = write_served(tmp_path, cases)
    gold = write_gold(tmp_path, [empty], max_withdrawn_share=1.0)
    _refused((served, gold, write_predictions(tmp_path, {})), tmp_path / "eval", capsys, "withdraws 1")


# --------------------------------------------------------------------------- the scoring set


def test_a_day_with_withdrawn_questions_scores_on_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """3 empty + 1 error out of 84 (4.8%, under a 5% cap): the refresh freezes it, so it must score."""
    scored_cases = [case(n, float(n), f"{n}.00", CNY2, unit="CNY") for n in range(1, 81)]
    withdrawn = [case(n, 0.0, "0", CNY2, unit="CNY") for n in range(81, 85)]
    unusable = [GoldAnswer(qid=qid(n), date=DAY, status="empty", match=CNY2) for n in (81, 82, 83)]
    unusable.append(GoldAnswer(qid=qid(84), date=DAY, status="error", match=CNY2, error="c1 daily: timeout"))
    served = write_served(tmp_path, scored_cases + withdrawn)
    gold = write_gold(tmp_path, [c.gold for c in scored_cases] + unusable, max_withdrawn_share=0.05)
    answers = {c.served.qid: c.gold.answer for c in scored_cases} | {qid(81): "whatever"}
    predictions = write_predictions(tmp_path, answers, served_qids=[c.served.qid for c in scored_cases + withdrawn])
    out = tmp_path / "eval"
    assert _run((served, gold, predictions), out) == 0
    assert "accuracy 100.0% (80/80 scored; 4 withdrawn of 84 served" in capsys.readouterr().out
    summary, verdicts_path = load_evaluation(out)
    assert (summary.n_scored, summary.n_withdrawn, summary.n_ignored_withdrawn) == (80, 4, 1)
    assert summary.qid_set_hash == qid_set_hash(c.served.qid for c in scored_cases)
    assert len(verdicts_path.read_text(encoding="utf-8").splitlines()) == 80


def test_leaderboard_ranks_only_runs_with_the_same_scoring_set(tmp_path: Path) -> None:
    cases = standard_cases()
    served = write_served(tmp_path / "a", cases)
    gold = write_gold(tmp_path / "a", [c.gold for c in cases])
    write_evaluation(evaluate(served, gold, write_predictions(tmp_path / "a", RIGHT)), tmp_path / "a" / "eval")
    # Same served file, but D's gold (as another store holds it) withdraws qid 4: another scoring set.
    broken = GoldAnswer(qid=qid(4), date=DAY, status="error", match=EXACT, error="boom")
    served_b = write_served(tmp_path / "b", cases)
    gold_b = write_gold(tmp_path / "b", [c.gold for c in cases[:3]] + [broken])
    write_evaluation(evaluate(served_b, gold_b, write_predictions(tmp_path / "b", RIGHT, agent="b")),
                     tmp_path / "b" / "eval")
    # A second agent on the first scoring set makes it the largest group (one agent name is one row).
    write_evaluation(evaluate(served, gold, write_predictions(tmp_path / "a2", RIGHT, agent="a2",
                                                              served_qids=[c.served.qid for c in cases])),
                     tmp_path / "a2" / "eval")
    board = build_leaderboard([tmp_path / "a" / "eval", tmp_path / "b" / "eval", tmp_path / "a2" / "eval"])
    assert board.qid_set_hash == qid_set_hash(RIGHT) and board.scored == 4
    assert [u.run_dir for u in board.unranked] == [str(tmp_path / "b" / "eval")]
    assert "qid-set hash" in board.unranked[0].reason


# --------------------------------------------------------------------------- lines


@pytest.mark.parametrize(("which", "mangle", "line"), [
    ("predictions", lambda lines: [lines[0] + " " + lines[1], *lines[2:]], 1),
    ("predictions", lambda lines: [lines[0][:20], lines[0][20:], *lines[1:]], 1),
    ("predictions", lambda lines: [lines[0], "", *lines[1:]], 2),
    ("predictions", lambda lines: [lines[0], "[1, 2]", *lines[1:]], 2),
    ("served", lambda lines: [lines[0] + lines[1], *lines[2:]], 1),
    ("served", lambda lines: [lines[0], "   ", *lines[1:]], 2),
])
def test_a_line_that_is_not_exactly_one_object_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          which: str, mangle, line: int) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    path = files[0] if which == "served" else files[2]
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(mangle(lines)) + "\n", encoding="utf-8")
    _refused(files, tmp_path / "eval", capsys, path, f"line {line}:")


def test_an_object_split_so_that_joined_lines_parse_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two objects on one line plus one split over two: joined with commas they made a valid array
    with as many records as lines, which the old batch parser accepted."""
    files = write_day(tmp_path, standard_cases(), {})
    predictions = files[2]
    predictions.write_text(
        f'{{"qid": "{qid(1)}", "answer": "1234.56"}},{{"qid": "{qid(2)}", "answer": "1.23%"}}\n'
        f'{{"qid": "{qid(3)}", "trace": [1\n'
        f'2], "answer": "Kunlun Brewing"}}\n', encoding="utf-8")
    _refused(files, tmp_path / "eval", capsys, predictions, "line 1:")


@pytest.mark.parametrize("problem", ["unknown", "duplicate"])
def test_unknown_or_duplicate_predictions_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      problem: str) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    extra = qid(99) if problem == "unknown" else qid(1)
    with files[2].open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"qid": extra, "answer": "1"}) + "\n")
    _refused(files, tmp_path / "eval", capsys, files[2], extra)


# --------------------------------------------------------------------------- outputs


def test_out_colliding_with_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    served, gold, predictions = write_day(tmp_path, standard_cases(), RIGHT)
    # --out equal to an input file.
    _refused((served, gold, predictions), predictions, capsys, "is a file, not a directory")
    # An input named like an output, in the --out directory, reached through a relative path.
    summary_named = predictions.with_name("summary.json")
    predictions.rename(summary_named)
    monkeypatch.chdir(summary_named.parent)
    _refused((served, gold, summary_named), Path("."), capsys, "would overwrite an input")
    # An output name that is a symlink to an input (the gold).
    out = tmp_path / "eval"
    out.mkdir()
    (out / "verdicts.jsonl").symlink_to(gold)
    _refused((served, gold, summary_named), out, capsys, "would overwrite an input", gold)
    # A hard link to the served file under an output name.
    (out / "verdicts.jsonl").unlink()
    os.link(served, out / "summary.json")
    _refused((served, gold, summary_named), out, capsys, "would overwrite an input")


def test_out_beside_the_predictions_is_fine(tmp_path: Path) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    assert _run(files, files[2].parent) == 0
    summary, _ = load_evaluation(files[2].parent)
    assert summary.correct == 4 and files[2].is_file()


def test_interrupted_write_never_leaves_verdicts_without_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    out = tmp_path / "eval"
    write_evaluation(evaluate(*files), out, inputs=evaluation_inputs(*files))
    good = load_evaluation(out)[0]
    real_write = outputs.write_atomic

    def crash_on_verdicts(path: Path, data: bytes, **kwargs: object) -> None:
        if path.name == "verdicts.jsonl":
            raise OSError("disk full")  # the process dies between the two files
        real_write(path, data, **kwargs)

    monkeypatch.setattr(outputs, "write_atomic", crash_on_verdicts)
    changed = write_predictions(tmp_path, {**RIGHT, qid(4): "41"})
    with pytest.raises(OSError, match="disk full"):
        write_evaluation(evaluate(files[0], files[1], changed), out)
    assert not (out / "verdicts.jsonl").exists()  # the old verdicts went first: no mixed pair
    with pytest.raises(IncompleteEvaluationError, match="no verdicts.jsonl"):
        load_evaluation(out)
    with pytest.raises(LeaderboardError, match="no complete evaluation"):
        build_leaderboard([out])
    assert good.correct == 4


def test_leaderboard_lists_an_interrupted_run_as_unranked(tmp_path: Path) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    complete, broken = tmp_path / "complete", tmp_path / "broken"
    write_evaluation(evaluate(*files), complete)
    write_evaluation(evaluate(*files), broken)
    (broken / "verdicts.jsonl").write_text("", encoding="utf-8")  # not the verdicts the summary records
    board = build_leaderboard([complete, broken])
    assert [r.run_dir for r in board.rows] == [str(complete)]
    assert board.unranked[0].run_dir == str(broken) and "incomplete evaluation" in board.unranked[0].reason


# --------------------------------------------------------------------------- answer length


def test_a_one_megabyte_answer_scores_wrong_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    huge = "May" + " " * 1_000_000 + "1234.56"  # once quadratic in the date scan
    files = write_day(tmp_path, standard_cases(), {**RIGHT, qid(1): huge})
    matched: list[int] = []
    real_match = scoring.match_answer

    def spy(rule, gold, answer, **kwargs):
        matched.append(len(answer))
        return real_match(rule, gold, answer, **kwargs)

    monkeypatch.setattr(scoring, "match_answer", spy)
    started = time.process_time()
    result = evaluate(*files)
    assert time.process_time() - started < 5  # CPU seconds, generous: matching it took minutes
    assert matched and max(matched) <= MAX_ANSWER_CHARS  # the matcher never saw it
    verdict = next(v for v in result.verdicts if v.qid == qid(1))
    assert not verdict.correct and verdict.reason == f"answer longer than {MAX_ANSWER_CHARS} characters"
    assert result.summary.n_too_long == 1 and result.summary.max_answer_chars == MAX_ANSWER_CHARS


def test_the_limit_is_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert f"{MAX_ANSWER_CHARS:,} characters" in " ".join(capsys.readouterr().out.split())


# Answers built to hit each once super-linear path: a date-span scan per number, a listing of
# distinct values, bold spans per candidate, blanks backtracked after a month name, and
# company suffixes that an end-anchored regex backtracked over.
_SHAPES = {
    "dates and numbers": (CNY2, 12.34, "CNY", lambda n: ("2026-10-27 12.3 " * (n // 16 + 1))[:n]),
    "distinct numbers": (CNY2, 12.34, "CNY", lambda n: " ".join(str(i) for i in range(n // 5))[:n]),
    "bold numbers": (CNY2, 12.34, "CNY", lambda n: ("**1** 2 " * (n // 8 + 1))[:n]),
    "blanks after a month": (EXACT, "2026-10-27", None, lambda n: "May" + " " * n + "x"),
    "blanks before a quarter": (EXACT, "2026-10-27", None, lambda n: "季" + " " * n + "x"),
    "company suffixes": (SEMANTIC, "Kunlun Brewing", None, lambda n: ("co ltd " * (n // 7 + 1))[:n] + " x"),
}


def _fastest(rule, gold, unit, answer: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        match_answer(rule, gold, answer, gold_unit=unit)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_matching_time_grows_linearly(shape: str) -> None:
    rule, gold, unit, make = _SHAPES[shape]
    small, large = _fastest(rule, gold, unit, make(10_000), 3), _fastest(rule, gold, unit, make(100_000), 2)
    # CPU time, best of a few runs. Ten times the text: linear costs ~10x (caches make it up to
    # ~20x); the quadratic paths fixed here cost 100x and more, the exponential one never ends.
    assert large < 40 * max(small, 1e-3), (shape, small, large)
