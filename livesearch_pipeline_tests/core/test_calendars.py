"""Trading calendars: fixed spans, the holiday supplement for years exchange-calendars does not
know, and the horizon check the refresh plan runs before executing anything."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from exchange_calendars import lunisolar_holidays

from livesearch_pipeline.core import calendars
from livesearch_pipeline.core.calendars import (
    CALENDAR_ENDS,
    CALENDARS,
    HORIZON_ENV,
    SUPPLEMENT_DIR,
    CalendarRangeError,
    HolidaySupplementError,
    build_calendar,
    ensure_within_horizon,
    get_calendar,
    is_session,
    library_last_day,
    load_supplement,
    session_dates,
    sessions_between,
)

D = dt.date
ROOT = Path(__file__).resolve().parents[2]


def _weekdays(start: dt.date, end: dt.date) -> set[dt.date]:
    days = {start + dt.timedelta(days=i) for i in range((end - start).days + 1)}
    return {d for d in days if d.weekday() < 5}


def _lunar(dates, year: int) -> dt.date:
    return next(ts.date() for ts in dates if ts.year == year)


# ------------------------------------------------------------------ fixed spans


def test_every_calendar_ends_on_its_fixed_end_not_on_the_wall_clock():
    for name in CALENDARS:
        cal = get_calendar(name)
        end = CALENDAR_ENDS[name]
        assert (end.month, end.day) == (12, 31)
        # The last session is the last one of the fixed end's December: the library's default
        # (today + 1 year) would end on another day of the year.
        assert cal.last_session.date() == max(d for d in session_dates(name) if d <= end)
        assert cal.last_session.date().year == end.year and cal.last_session.date().month == 12


def test_the_span_does_not_depend_on_the_wall_clock():
    """Built in a child process whose clock is a year later, the calendars are the same."""
    code = (
        "import datetime as dt, json, time_machine\n"
        "with time_machine.travel(dt.datetime(2027, 11, 20, 12, tzinfo=dt.timezone.utc), tick=False):\n"
        "    from livesearch_pipeline.core.calendars import CALENDARS, session_dates\n"
        "    print(json.dumps({c: [len(session_dates(c)), session_dates(c)[-1].isoformat()] for c in CALENDARS}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != HORIZON_ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=300)
    here = {c: [len(session_dates(c)), session_dates(c)[-1].isoformat()] for c in CALENDARS}
    assert json.loads(out.stdout.strip().splitlines()[-1]) == here


def test_ends_can_be_overridden_by_the_environment(monkeypatch):
    monkeypatch.setenv(HORIZON_ENV, "XSHG=2026-12-31, XNYS=2030-12-31")
    ends = calendars.configured_ends()
    assert ends == {"XSHG": D(2026, 12, 31), "XHKG": CALENDAR_ENDS["XHKG"], "XNYS": D(2030, 12, 31)}
    for bad, message in (("XSHG", "EXCHANGE=YYYY-12-31"), ("XTKS=2027-12-31", "EXCHANGE=YYYY-12-31"),
                         ("XSHG=2027-13-01", "XSHG=2027-13-01")):
        monkeypatch.setenv(HORIZON_ENV, bad)
        with pytest.raises(ValueError, match=message):
            calendars.configured_ends()


def test_an_end_that_is_not_a_year_end_is_refused(monkeypatch):
    monkeypatch.setenv(HORIZON_ENV, "XNYS=2027-06-30")
    calendars.calendar_end.cache_clear()
    try:
        with pytest.raises(ValueError, match="must be 31 December"):
            calendars.calendar_end("XNYS")
    finally:
        monkeypatch.delenv(HORIZON_ENV)
        calendars.calendar_end.cache_clear()


# ------------------------------------------------------------------ XSHG 2027 (supplement)


def test_the_library_does_not_know_xshg_2027_so_the_supplement_is_used():
    assert library_last_day("XSHG") < D(2027, 1, 1), "exchange-calendars now knows XSHG 2027: review the supplement"
    assert type(get_calendar("XSHG")).__name__.endswith("WithSupplement")
    assert library_last_day("XNYS") is None and library_last_day("XHKG") >= D(2027, 12, 31)


def test_xshg_2027_provisional_holidays_are_not_sessions():
    supplement = load_supplement("XSHG")
    year = supplement.years[2027]
    assert year.status == "provisional" and "全国年节及纪念日放假办法" in year.source
    for day in year.holidays:
        assert not is_session("XSHG", day), day
    assert is_session("XSHG", D(2027, 1, 4))  # the first session of 2027
    assert not is_session("XSHG", D(2027, 1, 1))
    assert sessions_between("XSHG", D(2027, 2, 1), D(2027, 2, 19)) == [
        D(2027, 2, 1), D(2027, 2, 2), D(2027, 2, 3), D(2027, 2, 4), D(2027, 2, 15), D(2027, 2, 16),
        D(2027, 2, 17), D(2027, 2, 18), D(2027, 2, 19),
    ]
    # Make-up working weekend days are not sessions either.
    assert not any(d.weekday() >= 5 for d in sessions_between("XSHG", D(2027, 1, 1), D(2027, 12, 31)))
    sessions_2027 = sessions_between("XSHG", D(2027, 1, 1), D(2027, 12, 31))
    assert len(sessions_2027) == len(_weekdays(D(2027, 1, 1), D(2027, 12, 31))) - len(year.holidays)


def test_xshg_2027_follows_the_statutory_rules_and_the_lunar_dates():
    """Recompute 2027 from the 2024 rules and exchange-calendars' lunar tables: the holiday
    periods (New Year 1-3 Jan, Spring Festival 8 days from New Year's Eve, Qingming, Labour Day
    5 days, Dragon Boat, Mid-Autumn, National Day 7 days), closed on their weekdays."""
    new_year_eve = _lunar(lunisolar_holidays.chinese_lunar_new_year_dates, 2027) - dt.timedelta(days=1)
    qingming = _lunar(lunisolar_holidays.qingming_festival_dates, 2027)
    dragon_boat = _lunar(lunisolar_holidays.dragon_boat_festival_dates, 2027)
    mid_autumn = _lunar(lunisolar_holidays.mid_autumn_festival_dates, 2027)
    assert (new_year_eve, qingming, dragon_boat, mid_autumn) == (D(2027, 2, 5), D(2027, 4, 5), D(2027, 6, 9), D(2027, 9, 15))
    periods = [
        (D(2027, 1, 1), D(2027, 1, 3)),
        (new_year_eve, new_year_eve + dt.timedelta(days=7)),
        (qingming - dt.timedelta(days=2), qingming),  # a Monday joins the weekend before it
        (D(2027, 5, 1), D(2027, 5, 5)),
        (dragon_boat, dragon_boat),  # mid-week: the day alone
        (mid_autumn, mid_autumn),
        (D(2027, 10, 1), D(2027, 10, 7)),
    ]
    expected = set().union(*(_weekdays(a, b) for a, b in periods))
    assert set(load_supplement("XSHG").years[2027].holidays) == expected


def test_beyond_the_known_years_a_date_is_refused_with_the_fix():
    ensure_within_horizon(D(2027, 12, 31))
    with pytest.raises(CalendarRangeError) as info:
        ensure_within_horizon(D(2028, 1, 3))
    message = str(info.value)
    assert "outside the XSHG calendar" in message
    assert "holiday_supplements/XSHG.yaml" in message and "upgrade exchange-calendars" in message
    with pytest.raises(CalendarRangeError, match="outside the XSHG calendar"):
        is_session("XSHG", D(2028, 3, 1))


def test_a_span_past_the_supplement_cannot_be_built(tmp_path):
    with pytest.raises(CalendarRangeError, match=r"has no year 2028.*add 2028 to .*XSHG.yaml"):
        build_calendar("XSHG", D(2028, 12, 31))
    # No supplement at all: the library's own horizon is the limit.
    with pytest.raises(CalendarRangeError, match="has no year 2027"):
        build_calendar("XSHG", D(2027, 12, 31), supplements=tmp_path)
    assert build_calendar("XSHG", D(2026, 12, 31), supplements=tmp_path).last_session.date() == D(2026, 12, 31)


def test_a_non_year_end_configured_horizon_names_the_end(monkeypatch):
    """A date inside a known year but after the configured end names the setting to raise."""
    code = (
        "import datetime as dt\n"
        "from livesearch_pipeline.core.calendars import ensure_within_horizon, CalendarRangeError\n"
        "try:\n"
        "    ensure_within_horizon(dt.date(2027, 1, 4))\n"
        "except CalendarRangeError as exc:\n"
        "    print(exc)\n"
    )
    env = {**os.environ, HORIZON_ENV: "XNYS=2026-12-31"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=300)
    assert "outside the XNYS calendar" in out.stdout and "raise CALENDAR_ENDS['XNYS']" in out.stdout


# ------------------------------------------------------------------ the library wins


def _write_supplement(directory: Path, years: dict[int, list[str]]) -> None:
    data = {
        "exchange": "XSHG",
        "years": {y: {"status": "provisional", "source": "test", "holidays": [{"date": D.fromisoformat(d)} for d in days]}
                  for y, days in years.items()},
    }
    (directory / "XSHG.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def test_the_library_wins_over_the_supplement_for_a_year_it_knows(tmp_path):
    # 2026 is known to exchange-calendars: the supplement's 2026 "holidays" must be ignored
    # (2026-06-01 and 2026-02-16 stay as the library has them), its 2027 ones applied.
    _write_supplement(tmp_path, {2026: ["2026-06-01", "2026-03-02"], 2027: ["2027-03-03"]})
    library = build_calendar("XSHG", D(2026, 12, 31), supplements=tmp_path)
    cal = build_calendar("XSHG", D(2027, 12, 31), supplements=tmp_path)
    for day in ("2026-06-01", "2026-03-02"):
        assert cal.is_session(day) and library.is_session(day)
    assert not cal.is_session("2026-02-16") and not library.is_session("2026-02-16")  # the library's Spring Festival
    assert not cal.is_session("2027-03-03") and cal.is_session("2027-03-04")
    assert cal.is_session("2027-02-08")  # the shipped file's Spring Festival is not used with this directory
    assert list(library.sessions) == [s for s in cal.sessions if s.year <= 2026]


# ------------------------------------------------------------------ the supplement file


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"status": "guess", "source": "x", "holidays": [{"date": D(2027, 1, 1)}]}, "status must be one of"),
        ({"status": "provisional", "source": "", "holidays": [{"date": D(2027, 1, 1)}]}, "a source"),
        ({"status": "provisional", "source": "x", "holidays": []}, "non-empty list"),
        ({"status": "provisional", "source": "x", "holidays": [{"date": D(2027, 1, 2)}]}, "weekend day"),
        ({"status": "provisional", "source": "x", "holidays": [{"date": D(2028, 1, 3)}]}, "is not in 2027"),
        ({"status": "provisional", "source": "x", "holidays": [{"date": D(2027, 1, 1)}, {"date": D(2027, 1, 1)}]}, "listed twice"),
        ({"status": "provisional", "source": "x", "holidays": ["2027-01-01"]}, "date: YYYY-MM-DD"),
    ],
)
def test_a_malformed_supplement_is_refused_naming_the_file(tmp_path, entry, message):
    (tmp_path / "XSHG.yaml").write_text(yaml.safe_dump({"exchange": "XSHG", "years": {2027: entry}}), encoding="utf-8")
    with pytest.raises(HolidaySupplementError, match=message) as info:
        load_supplement("XSHG", tmp_path)
    assert str(tmp_path / "XSHG.yaml") in str(info.value)


def test_the_shipped_supplements_are_valid_and_packaged():
    files = sorted(SUPPLEMENT_DIR.glob("*.yaml"))
    assert [f.stem for f in files] == ["XSHG"]
    for path in files:
        supplement = load_supplement(path.stem)
        assert supplement is not None and supplement.years
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = package_data["livesearch_pipeline.core"]
    core = ROOT / "livesearch_pipeline" / "core"
    assert all(any(path.match(str(core / p)) for p in patterns) for path in files)
