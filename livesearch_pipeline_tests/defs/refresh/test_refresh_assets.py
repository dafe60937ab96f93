"""The daily refresh assets materialised in-process: lineage metadata, write-once, blocking checks.

Assets, checks and jobs are addressed by key and name through `livesearch_pipeline.definitions`
(never by importing their Python objects), rebound to test resources: the embedded service at a
fixed clock and a temporary data root holding a trimmed copy of the small real pool.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import dagster as dg
import pytest
import time_machine
from zoneinfo import ZoneInfo

from livesearch_pipeline.construction.pool import write_pool
from livesearch_pipeline.core.pool import read_manifest
from livesearch_pipeline.core.models import Call, DateSpec, Extractor, Format, MatchRule, Program, Question, Selection
from livesearch_pipeline.core.program import load_pool
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.core.snapshot import SnapshotIntegrityError, SnapshotStore, sha256_file
from livesearch_pipeline.defs.partitions import not_a_partition
from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.fixtures import write_small_pool

POOL_CLOCK = dt.date(2026, 11, 20)
SERVICE_CLOCK = "2026-11-27"
DAY = dt.date(2026, 11, 25)
GOLD = dg.AssetKey("gold_answers")
SERVED = dg.AssetKey("served_questions")
REFRESH_JOB = "daily_refresh"
GOLD_CHECKS_JOB = "gold_checks_only"
CHECK_NAMES = {"gold_manifest_verifies", "gold_covers_served", "gold_unanswered_share", "gold_latest_is_last_session"}
UNKNOWN_CODE = "999999.SZ"


# --------------------------------------------------------------------------- helpers (reused by the CLI tests)


def write_trimmed_pool(root: Path, per_group: int = 2) -> list[Question]:
    """The small real pool cut to `per_group` questions per (tool, selection mode): every shape the
    checks look at stays represented while a refresh takes a few seconds instead of ~15."""
    write_small_pool(root, POOL_CLOCK)
    path = DataPaths(root).pool / "questions.jsonl"
    groups: dict[tuple[str, str], list[Question]] = defaultdict(list)
    for question in sorted(load_pool(path), key=lambda q: q.qid):
        groups[(question.program.calls[0].tool, question.program.extract.select.mode)].append(question)
    kept = sorted((q for group in groups.values() for q in group[:per_group]), key=lambda q: q.qid)
    return rewrite_pool_file(root, kept)


def rewrite_pool_file(root: Path, questions: list[Question]) -> list[Question]:
    """Write `questions` as the pool the way construction does: a new version and manifest sha256
    (every executing path verifies the pool's bytes against its manifest)."""
    pool_dir = DataPaths(root).pool
    write_pool(pool_dir, questions, data_service=read_manifest(pool_dir).data_service)
    return load_pool(pool_dir / "questions.jsonl")


def rewrite_pool(root: Path, edit: Callable[[Question], Question | None]) -> list[Question]:
    """Apply `edit` to every pool question (None keeps it) and re-derive qids, as a rebuild would."""
    path = DataPaths(root).pool / "questions.jsonl"
    edited: list[Question] = []
    changed: list[Question] = []
    for question in load_pool(path):
        new = edit(question)
        if new is not None:
            new = new.model_copy(update={"qid": compute_qid(new.program, new.entity)})
            changed.append(new)
        edited.append(new or question)
    rewrite_pool_file(root, sorted(edited, key=lambda q: q.qid))
    return changed


def refresh_definitions(root: Path, *, clock: str = SERVICE_CLOCK, seed: int | None = None) -> dg.Definitions:
    """The project's definitions with the test's resources, plus a job that runs only gold's checks."""
    from livesearch_pipeline.definitions import defs

    # The four blocking checks; the freshness check of gold_answers is the freshness sensor's (ops).
    gold_checks = dg.define_asset_job(GOLD_CHECKS_JOB, selection=dg.AssetSelection.checks_for_assets(GOLD)
                                      - dg.AssetSelection.checks(dg.AssetCheckKey(GOLD, "gold_frozen_by_deadline")))
    return dg.Definitions(
        assets=defs.assets, asset_checks=defs.asset_checks, jobs=[*(defs.jobs or []), gold_checks],
        resources={"data_service": DataServiceResource(kind="embedded", clock=clock, seed=seed),
                   "storage": StorageResource(root=str(root)), "llm": LLMResource(model="")},
    )


def run_refresh(defs: dg.Definitions, day: dt.date, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    return defs.resolve_job_def(REFRESH_JOB).execute_in_process(
        partition_key=day.isoformat(), instance=instance, raise_on_error=False)


def run_gold_checks(defs: dg.Definitions, day: dt.date, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    # Dagster cannot infer a partitions definition for a checks-only selection; the partition tag
    # is what the UI's "execute checks" on one partition sets, and the checks read it back.
    return defs.resolve_job_def(GOLD_CHECKS_JOB).execute_in_process(
        instance=instance, raise_on_error=False, tags={"dagster/partition": day.isoformat()})


def check_evaluations(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.event_specific_data.check_name: e.event_specific_data
            for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}


def materialization_metadata(result: dg.ExecuteInProcessResult, key: dg.AssetKey) -> dict[str, object]:
    events = [e for e in result.get_asset_materialization_events() if e.asset_key == key]
    assert len(events) == 1, f"expected one materialisation of {key.to_user_string()}, got {len(events)}"
    return {name: value.value for name, value in events[0].materialization.metadata.items()}


def failure_text(result: dg.ExecuteInProcessResult) -> str:
    failures = [e.event_specific_data.error.to_string() for e in result.all_events
                if e.event_type_value == "STEP_FAILURE"]
    assert failures, "expected a failed step"
    return "\n".join(failures)


@dataclass(frozen=True)
class FileState:
    data: bytes
    mtime_ns: int


def file_states(*paths: Path) -> dict[Path, FileState]:
    return {p: FileState(p.read_bytes(), p.stat().st_mtime_ns) for p in paths}


# --------------------------------------------------------------------------- one frozen day, shared


@dataclass(frozen=True)
class FrozenDay:
    root: Path
    pool: list[Question]
    result: dg.ExecuteInProcessResult

    @property
    def store(self) -> SnapshotStore:
        return SnapshotStore(DataPaths(self.root).gold)

    def frozen_files(self) -> tuple[Path, Path, Path]:
        return self.store.path_for(DAY), self.store.manifest_path_for(DAY), DataPaths(self.root).served_file(DAY)

    def copy_to(self, target: Path) -> Path:
        # copytree keeps mtimes (copy2), so "unchanged" below means untouched by the run.
        return Path(shutil.copytree(self.root, target))


@pytest.fixture(scope="module")
def frozen_day(tmp_path_factory: pytest.TempPathFactory) -> FrozenDay:
    root = tmp_path_factory.mktemp("frozen-day")
    pool = write_trimmed_pool(root)
    result = run_refresh(refresh_definitions(root), DAY, dg.DagsterInstance.ephemeral())
    return FrozenDay(root=root, pool=pool, result=result)


# --------------------------------------------------------------------------- tests


@pytest.mark.slow
def test_materialising_a_partition_freezes_gold_with_lineage_metadata_and_passing_checks(frozen_day: FrozenDay):
    assert frozen_day.result.success
    snapshot, manifest_path, served_path = frozen_day.frozen_files()
    assert snapshot.is_file() and manifest_path.is_file() and served_path.is_file()

    manifest = frozen_day.store.verify(DAY)
    pool_version = read_manifest(DataPaths(frozen_day.root).pool).version
    gold = materialization_metadata(frozen_day.result, GOLD)
    assert gold["sha256"] == manifest.sha256 == sha256_file(snapshot)
    assert gold["created"] is True
    assert gold["date"] == DAY.isoformat()
    assert gold["pool_version"] == manifest.pool_version == pool_version
    assert gold["data_service"] == manifest.data_service
    # Point in time: the service ran with its clock at D, not at its own "now" (SERVICE_CLOCK).
    assert f"clock={DAY.isoformat()}" in str(gold["data_service"])
    assert gold["cutoff"] == manifest.cutoff.isoformat() == f"{DAY.isoformat()}T23:59:59-05:00"
    assert gold["late_backfill"] is False and manifest.vintage is None
    assert manifest.pool_sha256 == gold["pool_sha256"] == sha256_file(DataPaths(frozen_day.root).pool / "questions.jsonl")
    assert gold["withdrawn"] == len(manifest.withdrawn)
    assert set(manifest.withdrawn) == {a.qid for a in frozen_day.store.read(DAY) if a.status != "ok"}
    assert sum(gold["counts_by_status"].values()) == manifest.records == len(frozen_day.pool)
    assert gold["counts_by_status"] == {k: v for k, v in manifest.counts_by_status.items() if v}
    assert sum(gold["counts_by_tier"].values()) == len(frozen_day.pool)
    preview = str(gold["preview"])
    assert preview.startswith("| qid |") and frozen_day.pool[0].qid in preview

    answers = frozen_day.store.read(DAY)
    assert [a.qid for a in answers] == sorted(q.qid for q in frozen_day.pool)
    assert {a.date for a in answers} == {DAY}

    served = materialization_metadata(frozen_day.result, SERVED)
    assert served["questions"] == len(frozen_day.pool) and served["pool_version"] == pool_version
    served_records = [json.loads(line) for line in served_path.read_text(encoding="utf-8").splitlines()]
    assert [r["qid"] for r in served_records] == [a.qid for a in answers]
    assert not any({"answer", "value", "program"} & set(r) for r in served_records)

    checks = check_evaluations(frozen_day.result)
    assert set(checks) == CHECK_NAMES
    assert all(c.passed for c in checks.values()), {n: c.metadata for n, c in checks.items() if not c.passed}
    assert checks["gold_latest_is_last_session"].metadata["checked"].value > 0


@pytest.mark.slow
def test_identical_rematerialisation_is_a_no_op(frozen_day: FrozenDay, tmp_path: Path):
    root = frozen_day.copy_to(tmp_path / "data")
    store = SnapshotStore(DataPaths(root).gold)
    paths = (store.path_for(DAY), store.manifest_path_for(DAY), DataPaths(root).served_file(DAY))
    before = file_states(*paths)

    result = run_refresh(refresh_definitions(root), DAY, dg.DagsterInstance.ephemeral())

    assert result.success, failure_text(result)
    assert file_states(*paths) == before
    assert materialization_metadata(result, GOLD)["created"] is False
    assert materialization_metadata(result, GOLD)["sha256"] == store.verify(DAY).sha256
    assert materialization_metadata(result, SERVED)["created"] is False
    assert all(c.passed for c in check_evaluations(result).values())


@pytest.mark.slow
def test_conflicting_rematerialisation_fails_naming_both_hashes_and_keeps_the_snapshot(
        frozen_day: FrozenDay, tmp_path: Path):
    root = frozen_day.copy_to(tmp_path / "data")
    store = SnapshotStore(DataPaths(root).gold)
    paths = (store.path_for(DAY), store.manifest_path_for(DAY))
    before = file_states(*paths)
    frozen_sha = store.verify(DAY).sha256

    # Another seed is another market: every value differs (and its universe lacks some of the
    # pool's instruments, so the cap on withdrawn answers is lifted), so D would get new bytes.
    result = refresh_definitions(root, seed=7).resolve_job_def(REFRESH_JOB).execute_in_process(
        partition_key=DAY.isoformat(), instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
        run_config={"ops": {"gold_answers": {"config": {"max_withdrawn_share": 1.0}}}})

    assert not result.success
    message = failure_text(result)
    assert "SnapshotConflictError" in message
    hashes = set(re.findall(r"sha256 ([0-9a-f]{64})", message))
    assert frozen_sha in hashes and len(hashes) == 2, message
    assert file_states(*paths) == before
    assert not check_evaluations(result), "checks must not run on a refused materialisation"


@pytest.mark.slow
def test_tampered_snapshot_fails_verify_and_the_manifest_check(frozen_day: FrozenDay, tmp_path: Path):
    root = frozen_day.copy_to(tmp_path / "data")
    store = SnapshotStore(DataPaths(root).gold)
    snapshot = store.path_for(DAY)
    frozen_sha = store.verify(DAY).sha256
    lines = snapshot.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[0])
    record["answer"] = "tampered " + str(record["answer"])
    lines[0] = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    snapshot.write_text("".join(lines), encoding="utf-8")

    with pytest.raises(SnapshotIntegrityError, match=rf"{sha256_file(snapshot)} but its manifest records {frozen_sha}"):
        store.verify(DAY)

    result = run_gold_checks(refresh_definitions(root), DAY, dg.DagsterInstance.ephemeral())
    checks = check_evaluations(result)
    assert set(checks) == CHECK_NAMES
    # Every check fails on bytes that do not verify, naming why, instead of judging them.
    for check in checks.values():
        assert check.passed is False and check.blocking
        assert "modified or truncated" in check.metadata["error"].value
    assert not result.success


@pytest.mark.slow
def test_one_check_runs_alone_on_a_frozen_partition(frozen_day: FrozenDay, tmp_path: Path):
    """The four checks share one step, yet an auditor can run any one of them by itself."""
    root = frozen_day.copy_to(tmp_path / "data")
    only = dg.AssetCheckKey(GOLD, "gold_covers_served")
    definitions = refresh_definitions(root)
    job = dg.Definitions(
        assets=definitions.assets, asset_checks=definitions.asset_checks, resources=definitions.resources,
        jobs=[dg.define_asset_job("one_gold_check", selection=dg.AssetSelection.checks(only))],
    ).resolve_job_def("one_gold_check")

    result = job.execute_in_process(instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
                                    tags={"dagster/partition": DAY.isoformat()})

    assert result.success, failure_text(result)
    checks = check_evaluations(result)
    assert set(checks) == {"gold_covers_served"}
    assert checks["gold_covers_served"].passed and checks["gold_covers_served"].metadata["served"].value == len(
        frozen_day.pool)


@pytest.mark.slow
def test_served_and_gold_qid_mismatch_fails_the_coverage_check(frozen_day: FrozenDay, tmp_path: Path):
    root = frozen_day.copy_to(tmp_path / "data")
    served_path = DataPaths(root).served_file(DAY)
    records = [json.loads(line) for line in served_path.read_text(encoding="utf-8").splitlines()]
    dropped = records.pop(0)  # gold now holds a qid that was not served
    invented = dict(records[0], qid="ls-0000000000000000")  # and misses one that was
    served_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [invented, *records]),
                           encoding="utf-8")

    result = run_gold_checks(refresh_definitions(root), DAY, dg.DagsterInstance.ephemeral())

    checks = check_evaluations(result)
    coverage = checks["gold_covers_served"]
    assert coverage.passed is False
    assert coverage.metadata["missing"].value == 1 and coverage.metadata["first_missing"].value == invented["qid"]
    assert coverage.metadata["unknown"].value == 1 and coverage.metadata["first_unknown"].value == dropped["qid"]
    assert checks["gold_manifest_verifies"].passed and checks["gold_unanswered_share"].passed


def unknown_instrument(question: Question) -> Question | None:
    call = question.program.calls[0]
    if "ts_code" not in call.args or question.asset_class != "cn_equity":
        return None
    broken = call.model_copy(update={"args": {**call.args, "ts_code": UNKNOWN_CODE}})
    program = question.program.model_copy(update={"calls": [broken, *question.program.calls[1:]]})
    return question.model_copy(update={"program": program, "entity": UNKNOWN_CODE})


def rejected_files(root: Path) -> list[Path]:
    directory = DataPaths(root).rejected
    return sorted(directory.iterdir()) if directory.is_dir() else []


@pytest.mark.slow
def test_too_many_unanswered_programs_freeze_nothing_and_keep_the_rejected_answers(tmp_path: Path):
    """Validate, then freeze: the share is judged on the computed answers before any write."""
    write_trimmed_pool(tmp_path, per_group=1)
    broken = rewrite_pool(tmp_path, unknown_instrument)
    assert broken, "the trimmed pool holds A-share questions"

    result = run_refresh(refresh_definitions(tmp_path), DAY, dg.DagsterInstance.ephemeral())

    assert not result.success
    message = failure_text(result)
    assert f"gold {DAY} refused, nothing frozen" in message and "empty, stale or errors, above the cap of 5.0%" in message
    store = SnapshotStore(DataPaths(tmp_path).gold)
    assert not store.path_for(DAY).exists() and not store.manifest_path_for(DAY).exists()
    assert not check_evaluations(result), "no check judges a snapshot that was never frozen"
    answers_file, reason_file = rejected_files(tmp_path)
    assert answers_file.name.startswith(f"gold_answers_{DAY}.rejected-") and answers_file.suffix == ".jsonl"
    reason = json.loads(reason_file.read_text(encoding="utf-8"))
    assert reason["date"] == DAY.isoformat() and "above the cap" in reason["problems"][0]
    rejected = [json.loads(line) for line in answers_file.read_text(encoding="utf-8").splitlines()]
    assert {r["qid"] for r in rejected if r["status"] != "ok"} == {q.qid for q in broken}


@pytest.mark.slow
def test_an_outage_freezes_nothing_and_the_day_refreshes_after_recovery(tmp_path: Path):
    """A data service that is down gives a day of errors: refused, then the same day refreshes
    cleanly once the service is back, with no manual cleanup."""
    write_trimmed_pool(tmp_path, per_group=1)
    from livesearch_pipeline.definitions import defs

    down = dg.Definitions(
        assets=defs.assets, asset_checks=defs.asset_checks, jobs=defs.jobs,
        # Nothing listens on port 9 (discard) on loopback: every call fails to connect.
        resources={"data_service": DataServiceResource(kind="url", url="http://127.0.0.1:9/mcp"),
                   "storage": StorageResource(root=str(tmp_path)), "llm": LLMResource(model="")})
    instance = dg.DagsterInstance.ephemeral()
    outage = run_refresh(down, DAY, instance)

    assert not outage.success
    store = SnapshotStore(DataPaths(tmp_path).gold)
    assert not store.exists(DAY) and not store.path_for(DAY).exists()

    recovered = run_refresh(refresh_definitions(tmp_path), DAY, instance)

    assert recovered.success, failure_text(recovered)
    assert store.verify(DAY).counts_by_status["error"] == 0
    assert all(c.passed for c in check_evaluations(recovered).values())


@pytest.mark.slow
def test_a_few_empty_programs_are_withdrawn_from_the_day_and_listed_in_the_manifest(tmp_path: Path):
    pool = write_trimmed_pool(tmp_path, per_group=2)
    victim = next(q for q in pool if unknown_instrument(q) is not None)
    broken = rewrite_pool(tmp_path, lambda q: unknown_instrument(q) if q.qid == victim.qid else None)
    assert len(broken) == 1
    cap = 1.0 / len(pool) + 0.001  # exactly one withdrawn question is within the cap

    definitions = refresh_definitions(tmp_path)
    result = definitions.resolve_job_def(REFRESH_JOB).execute_in_process(
        partition_key=DAY.isoformat(), instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
        run_config={"ops": {"gold_answers": {"config": {"max_withdrawn_share": cap}}}})

    assert result.success, failure_text(result)
    manifest = SnapshotStore(DataPaths(tmp_path).gold).verify(DAY)
    assert list(manifest.withdrawn) == [broken[0].qid]
    assert manifest.withdrawn[broken[0].qid].startswith(("empty:", "error:"))
    assert manifest.max_withdrawn_share == cap
    gold = materialization_metadata(result, GOLD)
    assert gold["withdrawn"] == 1 and gold["scoring_set"] == len(pool) - 1
    assert all(c.passed for c in check_evaluations(result).values())


def day_of_the_most_shares(question: Question) -> Question | None:
    """The question re-made as "the day of the largest total share count over the last 5 sessions":
    a share count that did not move in the window ties on all five days (issue 28)."""
    call = question.program.calls[0]
    if call.tool != "daily" or "ts_code" not in call.args:
        return None
    factors = Call(id="c1", tool="daily_basic", args={"ts_code": call.args["ts_code"]},
                   dates={"start_date": DateSpec(sessions_back=4, calendar="XSHG", fmt="%Y%m%d"),
                          "end_date": DateSpec(sessions_back=0, calendar="XSHG", fmt="%Y%m%d")})
    extract = Extractor(call="c1", select=Selection(mode="all", key="trade_date"), field="total_share",
                        aggregate="argmax", format=Format(kind="date"))
    return question.model_copy(update={"program": Program(calls=[factors], extract=extract),
                                       "match": MatchRule(rule="exact")})


def test_a_ranking_that_ties_is_withdrawn_with_the_tie_in_the_manifest(tmp_path: Path):
    pool = write_trimmed_pool(tmp_path, per_group=2)
    victim = next(q for q in pool if day_of_the_most_shares(q) is not None)
    (tied,) = rewrite_pool(tmp_path, lambda q: day_of_the_most_shares(q) if q.qid == victim.qid else None)
    cap = 1.0 / len(pool) + 0.001

    result = refresh_definitions(tmp_path).resolve_job_def(REFRESH_JOB).execute_in_process(
        partition_key=DAY.isoformat(), instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
        run_config={"ops": {"gold_answers": {"config": {"max_withdrawn_share": cap}}}})

    assert result.success, failure_text(result)
    manifest = SnapshotStore(DataPaths(tmp_path).gold).verify(DAY)
    assert list(manifest.withdrawn) == [tied.qid]
    # The five sessions up to DAY (11-25), oldest first, all at the same share count.
    assert re.fullmatch(r"empty: tie: 20261119, 20261120, 20261123, 20261124 and 20261125 at [0-9.]+ "
                        r"\(call 'c1' path 'items' field 'total_share'\)",
                        manifest.withdrawn[tied.qid]), manifest.withdrawn[tied.qid]


@pytest.mark.slow
def test_latest_answer_off_the_last_session_refuses_the_day(tmp_path: Path):
    write_trimmed_pool(tmp_path, per_group=1)

    def one_session_stale(question: Question) -> Question | None:
        if question.program.extract.select.mode != "latest" or question.refresh_class != "daily":
            return None
        calls = []
        for call in question.program.calls:
            if not all(spec.sessions_back is not None for spec in call.dates.values()):
                return None
            dates = {name: spec.model_copy(update={"sessions_back": spec.sessions_back + 1})
                     for name, spec in call.dates.items()}
            calls.append(call.model_copy(update={"dates": dates}))
        return question.model_copy(update={"program": question.program.model_copy(update={"calls": calls})})

    stale = rewrite_pool(tmp_path, one_session_stale)
    assert stale, "the trimmed pool holds daily `latest` questions on a session calendar"

    result = run_refresh(refresh_definitions(tmp_path), DAY, dg.DagsterInstance.ephemeral())

    # Every daily `latest` answer is a session late, as from a market that stopped updating: each
    # is withdrawn as stale, which is far above the cap, so the day is refused.
    assert not result.success
    message = failure_text(result)
    assert "are empty, stale or errors, above the cap" in message
    assert "no record on the last session 20261125 (the latest observed is 20261124" in message
    assert not SnapshotStore(DataPaths(tmp_path).gold).path_for(DAY).exists()
    (answers_file, _) = rejected_files(tmp_path)
    rejected = {r["qid"]: r for r in map(json.loads, answers_file.read_text(encoding="utf-8").splitlines())}
    assert all(rejected[q.qid]["status"] == "empty" for q in stale)


@pytest.mark.slow
@pytest.mark.parametrize("later_clock", ["2026-12-02", "2027-11-26"], ids=["a week later", "a year later"])
def test_a_backfill_made_later_gives_the_bytes_of_the_day_itself(frozen_day: FrozenDay, tmp_path: Path,
                                                                 later_clock: str):
    """Point in time: the run on D (service clock D) and a backfill of D made when the service's
    "now" is a week or a year later freeze identical bytes, for every market of the pool."""
    on_the_day = tmp_path / "on-the-day"
    later = tmp_path / "later"
    for root in (on_the_day, later):
        shutil.copytree(DataPaths(frozen_day.root).pool, DataPaths(root).pool)
        shutil.copytree(DataPaths(frozen_day.root).construction, DataPaths(root).construction)
    day_run = run_refresh(refresh_definitions(on_the_day, clock=DAY.isoformat()), DAY, dg.DagsterInstance.ephemeral())
    later_run = run_refresh(refresh_definitions(later, clock=later_clock), DAY, dg.DagsterInstance.ephemeral())

    assert day_run.success, failure_text(day_run)
    assert later_run.success, failure_text(later_run)
    day_bytes = SnapshotStore(DataPaths(on_the_day).gold).path_for(DAY).read_bytes()
    assert day_bytes == SnapshotStore(DataPaths(later).gold).path_for(DAY).read_bytes()
    assert day_bytes == frozen_day.store.path_for(DAY).read_bytes()


@pytest.mark.slow
def test_check_results_carry_their_partition(frozen_day: FrozenDay):
    evaluations = [e for e in frozen_day.result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert evaluations and {e.event_specific_data.partition for e in evaluations} == {DAY.isoformat()}


@pytest.mark.slow
def test_a_partition_after_the_service_clock_is_refused_before_anything_is_frozen(tmp_path: Path):
    write_trimmed_pool(tmp_path, per_group=1)

    # A service clocked at the 23rd returns nothing later: the 25th's gold would be frozen stale.
    result = run_refresh(refresh_definitions(tmp_path, clock="2026-11-23"), DAY, dg.DagsterInstance.ephemeral())

    assert not result.success
    assert "after the data service's fixed clock 2026-11-23" in failure_text(result)
    assert not SnapshotStore(DataPaths(tmp_path).gold).path_for(DAY).exists()
    assert not check_evaluations(result)


@pytest.mark.slow
def test_the_daily_job_runs_past_new_year_2027_on_the_holiday_supplement(frozen_day: FrozenDay, tmp_path: Path):
    """exchange-calendars knows XSHG holidays only through 2026: 2027-01-04 (a Monday session)
    refreshes on the reviewed supplement, with the service's clock on that day."""
    first_session_2027 = dt.date(2027, 1, 4)
    for part in ("pool", "construction"):
        shutil.copytree(getattr(DataPaths(frozen_day.root), part), getattr(DataPaths(tmp_path), part))
    # The partition of 2027-01-04 exists once that day has begun in New York: travel there.
    # The trimmed pool has 14 questions: one suspended instrument is already 7%, so the cap is
    # raised for this small pool (the default pool's share is judged at 5%).
    with time_machine.travel(dt.datetime(2027, 1, 4, 19, 30, tzinfo=ZoneInfo("America/New_York")), tick=True):
        result = refresh_definitions(tmp_path, clock=first_session_2027.isoformat()).resolve_job_def(
            REFRESH_JOB).execute_in_process(
            partition_key=first_session_2027.isoformat(), instance=dg.DagsterInstance.ephemeral(),
            raise_on_error=False, run_config={"ops": {"gold_answers": {"config": {"max_withdrawn_share": 0.15}}}})

    assert result.success, failure_text(result)
    manifest = SnapshotStore(DataPaths(tmp_path).gold).verify(first_session_2027)
    assert manifest.counts_by_status["error"] == 0 and len(manifest.withdrawn) <= 2
    assert manifest.cutoff.isoformat() == "2027-01-04T23:59:59-05:00"
    checks = check_evaluations(result)
    assert checks["gold_latest_is_last_session"].passed
    assert checks["gold_latest_is_last_session"].metadata["checked"].value > 0


@pytest.mark.slow
def test_a_day_past_the_calendars_is_refused_before_anything_runs_naming_the_fix(tmp_path: Path):
    """A day past the pinned trading calendars is no partition (issue 42: the partitions end with
    the calendars): the job refuses it before any step runs, and the one line the command line
    prints names the fix."""
    write_trimmed_pool(tmp_path, per_group=1)
    beyond = dt.date(2028, 1, 3)
    problem = not_a_partition(beyond)
    assert problem is not None and "after the last daily partition" in problem and "extend them" in problem
    with time_machine.travel(dt.datetime(2028, 1, 3, 19, 30, tzinfo=ZoneInfo("America/New_York")), tick=True):
        with pytest.raises(dg.DagsterUnknownPartitionError, match="2028-01-03"):
            run_refresh(refresh_definitions(tmp_path, clock=beyond.isoformat()), beyond, dg.DagsterInstance.ephemeral())
    assert not DataPaths(tmp_path).served_file(beyond).exists()
    assert not DataPaths(tmp_path).gold.exists() or not SnapshotStore(DataPaths(tmp_path).gold).exists(beyond)
