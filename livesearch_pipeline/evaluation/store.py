"""The analytical store: every frozen gold snapshot, served set and verdict set as Parquet.

    <data>/analytics/gold/YYYY-MM-DD/part-0.parquet       one row per gold answer
    <data>/analytics/served/YYYY-MM-DD/part-0.parquet     one row per served question
    <data>/analytics/verdicts/YYYY-MM-DD/part-0.parquet   one row per (agent, qid) verdict

One directory per date, and `date` a date-typed column (Parquet DATE, date32) of every file, so
pandas, pyarrow, DuckDB and Hugging Face `datasets` read it directly with its type. The
directories are deliberately not hive-style (`date=D`): a `date` both in the files and in the
path is a type conflict for pyarrow's and pandas' directory readers (date32 against an inferred
dictionary string), and `datasets` drops a path-only key.
It is DERIVED from the JSONL files and never the source of truth (nor its own witness: `verify`
rebuilds each partition's bytes from the sources and compares, refuses a date without a source,
and re-scores every run's predictions against the gold, `rescore`): `export_day` rebuilds a date
from them at any time, and the bytes are a function of the JSONL alone (rows in a fixed order,
an explicit schema without pandas metadata, fixed writer settings), so a rebuild of an unchanged
day gives identical bytes. Each gold row carries the sha256 of the snapshot it came from
(`snapshot_sha256`, the manifest's): a reader compares it with the manifest (a small JSON file)
to know the partition is current without reading the snapshot. Each verdict row carries the
sha256 of its `verdicts.jsonl`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from livesearch_pipeline.core.models import GoldAnswer, MatchRule, ServedQuestion
from livesearch_pipeline.core.snapshot import SnapshotIntegrityError, SnapshotStore, write_atomic
from livesearch_pipeline.evaluation.inputs import load_served
from livesearch_pipeline.evaluation.outputs import VERDICTS_FILE, read_verdicts
from livesearch_pipeline.settings import DataPaths

STORE_DIR = "analytics"
PART_FILE = "part-0.parquet"
TABLES = ("gold", "served", "verdicts")

GOLD_SCHEMA = pa.schema([
    ("date", pa.date32()), ("qid", pa.string()), ("status", pa.string()), ("answer", pa.string()),
    # `value` is a number or a string in the JSONL: kept exactly as JSON, and as a float when numeric.
    ("value_json", pa.string()), ("value_num", pa.float64()), ("unit", pa.string()),
    ("observed_period", pa.string()), ("args_json", pa.string()), ("match_rule", pa.string()),
    ("match_json", pa.string()), ("error", pa.string()), ("snapshot_sha256", pa.string()),
])
SERVED_SCHEMA = pa.schema([
    ("date", pa.date32()), ("qid", pa.string()), ("question", pa.string()), ("question_zh", pa.string()), ("tier", pa.string()),
    ("asset_class", pa.string()), ("refresh_class", pa.string()), ("visibility", pa.int8()),
    ("entity", pa.string()), ("served_sha256", pa.string()),
])
VERDICT_SCHEMA = pa.schema([
    ("date", pa.date32()), ("agent", pa.string()), ("qid", pa.string()), ("correct", pa.bool_()), ("rule", pa.string()),
    ("judge", pa.string()), ("reason", pa.string()), ("error", pa.string()), ("verdicts_sha256", pa.string()),
])
SCHEMAS = {"gold": GOLD_SCHEMA, "served": SERVED_SCHEMA, "verdicts": VERDICT_SCHEMA}
# Every setting that shapes the bytes is fixed here; pyarrow's version is pinned in the lock file
# (the footer names it), so the same JSONL gives the same file on any machine with the lock.
WRITER_SETTINGS = dict(compression="zstd", compression_level=3, use_dictionary=True, write_statistics=True,
                       version="2.6", data_page_version="1.0", row_group_size=1 << 20, store_schema=False)


class StoreError(ValueError):
    """The Parquet store is missing a date, stale against its JSONL source, or unreadable."""


REBUILD_COMMAND = "python -m livesearch_pipeline.evaluation.store rebuild --data DIR"
# Per table, `<root>/<table>/_index.json`: for every date written, the partition's sha256 and row
# count and the sha256 of the JSONL sources it was derived from (written with the partition).
INDEX_FILE = "_index.json"


def _rebuild_advice(root: Path) -> str:
    return f"rebuild it: {REBUILD_COMMAND.replace('DIR', str(Path(root).parent))}"


def store_root(paths: DataPaths) -> Path:
    return paths.root / STORE_DIR


def partition_path(root: Path, table: str, day: dt.date) -> Path:
    if table not in SCHEMAS:
        raise ValueError(f"unknown table {table!r}; expected one of {', '.join(TABLES)}")
    return Path(root) / table / day.isoformat() / PART_FILE


def _legacy_partition_path(root: Path, table: str, day: dt.date) -> Path:
    """Where releases before the date column wrote D's partition (`date=D`, a hive key only)."""
    return Path(root) / table / f"date={day.isoformat()}" / PART_FILE


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def parquet_bytes(rows: Sequence[dict], schema: pa.Schema) -> bytes:
    table = pa.Table.from_pylist(list(rows), schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **WRITER_SETTINGS)
    return sink.getvalue().to_pybytes()


def gold_rows(answers: Iterable[GoldAnswer], snapshot_sha256: str) -> list[dict]:
    rows = []
    for a in sorted(answers, key=lambda a: a.qid):
        numeric = isinstance(a.value, (int, float)) and not isinstance(a.value, bool)
        rows.append({
            "date": a.date, "qid": a.qid, "status": a.status, "answer": a.answer,
            "value_json": None if a.value is None else json.dumps(a.value, ensure_ascii=False),
            "value_num": float(a.value) if numeric else None, "unit": a.unit,
            "observed_period": a.observed_period,
            "args_json": json.dumps(a.model_dump(mode="json")["args"], ensure_ascii=False, sort_keys=True),
            "match_rule": a.match.rule, "match_json": a.match.model_dump_json(exclude_none=True),
            "error": a.error, "snapshot_sha256": snapshot_sha256,
        })
    return rows


def gold_answer_from_row(day: dt.date, row: dict) -> GoldAnswer:
    """The GoldAnswer a gold row was derived from (validated like the JSONL line)."""
    return GoldAnswer(
        qid=row["qid"], date=day, status=row["status"], answer=row["answer"],
        value=None if row["value_json"] is None else json.loads(row["value_json"]), unit=row["unit"],
        observed_period=row["observed_period"], args=json.loads(row["args_json"]),
        match=MatchRule.model_validate_json(row["match_json"]), error=row["error"],
    )


def served_rows(served: Iterable[ServedQuestion], served_sha256: str) -> list[dict]:
    return [{**q.model_dump(mode="json", include=set(SERVED_SCHEMA.names) - {"served_sha256"}),
             "served_sha256": served_sha256} for q in sorted(served, key=lambda q: q.qid)]


def verdict_rows(paths: DataPaths, day: dt.date) -> list[dict]:
    rows = []
    day_dir = paths.runs / day.isoformat()
    for path in sorted(day_dir.glob(f"*/{VERDICTS_FILE}")) if day_dir.is_dir() else []:
        digest = _sha256(path)
        for v in sorted(read_verdicts(path), key=lambda v: v.qid):
            rows.append({"agent": path.parent.name, "qid": v.qid, "correct": v.correct, "rule": v.rule,
                         "judge": v.judge, "reason": v.reason, "error": v.error, "verdicts_sha256": digest})
    return rows


@dataclass(frozen=True)
class ExportedDay:
    day: dt.date
    rows: dict[str, int]  # table -> rows written (absent: no source for that table on that day)
    files: dict[str, Path]


def _day_sources(paths: DataPaths, day: dt.date) -> dict[str, tuple[list[dict], dict[str, str]]]:
    """{table: (rows, sources)} of D from D's verified snapshot, served file and verdict files: what
    `export_day` writes and `verify_store` expects. A table without a source for D is absent; a
    snapshot that does not verify raises."""
    tables: dict[str, tuple[list[dict], dict[str, str]]] = {}
    store = SnapshotStore(paths.gold)
    if store.exists(day):
        manifest, answers = store.read_verified(day)
        tables["gold"] = (gold_rows(answers, manifest.sha256), {store.path_for(day).name: manifest.sha256})
    served_file = paths.served_file(day)
    if served_file.is_file():
        served = load_served(served_file)
        tables["served"] = (served_rows(served, _sha256(served_file)), {served_file.name: _sha256(served_file)})
    verdicts = verdict_rows(paths, day)
    if verdicts:
        tables["verdicts"] = (verdicts, {row["agent"]: row["verdicts_sha256"] for row in verdicts})
    return tables


def export_day(paths: DataPaths, day: dt.date, root: Optional[Path] = None) -> ExportedDay:
    """(Re)write D's partitions from D's verified snapshot, served file and verdict files.

    A table whose source does not exist for D is left alone (gold of a day nobody refreshed);
    a snapshot that does not verify raises, so no Parquet is ever derived from bad bytes.
    """
    root = Path(root) if root is not None else store_root(paths)
    check_store_target(paths, root)
    written: dict[str, Path] = {}
    counts: dict[str, int] = {}
    for table, (rows, sources) in _day_sources(paths, day).items():
        written[table] = _write(root, table, day, rows, sources)
        counts[table] = len(rows)
    return ExportedDay(day=day, rows=counts, files=written)


def check_store_target(paths: DataPaths, root: Path) -> None:
    """StoreError unless the store root may be written: not inside the gold, served or pool folders,
    and neither it nor a table folder a symlink (`writers.check_writable`)."""
    from livesearch_pipeline.evaluation.writers import WriterTargetError, check_writable, protected_directories

    protected = protected_directories(paths=paths, analytics=False)
    try:
        check_writable(root, what="the analytical store", files=(), protected=protected)
        for table in TABLES:
            check_writable(Path(root) / table, what="the analytical store", files=(INDEX_FILE,), protected=protected)
    except WriterTargetError as exc:
        raise StoreError(str(exc)) from None


def _partition_bytes(table: str, day: dt.date, rows: Sequence[dict]) -> bytes:
    return parquet_bytes([{**row, "date": day} for row in rows], SCHEMAS[table])


def _write(root: Path, table: str, day: dt.date, rows: Sequence[dict], sources: dict[str, str]) -> Path:
    path = partition_path(root, table, day)
    if path.parent.is_symlink():
        raise StoreError(f"the analytical store: {path.parent} is a symlink; fix: remove the link and rebuild")
    data = _partition_bytes(table, day, rows)
    write_atomic(path, data)
    # A `date=D` file of an older release beside it would break every directory read (see above).
    legacy = _legacy_partition_path(root, table, day)
    if legacy.is_file():
        legacy.unlink()
        if not any(legacy.parent.iterdir()):
            legacy.parent.rmdir()
    _record_in_index(Path(root), table, day, {"rows": len(rows), "part_sha256": hashlib.sha256(data).hexdigest(),
                                              "sources": dict(sorted(sources.items()))})
    return path


# --------------------------------------------------------------------------- verification


def _index_path(root: Path, table: str) -> Path:
    return Path(root) / table / INDEX_FILE


def read_index(root: Path, table: str) -> dict[str, dict]:
    """{date: {rows, part_sha256, sources}} of `table`; StoreError when missing or unreadable."""
    path = _index_path(root, table)
    if not path.is_file():
        raise StoreError(f"the Parquet store {root} has no {table} index {path} (written by every export since it "
                         f"was introduced): its partitions cannot be verified; {_rebuild_advice(root)}")
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"the {table} index {path} is unreadable ({exc}); {_rebuild_advice(root)}") from None
    if not isinstance(index, dict):
        raise StoreError(f"the {table} index {path} is not a JSON object; {_rebuild_advice(root)}")
    return index


def _record_in_index(root: Path, table: str, day: dt.date, entry: dict) -> None:
    from livesearch_pipeline.core.locks import writer_lock

    path = _index_path(root, table)
    # Exports of different days may run at once (a backfill): the index is updated under a lock.
    with writer_lock(path.with_name(".index.lock"), f"the {table} index of {root}", wait_s=120):
        index = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        index[day.isoformat()] = entry
        write_atomic(path, (json.dumps(dict(sorted(index.items())), indent=1, sort_keys=True) + "\n").encode())


def check_partitions(root: Path, table: str, dates: Sequence[dt.date]) -> None:
    """StoreError naming the rebuild command unless every date's partition is the file its index
    records (sha256 and row count): a deleted, truncated or edited partition is never read."""
    index = read_index(root, table)
    problems = []
    for day in dates:
        entry, path = index.get(day.isoformat()), partition_path(root, table, day)
        if entry is None:
            problems.append(f"{day} (not in the index)")
        elif not path.is_file():
            problems.append(f"{day} (partition file missing)")
        elif _sha256(path) != entry.get("part_sha256"):
            problems.append(f"{day} (partition file differs from the one written: truncated or edited)")
    if problems:
        raise StoreError(f"the Parquet store {root} cannot be trusted for {table} {', '.join(problems[:5])}"
                         f"{' and more' if len(problems) > 5 else ''}; {_rebuild_advice(root)}")


def verify_store(paths: DataPaths, root: Optional[Path] = None, *, tables: Sequence[str] = TABLES,
                 dates: Optional[Sequence[dt.date]] = None) -> list[dt.date]:
    """Check the store against its sources, never against its own index alone; returns the dates verified.

    For every date with a source or in the store (or only `dates`), per table: the partition is
    the file its sources give now, byte for byte (the export is deterministic: each gold snapshot
    read through its verified manifest, the served file, each run's verdicts.jsonl), and the index
    records it; a date in the store without a source (fabricated, or its source removed) is an
    error. Every run's verdicts must be what its predictions score again against the gold
    (`rescore`; judge verdicts only from the LLM cache). StoreError naming every failing date
    (first few) and the fix otherwise."""
    root = Path(root) if root is not None else store_root(paths)
    indexes = {table: read_index(root, table) for table in tables}
    if dates is None:
        stored = {dt.date.fromisoformat(d) for index in indexes.values() for d in index if _date_dir(d)}
        stored |= {d for table in tables for d in stored_dates(root, table)}
        wanted = sorted(set(source_dates(paths)) | stored)
    else:
        wanted = sorted(set(dates))
    problems: list[str] = []
    for day in wanted:
        try:
            expected = _day_sources(paths, day)
        except (SnapshotIntegrityError, ValueError, OSError) as exc:
            problems.append(f"{day} (its sources cannot be read: {' '.join(str(exc).split())[:200]})")
            continue
        for table in tables:
            problems += _partition_problems(root, table, day, indexes[table].get(day.isoformat()), expected.get(table))
        if "verdicts" in tables:
            problems += run_problems(paths, day)
    if problems:
        raise StoreError(f"the Parquet store {root} does not match its sources: {'; '.join(problems[:5])}"
                         f"{f' and {len(problems) - 5} more' if len(problems) > 5 else ''}; {_rebuild_advice(root)}")
    return wanted


def _partition_problems(root: Path, table: str, day: dt.date, entry: dict | None,
                        expected: tuple[list[dict], dict[str, str]] | None) -> list[str]:
    path = partition_path(root, table, day)
    if expected is None:
        if entry is not None or path.is_file():
            return [f"{table} {day} (in the store but without a source: fabricated, or its source was removed)"]
        return []
    rows, sources = expected
    if entry is None:
        return [f"{table} {day} (no partition; its JSONL exists)"]
    if entry.get("rows") != len(rows):
        return [f"{table} {day} ({entry.get('rows')} rows, the JSONL has {len(rows)})"]
    if entry.get("sources") != dict(sorted(sources.items())):
        return [f"{table} {day} (derived from other sources than the JSONL now on disk)"]
    if not path.is_file():
        return [f"{table} {day} (partition file missing)"]
    want = hashlib.sha256(_partition_bytes(table, day, rows)).hexdigest()
    if _sha256(path) != want or entry.get("part_sha256") != want:
        return [f"{table} {day} (partition file differs from the one its sources give: edited)"]
    return []


def run_problems(paths: DataPaths, day: dt.date) -> list[str]:
    """Why D's runs' verdicts cannot be trusted: each run's summary must bind its verdicts and its
    predictions (sha256), and the verdicts must be what the predictions score again against D's
    gold (`rescore.rescored_differences`)."""
    from livesearch_pipeline.core.snapshot import sha256_file
    from livesearch_pipeline.evaluation.outputs import IncompleteEvaluationError, load_evaluation
    from livesearch_pipeline.evaluation.rescore import rescored_differences
    from livesearch_pipeline.infra.llm import LLMSettings

    problems = []
    day_dir = paths.runs / day.isoformat()
    for verdicts_path in sorted(day_dir.glob(f"*/{VERDICTS_FILE}")) if day_dir.is_dir() else []:
        run_dir = verdicts_path.parent
        where = f"run {day}/{run_dir.name}"
        try:
            summary, _ = load_evaluation(run_dir)
        except (IncompleteEvaluationError, ValueError) as exc:
            problems.append(f"{where} ({' '.join(str(exc).split())[:200]})")
            continue
        predictions = run_dir / "predictions.jsonl"
        actual = sha256_file(predictions) if predictions.is_file() else "missing"
        if actual != summary.predictions_sha256:
            problems.append(f"{where} (its predictions.jsonl is {actual[:12]}, its summary binds "
                            f"{str(summary.predictions_sha256)[:12]}: evaluate it again)")
            continue
        recorded = {v.qid: v.correct for v in read_verdicts(verdicts_path)}
        differing = rescored_differences(paths.served_file(day), SnapshotStore(paths.gold).path_for(day), predictions,
                                         recorded, judge_model=summary.judge_model, llm_cache=paths.llm_cache,
                                         api_base=LLMSettings.from_env().api_base)
        if differing:
            problems.append(f"{where} ({differing})")
    return problems


def source_dates(paths: DataPaths) -> list[dt.date]:
    """Every date with a snapshot, a served file or an agent run."""
    dates = set(SnapshotStore(paths.gold).dates())
    if paths.served.is_dir():
        dates |= {dt.date.fromisoformat(p.stem.removeprefix("served_questions_"))
                  for p in paths.served.glob("served_questions_*.jsonl")}
    if paths.runs.is_dir():
        dates |= {dt.date.fromisoformat(p.parent.parent.name) for p in paths.runs.glob(f"*/*/{VERDICTS_FILE}")}
    return sorted(dates)


def rebuild(paths: DataPaths, root: Optional[Path] = None) -> list[ExportedDay]:
    return [export_day(paths, day, root) for day in source_dates(paths)]


# --------------------------------------------------------------------------- reading


def stored_dates(root: Path, table: str) -> list[dt.date]:
    base = Path(root) / table
    if not base.is_dir():
        return []
    return sorted(day for p in base.glob(f"*/{PART_FILE}") if (day := _date_dir(p.parent.name)) is not None)


def _date_dir(name: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(name) if len(name) == 10 else None
    except ValueError:
        return None


def read_table(root: Path, table: str, *, dates: Optional[Sequence[dt.date]] = None,
               qids: Optional[Sequence[str]] = None, columns: Optional[Sequence[str]] = None) -> pa.Table:
    """Rows of `table` (with a `date` column), optionally only some dates and qids.

    Only the partitions of the wanted dates are opened (their date directories), and within a
    file the qid filter uses the row-group statistics.
    """
    if dates is None:
        # Every date the index records (a deleted partition is then missing, never silently skipped),
        # and any partition on disk it does not record.
        wanted = sorted({*(dt.date.fromisoformat(d) for d in read_index(root, table)), *stored_dates(root, table)})
    else:
        wanted = sorted(set(dates))
    missing = [d for d in wanted if not partition_path(root, table, d).is_file()]
    if missing:
        raise StoreError(f"the Parquet store {root} has no {table} partition for {', '.join(map(str, missing[:5]))}"
                         f"{' and more' if len(missing) > 5 else ''}; rebuild it: python -m livesearch_pipeline.evaluation.store rebuild --data DIR")
    check_partitions(root, table, wanted)
    files = [str(partition_path(root, table, d)) for d in wanted]
    dataset = pads.dataset(files, schema=SCHEMAS[table], format="parquet")
    expression = pads.field("qid").isin(sorted(set(qids))) if qids is not None else None
    try:
        return dataset.to_table(columns=list(columns) if columns is not None else None, filter=expression)
    except (OSError, pa.ArrowInvalid) as exc:
        raise StoreError(f"the Parquet store {root} cannot be read ({table}: {exc}); {_rebuild_advice(root)}") from None


def current_gold_dates(root: Path, gold_dir: Path, dates: Sequence[dt.date]) -> None:
    """Raise `StoreError` unless every date's gold partition was derived from the frozen snapshot.

    Reads one row group's `snapshot_sha256` per date and the manifest beside the snapshot; a date
    whose partition is missing or older than its snapshot names the rebuild command.
    """
    store = SnapshotStore(Path(gold_dir))
    stale = []
    for day in dates:
        path = partition_path(root, "gold", day)
        if not path.is_file():
            stale.append(f"{day} (no partition)")
            continue
        manifest = json.loads(store.manifest_path_for(day).read_text(encoding="utf-8"))
        try:
            parquet = pq.ParquetFile(path)
            # One row group holds a day (row_group_size is far above a day's rows): read one column of it.
            recorded = set(parquet.read_row_group(0, columns=["snapshot_sha256"]).column(0).to_pylist()) \
                if parquet.num_row_groups else set()
        except (OSError, pa.ArrowInvalid) as exc:
            stale.append(f"{day} (unreadable partition: {exc})")
            continue
        if not recorded and manifest["records"]:
            stale.append(f"{day} (empty partition, snapshot has {manifest['records']} records)")
        elif recorded and recorded != {manifest["sha256"]}:
            stale.append(f"{day} (derived from {sorted(recorded)[0][:12]}, snapshot is {manifest['sha256'][:12]})")
    if stale:
        raise StoreError(f"the Parquet store {root} is not current for {', '.join(stale[:5])}"
                         f"{' and more' if len(stale) > 5 else ''}; rebuild it: python -m livesearch_pipeline.evaluation.store rebuild --data DIR")
    # Current by its sha column; now the file itself must be the one written (rows removed, edits).
    check_partitions(root, "gold", list(dates))


def leaderboard_history(root: Path, *, agents: Optional[Sequence[str]] = None, paths: Optional[DataPaths] = None):
    """Accuracy of every agent on every date in the store (pandas DataFrame: date, agent, n, correct,
    accuracy), errors and undecided verdicts counted as not correct, as the leaderboard does.

    With `paths` (the data root the store was built from) the verdict partitions are first
    verified against the verdicts.jsonl files (`verify_store`): history is complete or an error."""
    if paths is not None:
        verify_store(paths, root, tables=("verdicts",))
    frame = read_table(root, "verdicts", columns=["date", "agent", "correct"]).to_pandas()
    if agents is not None:
        frame = frame[frame["agent"].isin(list(agents))]
    frame["correct"] = frame["correct"].fillna(False).astype(bool)
    out = frame.groupby(["date", "agent"], sort=True).agg(n=("correct", "size"), correct=("correct", "sum"))
    out["accuracy"] = out["correct"] / out["n"]
    return out.reset_index()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`python -m livesearch_pipeline.evaluation.store rebuild|verify [--data DIR]`: rebuild every date, or
    verify the store against its JSONL sources (exit 2 naming what differs)."""
    import argparse

    parser = argparse.ArgumentParser(description="Rebuild the Parquet store from the JSONL files.")
    parser.add_argument("command", choices=["rebuild", "verify"])
    parser.add_argument("--data", type=Path, help="data root (default: LIVESEARCH_DATA_DIR or ./data)")
    args = parser.parse_args(argv)
    paths = DataPaths(args.data.resolve()) if args.data else DataPaths.from_env()
    if args.command == "verify":
        try:
            verified = verify_store(paths)
        except StoreError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"the Parquet store {store_root(paths)} matches its JSONL sources on {len(verified)} date(s)")
        return 0
    try:
        days = rebuild(paths)
    except (StoreError, SnapshotIntegrityError, ValueError, OSError) as exc:
        print(f"error: {' '.join(str(exc).split())}; fix: repair the named source, then rebuild", file=sys.stderr)
        return 2
    print(f"rebuilt {len(days)} date(s) under {store_root(paths)}: "
          f"{sum(d.rows.get('gold', 0) for d in days)} gold, {sum(d.rows.get('served', 0) for d in days)} served, "
          f"{sum(d.rows.get('verdicts', 0) for d in days)} verdict rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
