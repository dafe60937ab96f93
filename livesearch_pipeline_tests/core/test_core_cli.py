"""`livesearch gate` and `livesearch match`, in-process and through the installed script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main

USD_1PCT = '{"rule":"approx","rel_tol":0.01,"unit":"USD"}'


def test_gate_passes_relative_texts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "the most recent trading day", "最近一个交易日"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "PASS: the most recent trading day",
        "PASS: 最近一个交易日",
    ]


def test_gate_rejects_with_spans_and_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "the last completed quarter", "close on 2026-10-27 in FY2026"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "PASS: the last completed quarter",
        "REJECT: close on 2026-10-27 in FY2026",
        "  [9:19] '2026-10-27': ISO date",
        "  [23:29] 'FY2026': fiscal year",
    ]


def test_gate_needs_a_text(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["gate"])
    assert exit_info.value.code == 2


def test_match_correct_across_units(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "--match", USD_1PCT, "--value", "422000000000", "--answer", "4220亿美元"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CORRECT: approx:")


def test_match_sign_mismatch_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "--match", USD_1PCT, "--value", "422000000000", "--answer", "-$422 billion"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("WRONG: sign mismatch")


MILLION_CNY = '{"rule":"approx","unit":"million CNY","decimals":2}'


def test_match_takes_a_negative_answer_after_answer(capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 28: argparse read "-147.80万元" as an unknown option; only --answer=-147.80万元 worked.
    assert main(["match", "--match", MILLION_CNY, "--value", "-1.478", "--answer", "-147.80万元"]) == 0
    assert main(["match", "--match", MILLION_CNY, "--value", "-1.478", "--answer", "-$1.48 million"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "CORRECT: approx: |-1.478 - -1.478| million CNY = 0 <= 0.005 (rounding at 2 decimals)"
    assert out[1].startswith("WRONG: currency mismatch")
    with pytest.raises(SystemExit) as exit_info:  # an option still needs its value
        main(["match", "--match", MILLION_CNY, "--value", "1", "--answer"])
    assert exit_info.value.code == 2
    assert "argument --answer: expected one argument" in capsys.readouterr().err


def test_match_lang_zh_scores_at_the_chinese_precision(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["match", "--match", MILLION_CNY, "--value", "2459.9521", "--answer", "245995.61"]
    assert main([*argv, "--lang", "zh"]) == 1
    assert main([*argv[:-1], "245995.21", "--lang", "zh"]) == 0
    assert main([*argv[:-1], "2459.95"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("WRONG: approx: |245995.61 - 245995.21| 万元 (read in 万元, the zh text's unit) = 0.4 > 0.005 "
                      "(rounding at 2 decimals)")
    assert out[1].startswith("CORRECT") and out[2].startswith("CORRECT")


def test_match_value_unit(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["match", "--match", USD_1PCT, "--value", "4220", "--value-unit", "亿美元", "--answer", "$422bn"]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("CORRECT")


def test_match_text_gold(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "--match", '{"rule":"semantic"}', "--value", "Acme Robotics Co., Ltd.",
                 "--answer", "acme robotics"]) == 0
    assert main(["match", "--match", '{"rule":"exact"}', "--value", "600519", "--value-type", "text",
                 "--answer", "600519"]) == 0
    assert capsys.readouterr().out.count("CORRECT") == 2


def test_match_undecided_says_it_needs_a_judge(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["match", "--match", '{"rule":"approx","unit":"CNY","decimals":2}', "--value", "1234.57",
            "--answer", "Open 1,206.80, close 1,234.57."]
    assert main(argv) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("WRONG (undecided without an LLM judge): ambiguous")
    assert out[1] == "  candidates: 1206.8, 1234.57"


@pytest.mark.parametrize(
    ("rule_json", "value", "extra", "message"),
    [
        ('{"rule":"approx"', "1", [], "not valid JSON"),
        ('{"rule":"fuzzy"}', "1", [], "not a valid matching rule"),
        ('{"rule":"approx","rel_tol":0.01,"colour":"red"}', "1", [], "not a valid matching rule"),
        ('{"rule":"approx","rel_tol":0.01,"unit":"furlongs"}', "1", [], "unknown unit 'furlongs'"),
        ('{"rule":"approx","rel_tol":0.01}', "abc", ["--value-type", "number"], "not a number"),
        ('{"rule":"approx","rel_tol":0.01}', "inf", [], "not a finite number"),
        ('{"rule":"semantic"}', "1", ["--value-type", "number"], "never semantic"),
    ],
)
def test_match_bad_input_exits_2_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], rule_json: str, value: str, extra: list[str], message: str
) -> None:
    assert main(["match", "--match", rule_json, "--value", value, "--answer", "1", *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


@pytest.mark.slow  # starts the installed `livesearch` script (seconds): outside `make test-fast`
def test_installed_script_runs_gate_and_match() -> None:
    script = Path(sys.executable).with_name("livesearch")
    assert script.exists(), f"{script} is not installed"
    correct = subprocess.run(
        [str(script), "match", "--match", USD_1PCT, "--value", "422000000000", "--answer", "4220亿美元"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert (correct.returncode, correct.stdout.split(":")[0]) == (0, "CORRECT"), correct.stderr
    wrong = subprocess.run(
        [str(script), "match", "--match", USD_1PCT, "--value", "422000000000", "--answer", "-$422 billion"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert wrong.returncode == 1 and "sign mismatch" in wrong.stdout, wrong.stderr
    gate = subprocess.run([str(script), "gate", "2026年10月27日的收盘价"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert gate.returncode == 1 and gate.stdout.startswith("REJECT: 2026年10月27日的收盘价"), gate.stderr
