"""When a `latest` answer is current: the record the close guard expects on a day (issue 20).

A daily question that asks for "the most recent trading day" must observe the last session of
its market; a question on a series published with a lag (a fund's NAV is announced the next
weekday, T+1) must observe the last session whose record is published by then. The lag is
declared once, in the tool metadata (`ToolMeta.publication_lag_sessions`, see `publication_lags`),
never inferred from a program: a program whose window ends early because its data stopped
updating is stale, not lagged. Enumeration also ends a lagged tool's windows that many sessions
back, so a window of n records holds n published ones. The daily refresh (which withdraws a
stale answer) and the construction's dynamics replay (which drops a candidate withdrawn on any
replayed day) judge it with the same function.

Pure: calendars only.
"""

from __future__ import annotations

import datetime as dt
from typing import Mapping

from livesearch_pipeline.core.calendars import sessions_back
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.models import Program

DAY_KEY_FMT = "%Y%m%d"


def publication_lags(catalog: Catalog) -> dict[str, int]:
    """Tool name -> sessions between a record's date and its publication, for tools with a lag."""
    return {t.name: t.publication_lag_sessions for t in catalog.tools if t.publication_lag_sessions}


def latest_guarded(program: Program) -> bool:
    """Whether the close guard checks this program: one `latest` record keyed by day, on a calendar."""
    extract = program.extract
    if extract.select.mode != "latest" or extract.select.key_fmt != DAY_KEY_FMT or extract.combine is not None:
        return False
    return any(s.calendar for c in program.calls for s in c.dates.values())


def expected_latest_period(program: Program, day: dt.date, lags: Mapping[str, int]) -> str | None:
    """The time key (YYYYMMDD) a guarded `latest` answer must observe as of `day`, or None.

    The session on or before `day`, moved back by the publication lag of the tool the extractor
    reads (`lags`, from `publication_lags`; 0 for a tool without one).
    """
    if not latest_guarded(program):
        return None
    calendar = next(s.calendar for c in program.calls for s in c.dates.values() if s.calendar)
    assert calendar is not None
    tool = next(c.tool for c in program.calls if c.id == program.extract.call)
    return sessions_back(calendar, day, lags.get(tool, 0)).strftime(DAY_KEY_FMT)
