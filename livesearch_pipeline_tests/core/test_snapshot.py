"""Write-once gold snapshot store (DESIGN §4.6)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path

import pytest

from livesearch_pipeline.core import snapshot as snapshot_module
from livesearch_pipeline.core.models import GoldAnswer, MatchRule, SnapshotManifest
from livesearch_pipeline.core.snapshot import (
    SnapshotConflictError,
    SnapshotIntegrityError,
    SnapshotNotFoundError,
    SnapshotRejectedError,
    SnapshotStore,
    scoring_qids,
    sha256_file,
    write_atomic,
)

DAY = dt.date(2026, 3, 16)
CREATED = dt.datetime(2026, 3, 16, 18, 0, tzinfo=dt.timezone.utc)
APPROX = MatchRule(rule="approx", abs_tol=0.005, unit="CNY", decimals=2)
CUTOFF = dt.datetime(2026, 3, 16, 7, 0, tzinfo=dt.timezone.utc)
# sample_answers() withdraws 2 of 4 answers: a cap of one half freezes it.
PROVENANCE = dict(pool_version="pool-v1", pool_sha256="ab" * 32, data_service="synthetic-test",
                  code_version="abc123", max_withdrawn_share=0.5, cutoff=CUTOFF)


def gold(qid_suffix: int, *, date: dt.date = DAY, value: float = 1.0, args: dict | None = None,
         status: str = "ok") -> GoldAnswer:
    if status == "ok":
        return GoldAnswer(
            qid=f"ls-{qid_suffix:016x}", date=date, status="ok", answer=f"{value:.2f}", value=value,
            unit="CNY", observed_period="20260316",
            args=args if args is not None else {"c1": {"ts_code": "600001.SH", "trade_date": "20260316"}},
            match=APPROX,
        )
    return GoldAnswer(qid=f"ls-{qid_suffix:016x}", date=date, status=status, match=APPROX,
                      error="c1 daily: service unavailable" if status == "error" else None)


def sample_answers() -> list[GoldAnswer]:
    return [gold(3, value=0.1 + 0.2), gold(1, value=1789.5), gold(2, status="empty"), gold(4, status="error")]


def write(store: SnapshotStore, answers: list[GoldAnswer], date: dt.date = DAY, **overrides):
    params = {**PROVENANCE, "created_at": CREATED, **overrides}
    return store.write(date, answers, **params)


# --------------------------------------------------------------------------- rendering


def test_render_is_sorted_canonical_and_round_trips():
    answers = sample_answers()
    data = SnapshotStore.render(answers)
    lines = data.decode().splitlines()
    assert data.endswith(b"\n") and len(lines) == 4
    assert [json.loads(line)["qid"] for line in lines] == sorted(a.qid for a in answers)
    # Field order is the model's, so the bytes do not depend on how an answer was built.
    assert list(json.loads(lines[0])) == list(GoldAnswer.model_fields)
    reparsed = [GoldAnswer.model_validate_json(line) for line in lines]
    assert SnapshotStore.render(reparsed) == data
    assert SnapshotStore.render(list(reversed(answers))) == data
    assert "0.30000000000000004" in data.decode()  # shortest round-tripping float, not rounded


def test_render_ignores_args_insertion_order():
    forward = gold(1, args={"c1": {"a": "1", "b": "2"}, "c2": {"x": 1}})
    backward = gold(1, args={"c2": {"x": 1}, "c1": {"b": "2", "a": "1"}})
    assert SnapshotStore.render([forward]) == SnapshotStore.render([backward])


def test_render_refuses_duplicates_and_non_finite_values():
    with pytest.raises(ValueError, match="duplicate qids.*ls-0000000000000001"):
        SnapshotStore.render([gold(1), gold(1, value=2.0)])
    with pytest.raises(ValueError, match="ls-0000000000000005.*not a finite number"):
        SnapshotStore.render([gold(5, value=float("nan"))])


def test_render_of_no_answers_is_empty():
    assert SnapshotStore.render([]) == b""


# --------------------------------------------------------------------------- write-once


def test_write_creates_snapshot_and_manifest(tmp_path: Path):
    store = SnapshotStore(tmp_path / "gold")
    result = write(store, sample_answers())
    assert result.created
    assert result.path == tmp_path / "gold" / "gold_answers_2026-03-16.jsonl"
    assert result.manifest_path == tmp_path / "gold" / "gold_answers_2026-03-16.manifest.json"
    assert result.path.read_bytes() == SnapshotStore.render(sample_answers())
    manifest = SnapshotManifest.model_validate_json(result.manifest_path.read_bytes())
    assert manifest == result.manifest
    assert manifest.sha256 == hashlib.sha256(result.path.read_bytes()).hexdigest() == sha256_file(result.path)
    assert manifest.records == 4
    assert manifest.counts_by_status == {"ok": 2, "empty": 1, "error": 1}
    assert (manifest.pool_version, manifest.data_service, manifest.code_version) == (
        "pool-v1", "synthetic-test", "abc123")
    assert manifest.created_at == CREATED and manifest.file == result.path.name
    assert store.exists(DAY) and store.dates() == [DAY]
    assert store.read(DAY) == sorted(sample_answers(), key=lambda a: a.qid)
    assert not [p for p in result.path.parent.iterdir() if p.name.endswith(".tmp")]


def test_identical_rewrite_is_a_no_op(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    first = write(store, sample_answers())
    before = (first.path.stat().st_mtime_ns, first.manifest_path.read_bytes())
    later = CREATED + dt.timedelta(days=1)
    second = write(store, list(reversed(sample_answers())), created_at=later, code_version="other")
    assert not second.created
    assert second.manifest == first.manifest  # the existing manifest, not a new one
    assert (first.path.stat().st_mtime_ns, first.manifest_path.read_bytes()) == before


def test_different_rewrite_conflicts_and_changes_nothing(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    first = write(store, sample_answers())
    before = (first.path.read_bytes(), first.manifest_path.read_bytes())
    changed = [gold(1, value=1789.51), *sample_answers()[:1], *sample_answers()[2:]]
    new_sha = hashlib.sha256(SnapshotStore.render(changed)).hexdigest()
    with pytest.raises(SnapshotConflictError) as info:
        write(store, changed)
    message = str(info.value)
    assert "2026-03-16" in message and first.manifest.sha256 in message and new_sha in message
    assert (first.path.read_bytes(), first.manifest_path.read_bytes()) == before


def test_write_rejects_wrong_date_and_duplicates(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    with pytest.raises(ValueError, match="not dated 2026-03-16.*ls-0000000000000009"):
        write(store, [gold(1), gold(9, date=DAY - dt.timedelta(days=1))])
    with pytest.raises(ValueError, match="duplicate qids"):
        write(store, [gold(1), gold(1, value=3.0)])
    assert list(tmp_path.iterdir()) == []


def test_orphan_with_identical_bytes_is_completed(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    store.path_for(DAY).write_bytes(SnapshotStore.render(sample_answers()))  # crash before manifest
    assert not store.exists(DAY) and store.dates() == []
    with pytest.raises(SnapshotIntegrityError, match="no manifest"):
        store.verify(DAY)
    result = write(store, sample_answers())
    assert result.created and store.verify(DAY).sha256 == result.manifest.sha256


def test_orphan_with_different_bytes_conflicts(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    orphan = SnapshotStore.render([gold(1, value=5.0)])
    store.path_for(DAY).write_bytes(orphan)
    with pytest.raises(SnapshotConflictError, match="without a manifest") as info:
        write(store, sample_answers())
    assert hashlib.sha256(orphan).hexdigest() in str(info.value)
    assert store.path_for(DAY).read_bytes() == orphan
    assert not store.manifest_path_for(DAY).exists()


def test_crash_while_writing_leaves_no_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = SnapshotStore(tmp_path)

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(snapshot_module.os, "link", crash)
    with pytest.raises(OSError, match="disk full"):
        write(store, sample_answers())
    assert list(tmp_path.iterdir()) == []  # no target, no temporary file
    monkeypatch.undo()
    assert write(store, sample_answers()).created


# --------------------------------------------------------------------------- verification


@pytest.fixture
def written(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    return store, write(store, sample_answers())


def test_tampered_snapshot_is_detected(written):
    store, result = written
    data = result.path.read_bytes().replace(b"1789.5", b"1789.6")
    result.path.write_bytes(data)
    with pytest.raises(SnapshotIntegrityError) as info:
        store.read(DAY)
    assert str(result.path) in str(info.value)
    assert result.manifest.sha256 in str(info.value) and hashlib.sha256(data).hexdigest() in str(info.value)
    with pytest.raises(SnapshotIntegrityError):  # and a rewrite never papers over it
        write(store, sample_answers())


def test_truncated_snapshot_is_detected(written):
    store, result = written
    result.path.write_bytes(result.path.read_bytes()[:-20])
    with pytest.raises(SnapshotIntegrityError, match="modified or truncated"):
        store.verify(DAY)


def test_manifest_that_lies_about_content_is_detected(written):
    store, result = written
    # Consistent hash but a wrong record count: only the content checks can catch it.
    bad = result.manifest.model_copy(update={"records": 5})
    result.manifest_path.write_text(bad.model_dump_json())
    with pytest.raises(SnapshotIntegrityError, match="holds 4 records"):
        store.verify(DAY)


def test_lines_of_another_date_are_detected(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    other_day = DAY + dt.timedelta(days=1)
    data = SnapshotStore.render([gold(1, date=other_day)])
    store.path_for(DAY).write_bytes(data)
    manifest = SnapshotManifest(
        date=DAY, file=store.path_for(DAY).name, sha256=hashlib.sha256(data).hexdigest(), records=1,
        counts_by_status={"ok": 1, "empty": 0, "error": 0}, created_at=CREATED, **PROVENANCE)
    store.manifest_path_for(DAY).write_text(manifest.model_dump_json())
    with pytest.raises(SnapshotIntegrityError, match="is dated 2026-03-17, not 2026-03-16"):
        store.verify(DAY)


def test_malformed_or_missing_manifest(written):
    store, result = written
    result.manifest_path.write_text("{not json")
    with pytest.raises(SnapshotIntegrityError, match="not a valid snapshot manifest"):
        store.verify(DAY)
    result.manifest_path.unlink()
    with pytest.raises(SnapshotIntegrityError, match="no manifest"):
        store.read(DAY)
    result.path.unlink()
    with pytest.raises(SnapshotNotFoundError, match="no gold snapshot for 2026-03-16"):
        store.read(DAY)
    assert not store.exists(DAY) and store.dates() == []


def test_dates_lists_complete_snapshots_only(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    assert store.dates() == []
    for day in (DAY, DAY - dt.timedelta(days=3)):
        write(store, [gold(1, date=day)], date=day)
    (tmp_path / "gold_answers_2026-03-20.jsonl").write_bytes(b"")  # orphan
    (tmp_path / "notes.txt").write_text("unrelated")
    assert store.dates() == [DAY - dt.timedelta(days=3), DAY]


# --------------------------------------------------------------------------- helpers


def test_write_atomic_replaces_or_refuses(tmp_path: Path):
    target = tmp_path / "sub" / "file.bin"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    with pytest.raises(FileExistsError):
        write_atomic(target, b"three", exclusive=True)
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.bin"]
    assert sha256_file(target) == hashlib.sha256(b"two").hexdigest()


def test_write_atomic_keeps_old_file_when_write_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "file.bin"
    write_atomic(target, b"old")

    def failing_fsync(fd: int) -> None:
        raise OSError("fsync failed")

    monkeypatch.setattr(snapshot_module.os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="fsync failed"):
        write_atomic(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.bin"]
    assert os.listdir(tmp_path) == ["file.bin"]


# --------------------------------------------------------------------------- withdrawn questions


def test_manifest_withdraws_every_empty_or_error_answer(tmp_path):
    store = SnapshotStore(tmp_path)
    manifest = write(store, sample_answers()).manifest
    assert manifest.withdrawn == {gold(2).qid: "empty: the program ran and selected no record",
                                  gold(4).qid: "error: c1 daily: service unavailable"}
    assert manifest.pool_sha256 == "ab" * 32 and manifest.cutoff == CUTOFF and not manifest.late_backfill
    read_manifest, answers = store.read_verified(DAY)
    assert read_manifest == manifest and len(answers) == 4
    served = [gold(n).qid for n in (1, 2, 3, 4)]
    assert scoring_qids(served, manifest) == [gold(1).qid, gold(3).qid]


def test_a_day_above_the_withdrawn_cap_writes_nothing(tmp_path):
    store = SnapshotStore(tmp_path)
    with pytest.raises(SnapshotRejectedError, match="2 of 4 answers .* above the cap of 25.0%; nothing was frozen"):
        write(store, sample_answers(), max_withdrawn_share=0.25)
    assert list(tmp_path.iterdir()) == []


def test_read_verified_refuses_an_unwithdrawn_unusable_answer(tmp_path):
    store = SnapshotStore(tmp_path)
    write(store, sample_answers())
    manifest_path = store.manifest_path_for(DAY)
    document = json.loads(manifest_path.read_text())
    del document["withdrawn"][gold(4).qid]
    manifest_path.write_text(json.dumps(document))
    with pytest.raises(SnapshotIntegrityError, match=rf"not withdrawn: \['{gold(4).qid}'\]"):
        store.read_verified(DAY)


def test_read_verified_refuses_a_withdrawn_answered_question(tmp_path):
    store = SnapshotStore(tmp_path)
    write(store, sample_answers())
    manifest_path = store.manifest_path_for(DAY)
    document = json.loads(manifest_path.read_text())
    document["withdrawn"][gold(1).qid] = "empty: invented"
    manifest_path.write_text(json.dumps(document))
    with pytest.raises(SnapshotIntegrityError, match=rf"withdrawn although answered: \['{gold(1).qid}'\]"):
        store.read_verified(DAY)


def test_a_manifest_states_exactly_one_point_in_time(tmp_path):
    store = SnapshotStore(tmp_path)
    with pytest.raises(ValueError, match="exactly one of `cutoff`"):
        write(store, sample_answers(), cutoff=None)
    late = write(store, sample_answers(), cutoff=None, vintage=CREATED, late_backfill=True).manifest
    assert late.vintage == CREATED and late.late_backfill and late.cutoff is None
