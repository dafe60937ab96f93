from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "evaluate.py"


def test_benchmark_script_runs_on_a_small_day(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("benchmark_evaluate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--predictions", "300", "--judge-sample", "200"])  # exit code is timing-dependent
    out = capsys.readouterr().out
    assert "deterministic evaluation: 300 predictions" in out
    assert "of which core.matching.match_answer" in out
    calls = int(out.split("judge calls: ")[1].split(" ")[0])
    assert 0 < calls < 200  # far fewer than one call per answer, yet the judge is used
