"""The Parquet store: derived from the JSONL, rebuilt byte-identically, and read by the audits."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from livesearch_pipeline.core.models import GoldAnswer
from livesearch_pipeline.core.snapshot import SnapshotStore, write_atomic
from livesearch_pipeline.evaluation.audits import AuditError, longitudinal_audit, stale_gold_audit, stale_gold_series
from livesearch_pipeline.evaluation.history import _verdicts_by_run
from livesearch_pipeline.evaluation.store import (
    GOLD_SCHEMA, StoreError, export_day, gold_answer_from_row, gold_rows, leaderboard_history, parquet_bytes,
    partition_path, read_table, rebuild, store_root,
)
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    CNY2, EXACT, PCT2, case, qid, write_predictions, write_served,
)

DAYS = [dt.date(2026, 3, 2), dt.date(2026, 3, 3), dt.date(2026, 3, 4)]


def write_gold(root: Path, answers: list[GoldAnswer], day: dt.date) -> None:
    # One error answer in five is withdrawn on purpose: the store must carry `error` rows too.
    SnapshotStore(root / "gold").write(day, answers, pool_version="test-pool", pool_sha256="a" * 64,
                                       data_service="synthetic-test", code_version="test", max_withdrawn_share=1.0,
                                       cutoff=dt.datetime.combine(day, dt.time(22, 0), tzinfo=dt.timezone.utc),
                                       created_at=dt.datetime.combine(day, dt.time(23, 0), tzinfo=dt.timezone.utc))


WRONG = {qid(1): "1.00", qid(2): "9.99%", qid(3): "Sector B", qid(4): "8"}


def _day(root: Path, day: dt.date, close: float) -> None:
    cases = [
        case(1, close, f"{close:.2f}", CNY2, unit="CNY", refresh_class="daily", date=day),
        case(2, 1.25, "1.25%", PCT2, unit="%", refresh_class="monthly", date=day),
        case(3, "Sector A", "Sector A", EXACT, refresh_class="static", date=day, zh=True),
        case(4, 7, "7", EXACT, refresh_class="quarterly", date=day),
    ]
    golds = [c.gold for c in cases]
    golds.append(GoldAnswer(qid=qid(5), date=day, status="error", error="vendor timeout", match=EXACT))
    write_gold(root, golds, day)
    served = write_served(root, cases, day)
    # Real runs (predictions, verdicts and the summary binding both): the store verifies each run's
    # verdicts by scoring its predictions again (issue 30).
    for agent, right in (("model-a", {qid(1), qid(3)}), ("oracle", {qid(n) for n in range(1, 5)})):
        answers = {c.served.qid: c.gold.answer if c.served.qid in right else WRONG[c.served.qid] for c in cases}
        predictions = write_predictions(root / "runs" / day.isoformat(), answers, served_qids=list(answers),
                                        agent=agent, model=None, date=day, name=agent)
        write_evaluation(evaluate(served, SnapshotStore(root / "gold").path_for(day), predictions),
                         predictions.parent)


@pytest.fixture
def data(tmp_path: Path) -> DataPaths:
    for day, close in zip(DAYS, (100.0, 101.5, 101.5)):
        _day(tmp_path, day, close)
    return DataPaths(tmp_path)


def _all_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.parquet"))}


def test_a_rebuild_from_the_jsonl_gives_identical_bytes(data: DataPaths, tmp_path: Path):
    exported = rebuild(data)
    assert [d.day for d in exported] == DAYS
    assert exported[0].rows == {"gold": 5, "served": 4, "verdicts": 8}
    first = _all_files(store_root(data))
    assert len(first) == 9

    # From scratch in another directory, and again over the existing files.
    rebuild(data, tmp_path / "elsewhere")
    rebuild(data)
    assert _all_files(tmp_path / "elsewhere") == first
    assert _all_files(store_root(data)) == first


def test_the_gold_table_holds_exactly_the_snapshot(data: DataPaths):
    rebuild(data)
    rows = read_table(store_root(data), "gold", dates=[DAYS[1]]).to_pylist()
    answers = SnapshotStore(data.gold).read(DAYS[1])
    assert [gold_answer_from_row(r["date"], r) for r in rows] == answers
    manifest = SnapshotStore(data.gold).verify(DAYS[1])
    assert {r["snapshot_sha256"] for r in rows} == {manifest.sha256}
    assert [r["value_num"] for r in rows] == [101.5, 1.25, None, 7.0, None]


def test_the_longitudinal_audit_from_parquet_equals_the_jsonl_scan(data: DataPaths):
    rebuild(data)
    qids = [qid(1), qid(3), qid(5), qid(9)]
    from_jsonl = longitudinal_audit(data.gold, qids, DAYS[0], DAYS[-1])
    from_store = longitudinal_audit(data.gold, qids, DAYS[0], DAYS[-1], store_dir=store_root(data))
    assert from_store == from_jsonl
    assert from_store.changes[qid(1)] == 1 and {c.status for c in from_store.cells if c.qid == qid(9)} == {"absent"}


def test_a_stale_or_missing_partition_fails_naming_the_date(data: DataPaths):
    rebuild(data)
    root = store_root(data)
    answers = SnapshotStore(data.gold).read(DAYS[1])
    write_atomic(partition_path(root, "gold", DAYS[1]), parquet_bytes(gold_rows(answers, "0" * 64), GOLD_SCHEMA))
    with pytest.raises(AuditError, match=r"not current for 2026-03-03 \(derived from 000000000000"):
        longitudinal_audit(data.gold, [qid(1)], DAYS[0], DAYS[-1], store_dir=root)
    shutil.rmtree(partition_path(root, "gold", DAYS[2]).parent)
    with pytest.raises(AuditError, match=r"2026-03-04 \(no partition\)"):
        stale_gold_series(root, data.gold, DAYS[2], DAYS[2])
    with pytest.raises(StoreError, match="no gold partition for 2026-03-04"):
        read_table(root, "gold", dates=[DAYS[2]])


def test_the_stale_gold_series_matches_the_daily_audit(data: DataPaths):
    rebuild(data)
    series = stale_gold_series(store_root(data), data.gold, DAYS[0], DAYS[-1])
    assert [p.date for p in series] == DAYS[1:]
    for point in series:
        audit = stale_gold_audit(data.gold, point.date)
        assert (point.previous_date, point.n_compared, point.n_failed, point.failure_rate, point.by_refresh_class) == (
            audit.previous_date, audit.n_compared, audit.n_failed, audit.failure_rate, audit.by_refresh_class)
    assert [p.n_failed for p in series] == [1, 0]


def test_history_and_leaderboard_history_read_the_verdict_table(data: DataPaths):
    rebuild(data)
    from_jsonl = [(agent, sorted(v)) for agent, v in _verdicts_by_run(data, None)]
    from_store = [(agent, sorted(v)) for agent, v in _verdicts_by_run(data, store_root(data))]
    assert from_store == from_jsonl and len(from_store) == 6

    board = leaderboard_history(store_root(data))
    assert list(board.columns) == ["date", "agent", "n", "correct", "accuracy"]
    model_a = board[board["agent"] == "model-a"]
    assert list(model_a["accuracy"]) == [0.5, 0.5, 0.5] and list(board[board["agent"] == "oracle"]["n"]) == [4, 4, 4]


def test_a_day_without_runs_exports_only_what_exists(tmp_path: Path):
    data = DataPaths(tmp_path)
    _day(tmp_path, DAYS[0], 100.0)
    shutil.rmtree(tmp_path / "runs")
    exported = export_day(data, DAYS[0])
    assert set(exported.rows) == {"gold", "served"}
    assert not (store_root(data) / "verdicts").exists()


def test_every_file_carries_date_as_a_date_column_read_by_pandas_and_pyarrow(data: DataPaths):
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    rebuild(data)
    root = store_root(data)
    for table in ("gold", "served", "verdicts"):
        path = partition_path(root, table, DAYS[1])
        assert path.parent.name == "2026-03-03"  # not a hive key: the date lives in the file
        schema = pq.read_schema(path)
        assert schema.field("date").type == pa.date32()
        frame = pd.read_parquet(path)
        assert set(frame["date"]) == {DAYS[1]}
        # The whole table as one directory, with the readers' default (hive) discovery.
        whole = pq.read_table(root / table)
        assert whole.schema.field("date").type == pa.date32()
        assert sorted(set(whole.column("date").to_pylist())) == DAYS
        everything = pd.read_parquet(root / table, columns=["date", "qid"], filters=[("date", "=", DAYS[2])])
        assert set(everything["date"]) == {DAYS[2]} and len(everything) == len(pd.read_parquet(
            partition_path(root, table, DAYS[2])))
        # pandas reads the directory's dates as dates (no longer a category of strings)
        dates = pd.read_parquet(root / table)["date"]
        assert not isinstance(dates.dtype, pd.CategoricalDtype)
        assert {type(d) for d in dates} == {dt.date}


def test_an_export_removes_the_hive_partition_an_older_release_wrote(data: DataPaths):
    import pyarrow.parquet as pq

    rebuild(data)
    root = store_root(data)
    legacy = root / "gold" / "date=2026-03-03" / "part-0.parquet"
    legacy.parent.mkdir(parents=True)
    shutil.copy(partition_path(root, "gold", DAYS[0]), legacy)
    export_day(data, DAYS[1])
    assert not legacy.parent.exists()
    assert pq.read_table(root / "gold").num_rows == 15
