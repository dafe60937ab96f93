"""Issue 30, finding 21: snapshots and manifests are written with the process's umask, so an
auditor's account can read them, and stay write-once."""

from __future__ import annotations

import datetime as dt
import os
import stat
from pathlib import Path

import pytest

from livesearch_pipeline.core.models import GoldAnswer, MatchRule
from livesearch_pipeline.core.snapshot import SnapshotStore, process_umask, write_atomic

DAY = dt.date(2026, 11, 25)


@pytest.fixture
def umask():
    def use(mask: int) -> None:
        os.umask(mask)

    previous = os.umask(0o022)
    try:
        yield use
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_files_take_the_processs_umask(tmp_path, umask, mask, expected):
    umask(mask)
    assert process_umask() == mask
    write_atomic(tmp_path / "replaced.json", b"{}")
    write_atomic(tmp_path / "once.json", b"{}", exclusive=True)
    assert _mode(tmp_path / "replaced.json") == _mode(tmp_path / "once.json") == expected


def test_a_frozen_snapshot_is_readable_by_the_group_and_others_and_still_write_once(tmp_path, umask):
    umask(0o022)
    store = SnapshotStore(tmp_path / "gold")
    answer = GoldAnswer(qid="ls-0123456789abcdef", date=DAY, status="ok", answer="1.00", value=1.0,
                        match=MatchRule(rule="approx", abs_tol=0.005, decimals=2))
    written = store.write(DAY, [answer], pool_version="v1", pool_sha256="0" * 64, data_service="test",
                          code_version="test", max_withdrawn_share=0.05,
                          cutoff=dt.datetime(2026, 11, 25, 23, 59, 59, tzinfo=dt.timezone.utc))
    assert _mode(written.path) == _mode(written.manifest_path) == 0o644
    changed = answer.model_copy(update={"answer": "2.00", "value": 2.0})
    with pytest.raises(Exception, match="sha256"):
        store.write(DAY, [changed], pool_version="v1", pool_sha256="0" * 64, data_service="test",
                    code_version="test", max_withdrawn_share=0.05,
                    cutoff=dt.datetime(2026, 11, 25, 23, 59, 59, tzinfo=dt.timezone.utc))
    assert store.verify(DAY).sha256 == written.manifest.sha256
