from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from livesearch_pipeline.core.models import GoldAnswer
from livesearch_pipeline.evaluation.audits import (
    AuditError,
    longitudinal_audit,
    render_longitudinal_csv,
    render_stale_report,
    stale_gold_audit,
    write_longitudinal_audit,
)
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    CNY2,
    EXACT,
    case,
    qid,
    write_gold,
    write_served,
)

MON, TUE, WED = dt.date(2026, 3, 2), dt.date(2026, 3, 3), dt.date(2026, 3, 4)


def _day(root: Path, date: dt.date, daily_close: float, *, quarterly: int = 7, serve: bool = True) -> None:
    cases = [
        case(1, daily_close, f"{daily_close:.2f}", CNY2, unit="CNY", refresh_class="daily", date=date),
        case(2, daily_close + 1, f"{daily_close + 1:.2f}", CNY2, unit="CNY", refresh_class="daily", date=date),
        case(3, "Sector A", "Sector A", EXACT, refresh_class="static", date=date),
        case(4, quarterly, str(quarterly), EXACT, refresh_class="quarterly", date=date),
    ]
    write_gold(root, [c.gold for c in cases], date)
    if serve:
        write_served(root, cases, date)


def test_stale_gold_fails_daily_questions_and_never_static_ones(tmp_path: Path) -> None:
    _day(tmp_path, MON, 100.0)
    _day(tmp_path, TUE, 101.5)
    audit = stale_gold_audit(tmp_path / "gold", TUE)
    assert audit.previous_date == MON and audit.calendar_days_between == 1
    assert (audit.n_compared, audit.n_failed, audit.failure_rate) == (4, 2, 0.5)
    assert audit.by_refresh_class["daily"].failure_rate == 1.0
    assert audit.by_refresh_class["static"].failure_rate == 0.0
    assert audit.by_refresh_class["quarterly"].failure_rate == 0.0
    report = render_stale_report(audit)
    assert "daily" in report and "100.0%" in report and "static" in report


def test_stale_gold_uses_the_latest_earlier_snapshot(tmp_path: Path) -> None:
    _day(tmp_path, dt.date(2026, 2, 27), 90.0)
    _day(tmp_path, MON, 100.0, quarterly=8)
    _day(tmp_path, WED, 100.0, quarterly=8)
    audit = stale_gold_audit(tmp_path / "gold", WED)
    assert audit.previous_date == MON and audit.calendar_days_between == 2
    assert audit.n_failed == 0


def test_stale_gold_leaves_out_new_and_broken_questions(tmp_path: Path) -> None:
    _day(tmp_path, MON, 100.0)
    cases = [
        case(1, 101.0, "101.00", CNY2, unit="CNY", date=TUE),
        case(5, 3.0, "3.00", CNY2, unit="CNY", date=TUE),  # not in Monday's gold
    ]
    broken = case(6, 1.0, "1.00", CNY2, unit="CNY", date=TUE)
    write_gold(tmp_path, [c.gold for c in cases] + [
        GoldAnswer(qid=qid(6), date=TUE, status="empty", match=CNY2)
    ], TUE)
    write_served(tmp_path, [*cases, broken], TUE)
    audit = stale_gold_audit(tmp_path / "gold", TUE)
    assert (audit.n_compared, audit.n_failed) == (1, 1)
    assert audit.not_ok_or_absent_on_previous == 1
    assert audit.not_ok_on_date == 1


def test_stale_gold_without_previous_snapshot_fails(tmp_path: Path) -> None:
    _day(tmp_path, TUE, 100.0)
    with pytest.raises(AuditError, match="no gold snapshot before 2026-03-03"):
        stale_gold_audit(tmp_path / "gold", TUE)


def test_stale_gold_on_a_tampered_snapshot_fails(tmp_path: Path) -> None:
    _day(tmp_path, MON, 100.0)
    _day(tmp_path, TUE, 101.0)
    gold = tmp_path / "gold" / "gold_answers_2026-03-02.jsonl"
    gold.write_bytes(gold.read_bytes().replace(b"100.0", b"101.0"))
    with pytest.raises(AuditError, match="gold_answers_2026-03-02"):
        stale_gold_audit(tmp_path / "gold", TUE)


def test_stale_gold_needs_the_served_questions(tmp_path: Path) -> None:
    _day(tmp_path, MON, 100.0)
    _day(tmp_path, TUE, 101.0, serve=False)
    with pytest.raises(AuditError, match="served_questions_2026-03-03.jsonl does not exist"):
        stale_gold_audit(tmp_path / "gold", TUE)


def test_longitudinal_table_tracks_frozen_values(tmp_path: Path) -> None:
    _day(tmp_path, MON, 100.0)
    _day(tmp_path, TUE, 101.0)
    _day(tmp_path, WED, 101.0, quarterly=9)
    audit = longitudinal_audit(tmp_path / "gold", [qid(4), qid(1), qid(3), qid(77)], MON, WED)
    assert audit.dates == [MON, TUE, WED]
    assert audit.changes == {qid(1): 1, qid(3): 0, qid(4): 1, qid(77): 0}
    table = render_longitudinal_csv(audit).splitlines()
    assert table[0] == f"date,{qid(1)},{qid(3)},{qid(4)},{qid(77)}"
    assert table[1] == "2026-03-02,100.00,Sector A,7,<absent>"
    assert table[3] == "2026-03-04,101.00,Sector A,9,<absent>"
    json_path, csv_path = write_longitudinal_audit(audit, tmp_path / "audit")
    assert json_path.is_file() and csv_path.read_text(encoding="utf-8").splitlines() == table


def test_longitudinal_rejects_empty_ranges(tmp_path: Path) -> None:
    _day(tmp_path, MON, 100.0)
    with pytest.raises(AuditError, match="empty"):
        longitudinal_audit(tmp_path / "gold", [qid(1)], WED, MON)
    with pytest.raises(AuditError, match="no gold snapshot between"):
        longitudinal_audit(tmp_path / "gold", [qid(1)], TUE, WED)
