"""Issue 23, finding 6: the Parquet store is verified against the JSONL it was built from; a
deleted, edited or truncated partition is an error naming the rebuild command, never a silently
partial (or silently wrong) history."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from livesearch_pipeline.evaluation.audits import stale_gold_series
from livesearch_pipeline.evaluation.history import signature_history
from livesearch_pipeline.evaluation.store import (
    REBUILD_COMMAND, StoreError, leaderboard_history, partition_path, read_table, rebuild, store_root, verify_store,
)
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.evaluation.test_store import DAYS, _day

REBUILD = REBUILD_COMMAND.split(" --data")[0]


@pytest.fixture
def data(tmp_path) -> DataPaths:
    for day, close in zip(DAYS, (100.0, 101.5, 101.5)):
        _day(tmp_path, day, close)
    return DataPaths(tmp_path)


def _rewrite(path, change) -> None:
    table = pq.read_table(path)
    pq.write_table(change(table), path)


def test_a_fresh_store_verifies_and_history_is_complete(data: DataPaths) -> None:
    rebuild(data)
    assert verify_store(data) == DAYS
    history = leaderboard_history(store_root(data), paths=data)
    assert sorted(set(history["date"].astype(str))) == [d.isoformat() for d in DAYS]


def test_a_deleted_verdicts_partition_is_an_error_not_an_empty_history(data: DataPaths) -> None:
    rebuild(data)
    root = store_root(data)
    partition_path(root, "verdicts", DAYS[1]).unlink()
    for read in (lambda: read_table(root, "verdicts"), lambda: leaderboard_history(root),
                 lambda: verify_store(data), lambda: signature_history(data, [], store_dir=root)):
        with pytest.raises(StoreError, match=f"{DAYS[1]}.*{REBUILD}"):
            read()


def test_correct_true_written_into_the_store_is_detected(data: DataPaths) -> None:
    rebuild(data)
    root = store_root(data)
    path = partition_path(root, "verdicts", DAYS[0])
    _rewrite(path, lambda t: t.set_column(t.schema.get_field_index("correct"), "correct",
                                          pa.array([True] * t.num_rows)))
    with pytest.raises(StoreError, match="partition file differs from the one written"):
        leaderboard_history(root)


def test_gold_rows_removed_with_their_snapshot_sha_kept_do_not_shift_the_series(data: DataPaths) -> None:
    rebuild(data)
    root = store_root(data)
    _rewrite(partition_path(root, "gold", DAYS[1]), lambda t: t.slice(0, 2))  # snapshot_sha256 column intact
    with pytest.raises(Exception, match=f"partition file differs.*{REBUILD}"):
        stale_gold_series(root, data.gold, DAYS[1], DAYS[2])


def test_a_truncated_file_gives_the_documented_error(data: DataPaths) -> None:
    rebuild(data)
    root = store_root(data)
    path = partition_path(root, "served", DAYS[2])
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(StoreError, match=f"served {DAYS[2]} \\(partition file differs.*{REBUILD}"):
        read_table(root, "served")


def test_a_store_behind_its_jsonl_names_the_rebuild_command(data: DataPaths) -> None:
    rebuild(data)
    # A re-evaluation since (issue 30: a real one, predictions scored again; verdicts edited alone
    # are refused by `test_case4_*`).
    run = data.runs / DAYS[2].isoformat() / "model-a"
    predictions = run / "predictions.jsonl"
    predictions.write_text(predictions.read_text().replace('"9.99%"', '"1.25%"'), encoding="utf-8")
    write_evaluation(evaluate(data.served_file(DAYS[2]), data.gold / f"gold_answers_{DAYS[2]}.jsonl", predictions), run)
    with pytest.raises(StoreError, match=f"verdicts {DAYS[2]} \\(derived from other sources than the JSONL now on "
                                         f"disk\\).*{REBUILD}"):
        verify_store(data)
    done = subprocess.run([sys.executable, "-m", "livesearch_pipeline.evaluation.store", "verify", "--data",
                           str(data.root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "rebuild it: python -m livesearch_pipeline.evaluation.store rebuild" in done.stderr
    rebuild(data)
    assert verify_store(data) == DAYS


# Issue 30, case 4: the store attests itself no more. Rows rewritten with the index updated to
# match, or a fabricated date, fail `store verify` (exit 2); a forged run's verdicts too.

def _update_index(root, table: str, day, path) -> None:
    import hashlib
    import json

    index_path = root / table / "_index.json"
    index = json.loads(index_path.read_text())
    index[day.isoformat()]["part_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    index_path.write_text(json.dumps(index))


def _verify_cli(data: DataPaths) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "livesearch_pipeline.evaluation.store", "verify", "--data",
                           str(data.root)], capture_output=True, text=True, timeout=120)


def test_case4_rows_rewritten_with_the_index_updated_fail_verify(data: DataPaths) -> None:
    rebuild(data)
    root = store_root(data)
    path = partition_path(root, "verdicts", DAYS[0])
    _rewrite(path, lambda t: t.set_column(t.schema.get_field_index("correct"), "correct",
                                          pa.array([True] * t.num_rows)))
    _update_index(root, "verdicts", DAYS[0], path)
    with pytest.raises(StoreError, match=f"verdicts {DAYS[0]} \\(partition file differs from the one its sources "
                                         f"give: edited\\).*{REBUILD}"):
        verify_store(data)
    with pytest.raises(StoreError, match="partition file differs from the one its sources give"):
        leaderboard_history(root, paths=data)
    done = _verify_cli(data)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_case4_a_fabricated_date_fails_verify(data: DataPaths) -> None:
    import shutil

    rebuild(data)
    root = store_root(data)
    fabricated = DAYS[-1].replace(day=DAYS[-1].day + 1)
    source = partition_path(root, "verdicts", DAYS[0])
    target = partition_path(root, "verdicts", fabricated)
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    _update_index(root, "verdicts", DAYS[0], source)
    import json

    index_path = root / "verdicts" / "_index.json"
    index = json.loads(index_path.read_text())
    index[fabricated.isoformat()] = index[DAYS[0].isoformat()]
    index_path.write_text(json.dumps(index))
    with pytest.raises(StoreError, match=f"verdicts {fabricated} \\(in the store but without a source: fabricated"):
        verify_store(data)
    assert _verify_cli(data).returncode == 2


def test_case4_forged_verdicts_rebuilt_into_the_store_fail_verify(data: DataPaths) -> None:
    import hashlib
    import json

    run = data.runs / DAYS[1].isoformat() / "model-a"
    lines = [json.loads(line) for line in (run / "verdicts.jsonl").read_text().splitlines()]
    forged = "".join(json.dumps({**v, "correct": True}) + "\n" for v in lines)
    (run / "verdicts.jsonl").write_text(forged)
    summary = json.loads((run / "summary.json").read_text())
    summary.update(verdicts_sha256=hashlib.sha256(forged.encode()).hexdigest(), correct=4, accuracy=1.0)
    (run / "summary.json").write_text(json.dumps(summary))
    rebuild(data)  # the store now agrees with the forged JSONL: the sources themselves are checked
    with pytest.raises(StoreError, match=f"run {DAYS[1]}/model-a \\(its verdicts are not what its predictions score "
                                         "against the gold: 2 differ"):
        verify_store(data)
