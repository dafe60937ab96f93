"""When a `latest` answer is current: the record the close guard expects on a day (issue 20).

A daily question that asks for "the most recent trading day" must observe the last session of
its market; a question on a series published with a lag (a fund's NAV is announced the next
weekday, T+1) must observe the last session whose record is published by then. The lag is
declared once, in the tool metadata (`ToolMeta.publication_lag_sessions`), and enumeration
writes it into the program: the window of such a call ends that many sessions back. The
expected record is therefore the session the program's own window ends on, read from the
program alone, so the daily refresh (which withdraws a stale answer) and the construction's
dynamics replay (which drops a candidate withdrawn on any replayed day) judge it the same way.

Pure: calendars only.
"""

from __future__ import annotations

import datetime as dt

from livesearch_pipeline.core.calendars import sessions_back
from livesearch_pipeline.core.models import Program

DAY_KEY_FMT = "%Y%m%d"


def latest_guarded(program: Program) -> bool:
    """Whether the close guard checks this program: one `latest` record keyed by day, on a calendar."""
    extract = program.extract
    if extract.select.mode != "latest" or extract.select.key_fmt != DAY_KEY_FMT or extract.combine is not None:
        return False
    return any(s.calendar for c in program.calls for s in c.dates.values())


def expected_latest_period(program: Program, day: dt.date) -> str | None:
    """The time key (YYYYMMDD) a guarded `latest` answer must observe as of `day`, or None.

    The session on or before `day`, moved back by the publication lag the program's window ends
    with (the smallest `sessions_back` of its calendar date specs; 0 for a window ending on the
    last session).
    """
    if not latest_guarded(program):
        return None
    specs = [s for c in program.calls for s in c.dates.values() if s.calendar]
    calendar = specs[0].calendar
    assert calendar is not None
    lag = min((s.sessions_back for s in specs if s.calendar == calendar and s.sessions_back is not None), default=0)
    return sessions_back(calendar, day, lag).strftime(DAY_KEY_FMT)
