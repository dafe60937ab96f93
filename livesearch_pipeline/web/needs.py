"""How far back each entity's monthly quote history must reach for D's scoring set.

An exchange keeps its quote history; the web generates the months someone may need to read: the
last few for every entity (web/pages.py, RECENT_HISTORY_MONTHS) and, for an entity whose
questions read older sessions (the close on the ex-date of a dividend paid months ago, the return
since a report announced 75 sessions back), every month from the earliest such session on.

Derived from the programs, never from their family, as the evidence map is (web/evidence.py):
every call of a question to an entity's quote data set has concrete date arguments at D's clock
(`GoldAnswer.args`); the earliest date among them is the month the history must reach. D's gold
holds those arguments; when the web is built before the gold is frozen (the daily run builds
both at the refresh tick), the pool's programs are executed at D's clock the same way, which
gives the same arguments: the gold is a pure function of the pool, the seed and the clock. Only
the questions that may read before the recent months are executed (`may_reach_back`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Mapping, Sequence

from livesearch_pipeline.core.models import GoldAnswer, Question

# The quote data set of each asset class (its exchange's quote page and monthly history).
QUOTE_TOOLS = frozenset({"daily", "hk_daily", "us_daily", "index_daily", "fund_nav"})
_DATE_ARGS = ("start_date", "trade_date", "nav_date", "end_date")


def history_from(questions: Sequence[Question], answers: Sequence[GoldAnswer],
                 clock: dt.date | None = None) -> tuple[tuple[str, str], ...]:
    """(entity code, "YYYY-MM") of the earliest session any ok answer's quote call reads, per
    entity, sorted by code; with `clock`, only the entities whose earliest month lies before the
    recent months every entity has (web/pages.py, RECENT_HISTORY_MONTHS)."""
    by_qid: Mapping[str, Question] = {q.qid: q for q in questions}
    earliest: dict[str, str] = {}
    for answer in answers:
        question = by_qid.get(answer.qid)
        if answer.status != "ok" or question is None:
            continue
        for call in question.program.calls:
            if call.tool not in QUOTE_TOOLS:
                continue
            args = answer.args.get(call.id) or {}
            code = args.get("ts_code")
            dates = [str(args[name]) for name in _DATE_ARGS if isinstance(args.get(name), (str, int))]
            dates = [d for d in dates if len(d) == 8 and d.isdigit()]
            if not isinstance(code, str) or not dates:
                continue
            first = min(dates)
            month = f"{first[:4]}-{first[4:6]}"
            if month < earliest.get(code, "9999-99"):
                earliest[code] = month
    if clock is not None:
        earliest = {code: month for code, month in earliest.items() if month < _recent_month(clock)}
    return tuple(sorted(earliest.items()))


def _recent_month(clock: dt.date) -> str:
    from livesearch_pipeline.web.pages import RECENT_HISTORY_MONTHS
    from livesearch_pipeline.web.reader import month_start

    start = month_start(clock, RECENT_HISTORY_MONTHS - 1)
    return f"{start.year:04d}-{start.month:02d}"


# A quote call whose dates are all fixed this close to D reads only the recent months (40
# sessions are under three months even over the National Day week; the recent months span three
# whole months and more).
_NEAR_SESSIONS, _NEAR_DAYS = 40, 60


def may_reach_back(question: Question) -> bool:
    """Whether a question's quote calls may read sessions before the recent months: a quote call
    whose date arguments come from another call (a dividend's ex-date, a report's announcement)
    or reach further back than `_NEAR_SESSIONS` sessions / `_NEAR_DAYS` days. Only these need
    executing to know how far back the history must reach; the others cannot change it."""
    for call in question.program.calls:
        if call.tool not in QUOTE_TOOLS:
            continue
        if call.refs or any(name in call.args for name in _DATE_ARGS[:3]):
            return True
        for spec in call.dates.values():
            if spec.period is not None or (spec.sessions_back or 0) > _NEAR_SESSIONS or (spec.days_back or 0) > _NEAR_DAYS:
                return True
    return False


def history_from_files(pool_file: Path, gold_file: Path | None, clock: dt.date, seed: int) -> tuple[tuple[str, str], ...]:
    """`history_from` for the pool in `pool_file` at `clock`: from D's gold when `gold_file`
    exists, else from executing the pool's programs at `clock` on the embedded market."""
    from livesearch_pipeline.core.program import load_pool

    questions = load_pool(pool_file)
    if gold_file is not None and gold_file.is_file():
        from livesearch_pipeline.core.snapshot import SnapshotStore, snapshot_date

        day = snapshot_date(gold_file)
        if day == clock:
            return history_from(questions, SnapshotStore(gold_file.parent).read(day), clock)
    reaching = [q for q in questions if may_reach_back(q)]
    return history_from(reaching, _execute(reaching, clock, seed) if reaching else [], clock)


def _execute(questions: Sequence[Question], clock: dt.date, seed: int) -> list[GoldAnswer]:
    from livesearch_pipeline.core.executor import execute_programs
    from livesearch_pipeline.dataservice.point_in_time import EmbeddedPointInTime

    async def run() -> list[GoldAnswer]:
        async with EmbeddedPointInTime(seed)(clock) as client:
            answers, _ = await execute_programs(questions, clock, client)
            return answers

    return asyncio.run(run())
