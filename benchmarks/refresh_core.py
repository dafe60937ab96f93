"""Benchmark of the daily refresh core: execute N gold programs, then write the gold snapshot.

    python benchmarks/refresh_core.py [--programs 10000] [--entities 500] [--call-cost-ms 1.5]

Workload: N synthetic programs of fourteen shapes over a universe of A-share entities (default
500), cycling shape fastest so that any N exercises every shape:

  latest    daily over 10 sessions, the latest record's field
  snapshot  daily over 10 sessions, the record k sessions back
  mean20    daily over 20 sessions, mean of a field
  agg60     daily over 60 sessions, max/min/std/sum/pct_change/mean of a field
  match     index_weight of the entity's index on a session, the record whose con_code is the entity
            (an index has at most 50 members: more entities make more indices, see INDEX_MEMBERS)
  dag       daily over 20 sessions -> trade date of the highest close -> moneyflow on that date
  combine   daily over 10 sessions for the entity and for a peer, difference/ratio of a field

and four of the multi-step question families (construction/families/):

  growth    income over 800 days, the latest period's field against the same period a year
            earlier (`years_back`, pct_difference)
  resolve   index_weight of the entity's index -> its heaviest constituent (argmax across the
            constituents of the latest rebalance) -> that stock's daily field
  adjusted  daily and adj_factor over 60 sessions, a price times the factor (`times`),
            pct_change: the split- and dividend-adjusted return
  fx        daily over 10 sessions -> fx_daily on the latest session -> a field times USD/CNH
            divided by USD/HKD (a combine chain)

and three of the T3 investigations (issue 29):

  drawdown  daily and adj_factor over 60 (or 20) sessions: the maximum drawdown of the adjusted
            closes, or the day of its peak or trough (the agg60/mean20 and adjusted calls)
  screen    index_weight of the entity's index on the latest session (the resolve call) and the
            cross-section of every entity's daily bar on that session (one call a day): the
            constituent that fell or rose most, traded most, or how many closed up
  pick      the 10-, 20- or 60-session returns of the entity and two peers: which ranks first

Many programs share calls (the same daily window serves several shapes), as a real pool does.
The tools are served in memory by a deterministic market with Tushare-like records (newest
first, pre_close = previous close, change/pct_chg derived), and every call costs
`--call-cost-ms` of asyncio.sleep on top of building its records, like a fast local service.

Reported numbers:

- wall s: time of `execute_programs` plus the snapshot write (render, hash, atomic write).
- programs/s: N / wall.
- unique calls per program: distinct (tool, arguments) executed / N.
- outside-tool share: 1 - busy / wall, where busy is the measure of the union of all tool-call
  intervals (time during which at least one tool call was in flight, measured by the client
  from entering to leaving `call_tool`). It is the share of the wall time during which no tool
  was working for the pipeline: start-up, and stretches where every program was resolving
  arguments or extracting. Caveat: a call counts as in flight until the event loop resumes it,
  so when the loop is busy the measured call latency exceeds its cost and busy is an upper
  bound of real tool work; "mean call latency" below shows by how much.
- nominal tool-bound s: unique calls x call cost / max_concurrency, the wall time of a run whose
  own work were free. Far below the wall time means the run is CPU-bound in Python (argument
  resolution, extraction, record building by the fake service), not waiting for tools.
- peak RSS MiB: ru_maxrss of this process (includes the interpreter and imports, the N
  questions built before the clock starts, and the in-memory market, whose cache of series is
  bounded like a service's would be: see SyntheticMarket).
- market series built: how many instruments' bars the market built; above the number of
  instruments when its LRU had to rebuild some (each rebuild costs CPU inside the run).

Targets (scaled to N, matching 10,000 programs in < 10 s): programs/s >= 1000, outside-tool
share < 50 %, peak RSS < 500 MiB, unique calls per program <= 0.35. The exit code is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import functools
import hashlib
import resource
import sys
import tempfile
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from livesearch_pipeline.core.calendars import session_dates, sessions_between
from livesearch_pipeline.core.client import ToolCallError, ToolClient
from livesearch_pipeline.core.executor import ExecutionStats, ExecutorConfig, execute_programs
from livesearch_pipeline.core.models import (
    Call,
    Combine,
    DateSpec,
    Extractor,
    Format,
    GoldAnswer,
    MatchRule,
    Program,
    Provenance,
    Question,
    Membership,
    Pick,
    RecordJoin,
    Selection,
    ValueRef,
)
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.core.snapshot import SnapshotStore

DEFAULT_AS_OF = dt.date(2026, 11, 27)
HISTORY_START = dt.date(2025, 1, 1)  # the synthetic market's first day: keeps its memory small
TARGET_PROGRAMS_PER_S = 1000.0
TARGET_OUTSIDE_SHARE = 0.5
TARGET_RSS_MIB = 500.0
TARGET_UNIQUE_CALLS_PER_PROGRAM = 0.35  # issue 20: the families' calls are shared, as a real pool's are
INDICES = tuple(f"{code:06d}.SH" for code in (300, 16, 905, 852, 688, 10, 903, 906, 907, 908))
# Members per index at most: a larger universe has more indices, not larger ones (real indices
# have a fixed size), so an index_weight response, and the `match` program scanning it, cost
# the same at every size. Up to 500 entities (10,000 programs) the ten indices above suffice.
INDEX_MEMBERS = 50
BARS_CACHE = 512  # instruments whose bars the market keeps (see SyntheticMarket)
SHAPES = ("latest", "snapshot", "mean20", "agg60", "match", "dag", "combine", "growth", "resolve", "adjusted", "fx",
          "drawdown", "screen", "pick")
FAMILY_SHAPES = frozenset({"dag", "combine", "growth", "resolve", "adjusted", "fx", "drawdown", "screen", "pick"})
VARIANTS = 6


# --------------------------------------------------------------------------- in-memory market


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:8], "big")


@functools.cache
def _sessions() -> tuple[dt.date, ...]:
    return session_dates("XSHG")


@functools.cache
def _session_index() -> dict[dt.date, int]:
    return {day: i for i, day in enumerate(_sessions())}


@functools.cache
def _history_offset() -> int:
    """Index of the first session on or after HISTORY_START."""
    return next(i for i, day in enumerate(_sessions()) if day >= HISTORY_START)


@functools.cache
def _session_keys() -> tuple[str, ...]:
    return tuple(day.strftime("%Y%m%d") for day in _sessions())


def _ymd(day: dt.date) -> str:
    return day.strftime("%Y%m%d")


def _parse_ymd(text: str, tool: str, name: str) -> dt.date:
    try:
        return dt.datetime.strptime(text, "%Y%m%d").date()
    except (TypeError, ValueError):
        raise ToolCallError(tool, f"{name}={text!r} is not a YYYYMMDD date") from None


def index_codes(n_entities: int) -> tuple[str, ...]:
    """The indices of a universe of `n_entities`: the ten of INDICES, then synthetic codes, so
    that no index has more than INDEX_MEMBERS members."""
    count = max(len(INDICES), -(-n_entities // INDEX_MEMBERS))
    return INDICES + tuple(f"{950000 + k:06d}.SH" for k in range(count - len(INDICES)))


class SyntheticMarket:
    """Deterministic daily bars, index weights and money flows for the benchmark universe.

    The bars of an instrument are built from its seed when first asked for and kept in a
    least-recently-used cache of `bars_cache` instruments (`bars_built` counts the builds). The
    market stands in for a data service, which runs in its own process in production and whose
    memory is not the pipeline's: caching every instrument's series for the whole batch (about
    54 KB each, 270 MiB at 5,000 instruments) would charge the pipeline's peak RSS with a
    service's working set. A rebuilt series is identical (same seed), so the bound changes
    memory and time only, never an answer; `bars_built` above the number of instruments shows
    what re-building cost (it stays equal to it while the executor runs programs grouped by
    their calls).
    """

    def __init__(self, entities: list[str], *, bars_cache: int = BARS_CACHE) -> None:
        if bars_cache < 1:
            raise ValueError(f"bars_cache must be >= 1, got {bars_cache}")
        self.entities = entities
        self.indices = index_codes(len(entities))
        self.index_of = {code: self.indices[i % len(self.indices)] for i, code in enumerate(entities)}
        self.members: dict[str, list[str]] = {index: [] for index in self.indices}
        for code in entities:
            self.members[self.index_of[code]].append(code)
        self._bars: OrderedDict[str, dict[str, np.ndarray]] = OrderedDict()
        self._bars_cache = bars_cache
        self.bars_built = 0

    def bars(self, code: str) -> dict[str, np.ndarray]:
        """Daily bars of `code` on every XSHG session from HISTORY_START (cached, see the class).

        Closes are a seeded random walk; pre_close is the previous close, change and pct_chg
        follow from them, high/low bracket open and close, amount = vol (lots) x close / 10.
        """
        cached = self._bars.get(code)
        if cached is not None:
            self._bars.move_to_end(code)
            return cached
        built = self._build_bars(code)
        self.bars_built += 1
        self._bars[code] = built
        if len(self._bars) > self._bars_cache:
            self._bars.popitem(last=False)
        return built

    @staticmethod
    def _build_bars(code: str) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(_seed("bars", code))
        n = len(_sessions()) - _history_offset()
        close = np.round(rng.uniform(5, 200) * np.exp(np.cumsum(rng.normal(0.0003, 0.018, n))), 2)
        pre_close = np.concatenate([close[:1], close[:-1]])
        open_ = np.round(pre_close * (1 + rng.normal(0, 0.006, n)), 2)
        wiggle = np.abs(rng.normal(0, 0.008, n))
        vol = np.round(rng.uniform(2e4, 9e5, n), 2)
        return {
            "open": open_,
            "high": np.round(np.maximum(open_, close) * (1 + wiggle), 2),
            "low": np.round(np.minimum(open_, close) * (1 - wiggle), 2),
            "close": close,
            "pre_close": pre_close,
            "change": np.round(close - pre_close, 2),
            "pct_chg": np.round((close - pre_close) / pre_close * 100, 4),
            "vol": vol,
            "amount": np.round(vol * close / 10, 3),  # lots of 100 shares, thousand CNY
        }

    def daily(self, args: dict[str, Any]) -> dict[str, Any]:
        code = args.get("ts_code")
        if code is None and "trade_date" in args:
            return self._cross_section(_parse_ymd(args["trade_date"], "daily", "trade_date"))
        if code not in self.index_of:
            raise ToolCallError("daily", f"unknown ts_code {code!r}")
        if "trade_date" in args:
            start = end = _parse_ymd(args["trade_date"], "daily", "trade_date")
        else:
            start = _parse_ymd(args.get("start_date"), "daily", "start_date")
            end = _parse_ymd(args.get("end_date"), "daily", "end_date")
        if start < HISTORY_START:
            raise ToolCallError("daily", f"no data before {HISTORY_START.isoformat()}")
        days = sessions_between("XSHG", start, end)
        if not days:
            return {"items": []}
        offset, index = _history_offset(), _session_index()
        lo, hi = index[days[0]] - offset, index[days[-1]] - offset + 1
        columns = {name: values[lo:hi].tolist()[::-1] for name, values in self.bars(code).items()}
        keys = _session_keys()[lo + offset : hi + offset][::-1]
        items = []
        for row, key in enumerate(keys):
            record: dict[str, Any] = {"ts_code": code, "trade_date": key}
            for name, values in columns.items():
                record[name] = values[row]
            items.append(record)
        return {"items": items}

    def _cross_section(self, day: dt.date) -> dict[str, Any]:
        """Every entity's bar of one session, by code (a trade_date query across the market). The
        series are read past the cache (a cached one is used, an uncached one is built and let go):
        one pass over the market must not evict the series every other program works on."""
        if day < HISTORY_START:
            raise ToolCallError("daily", f"no data before {HISTORY_START.isoformat()}")
        index = _session_index()
        if day not in index:
            return {"items": []}
        k = index[day] - _history_offset()
        items = []
        for code in sorted(self.entities):
            bars = self._bars.get(code)
            if bars is None:
                bars = self._build_bars(code)
                self.bars_built += 1
            items.append({"ts_code": code, "trade_date": _ymd(day),
                          **{name: values[k].item() for name, values in bars.items()}})
        return {"items": items}

    def index_weight(self, args: dict[str, Any]) -> dict[str, Any]:
        index_code = args.get("index_code")
        if index_code not in self.members:
            raise ToolCallError("index_weight", f"unknown index_code {index_code!r}")
        day = _parse_ymd(args.get("trade_date"), "index_weight", "trade_date")
        members = self.members[index_code]
        raw = np.random.default_rng(_seed("weight", index_code, _ymd(day))).uniform(0.2, 5.0, len(members))
        weights = np.round(raw / raw.sum() * 100, 4)
        return {"items": [
            {"index_code": index_code, "con_code": code, "trade_date": _ymd(day), "weight": float(w)}
            for code, w in zip(members, weights)
        ]}

    def moneyflow(self, args: dict[str, Any]) -> dict[str, Any]:
        code = args.get("ts_code")
        if code not in self.index_of:
            raise ToolCallError("moneyflow", f"unknown ts_code {code!r}")
        day = _parse_ymd(args.get("trade_date"), "moneyflow", "trade_date")
        rng = np.random.default_rng(_seed("flow", code, _ymd(day)))
        buys, sells = rng.uniform(1e3, 5e4, 3).round(2), rng.uniform(1e3, 5e4, 3).round(2)
        record = {"ts_code": code, "trade_date": _ymd(day)}
        for size, buy, sell in zip(("md", "lg", "elg"), buys, sells):
            record[f"buy_{size}_amount"], record[f"sell_{size}_amount"] = float(buy), float(sell)
        record["net_mf_amount"] = round(float(buys.sum() - sells.sum()), 2)
        record["net_mf_vol"] = round(record["net_mf_amount"] / 3.1, 2)
        return {"items": [record]}


    def adj_factor(self, args: dict[str, Any]) -> dict[str, Any]:
        """The cumulative adjustment factor: 1.0, then one seeded step on a seeded ex-date."""
        code = args.get("ts_code")
        if code not in self.index_of:
            raise ToolCallError("adj_factor", f"unknown ts_code {code!r}")
        start = _parse_ymd(args.get("start_date"), "adj_factor", "start_date")
        end = _parse_ymd(args.get("end_date"), "adj_factor", "end_date")
        rng = np.random.default_rng(_seed("adj", code))
        ex_index = int(rng.integers(_history_offset(), len(_sessions())))
        step = float(round(1 + rng.uniform(0.01, 0.5), 4))
        index = _session_index()
        items = [{"ts_code": code, "trade_date": _ymd(day), "adj_factor": step if index[day] >= ex_index else 1.0}
                 for day in sessions_between("XSHG", start, end)]
        return {"items": items[::-1]}

    def income(self, args: dict[str, Any]) -> dict[str, Any]:
        """Quarterly year-to-date statements announced within the window, newest period first."""
        code = args.get("ts_code")
        if code not in self.index_of:
            raise ToolCallError("income", f"unknown ts_code {code!r}")
        start = _parse_ymd(args.get("start_date"), "income", "start_date")
        end = _parse_ymd(args.get("end_date"), "income", "end_date")
        items = []
        for year in range(HISTORY_START.year - 1, end.year + 1):
            rng = np.random.default_rng(_seed("income", code, str(year)))
            base = rng.uniform(1e8, 5e9)
            for quarter, (month, day) in enumerate(((3, 31), (6, 30), (9, 30), (12, 31)), start=1):
                period_end = dt.date(year, month, day)
                announced = period_end + dt.timedelta(days=30 if quarter < 4 else 80)
                if not start <= announced <= end:
                    continue
                fields = {name: round(base * scale * quarter / 4, 2) for name, scale in
                          (("revenue", 1.0), ("oper_cost", 0.7), ("operate_profit", 0.15), ("total_profit", 0.14),
                           ("n_income", 0.11), ("n_income_attr_p", 0.1))}
                items.append({"ts_code": code, "ann_date": _ymd(announced), "end_date": _ymd(period_end), **fields})
        return {"items": sorted(items, key=lambda r: r["end_date"], reverse=True)}

    def fx_daily(self, args: dict[str, Any]) -> dict[str, Any]:
        day = _parse_ymd(args.get("trade_date"), "fx_daily", "trade_date")
        rng = np.random.default_rng(_seed("fx", _ymd(day)))
        return {"items": [
            {"ts_code": "USDCNH.FXCM", "trade_date": _ymd(day), "bid_close": float(round(7.1 + rng.normal(0, 0.02), 4))},
            {"ts_code": "USDHKD.FXCM", "trade_date": _ymd(day), "bid_close": float(round(7.8 + rng.normal(0, 0.002), 4))},
        ]}


class TimedMarketClient(ToolClient):
    """Serves the synthetic market with a fixed per-call cost; measures when calls are in flight."""

    def __init__(self, market: SyntheticMarket, call_cost_s: float) -> None:
        self._market = market
        self._tools = {"daily": market.daily, "index_weight": market.index_weight, "moneyflow": market.moneyflow,
                       "adj_factor": market.adj_factor, "income": market.income, "fx_daily": market.fx_daily}
        self._call_cost_s = call_cost_s
        self._in_flight = 0
        self._busy_since = 0.0
        self.busy_s = 0.0  # measure of the union of call intervals
        self.call_time_s = 0.0  # sum of call durations
        self.calls = 0

    @property
    def identity(self) -> str:
        return "benchmark-synthetic-market"

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        if self._in_flight == 0:
            self._busy_since = started
        self._in_flight += 1
        self.calls += 1
        try:
            await asyncio.sleep(self._call_cost_s)
            if name not in self._tools:
                raise ToolCallError(name, f"unknown tool {name!r}")
            return self._tools[name](arguments)
        finally:
            ended = time.perf_counter()
            self.call_time_s += ended - started
            self._in_flight -= 1
            if self._in_flight == 0:
                self.busy_s += ended - self._busy_since


# --------------------------------------------------------------------------- programs


def _session(n: int) -> DateSpec:
    return DateSpec(sessions_back=n, calendar="XSHG")


def _daily(call_id: str, code: str, window: int) -> Call:
    return Call(id=call_id, tool="daily", args={"ts_code": code},
                dates={"start_date": _session(window - 1), "end_date": _session(0)})


def _latest(call_id: str, field: str) -> ValueRef:
    return ValueRef(call=call_id, select=Selection(mode="latest", key="trade_date"), field=field)


def _number(decimals: int, unit: str | None = None, kind: str = "number") -> Format:
    return Format(kind=kind, decimals=decimals, unit=unit)


def build_program(shape: str, variant: int, code: str, market: SyntheticMarket) -> Program:
    """One program of `shape`; `variant` (0..5) picks the field, window anchor or operation."""
    day_key = Selection(mode="all", key="trade_date")
    if shape == "latest":
        field, fmt = [("close", _number(2, "CNY")), ("open", _number(2, "CNY")), ("high", _number(2, "CNY")),
                      ("low", _number(2, "CNY")), ("vol", _number(0, "lots")), ("amount", _number(1, "thousand CNY"))][variant]
        return Program(calls=[_daily("c1", code, 10)], extract=Extractor(**_latest("c1", field).model_dump(), format=fmt))
    if shape == "snapshot":
        anchor = Selection(mode="snapshot", key="trade_date", anchor=_session(1 + variant))
        return Program(calls=[_daily("c1", code, 10)],
                       extract=Extractor(call="c1", select=anchor, field="close", format=_number(2, "CNY")))
    if shape == "mean20":
        field = ("close", "vol", "amount", "high", "low", "pct_chg")[variant]
        return Program(calls=[_daily("c1", code, 20)],
                       extract=Extractor(call="c1", select=day_key, field=field, aggregate="mean", format=_number(2)))
    if shape == "agg60":
        field, aggregate = [("high", "max"), ("low", "min"), ("pct_chg", "std"), ("vol", "sum"),
                            ("close", "pct_change"), ("amount", "mean")][variant]
        fmt = _number(2, kind="percent") if aggregate == "pct_change" else _number(2)
        return Program(calls=[_daily("c1", code, 60)],
                       extract=Extractor(call="c1", select=day_key, field=field, aggregate=aggregate, format=fmt))
    if shape == "match":
        call = Call(id="c1", tool="index_weight", args={"index_code": market.index_of[code]},
                    dates={"trade_date": _session(variant)})
        pick = Selection(mode="match", key="con_code", value=code)
        return Program(calls=[call], extract=Extractor(call="c1", select=pick, field="weight", format=_number(4, "%")))
    if shape == "dag":
        peak_day = ValueRef(call="c1", select=day_key, field="close", aggregate="argmax")
        flow = Call(id="c2", tool="moneyflow", args={"ts_code": code}, refs={"trade_date": peak_day})
        field = ("net_mf_amount", "net_mf_vol", "buy_lg_amount", "sell_lg_amount", "buy_elg_amount", "sell_elg_amount")[variant]
        return Program(calls=[_daily("c1", code, 20), flow],
                       extract=Extractor(**_latest("c2", field).model_dump(), format=_number(2, "thousand CNY")))
    if shape == "combine":
        entities = market.entities
        peer = entities[(entities.index(code) + 1) % len(entities)]
        op, field = [("difference", "pct_chg"), ("ratio", "close"), ("ratio", "vol"),
                     ("pct_difference", "amount"), ("difference", "close"), ("difference", "high")][variant]
        return Program(calls=[_daily("c1", code, 10), _daily("c2", peer, 10)],
                       extract=Extractor(**_latest("c1", field).model_dump(),
                                         combine=Combine(op=op, other=_latest("c2", field)), format=_number(4)))
    if shape == "growth":
        field = ("revenue", "oper_cost", "operate_profit", "total_profit", "n_income", "n_income_attr_p")[variant]
        call = Call(id="c1", tool="income", args={"ts_code": code},
                    dates={"start_date": DateSpec(days_back=800), "end_date": DateSpec(days_back=0)})
        period = ValueRef(call="c1", select=Selection(mode="latest", key="end_date"), field=field)
        year_ago = ValueRef(call="c1", select=Selection(mode="latest", key="end_date", years_back=1), field=field)
        return Program(calls=[call], extract=Extractor(**period.model_dump(), format=_number(2, kind="percent"),
                                                        combine=Combine(op="pct_difference", other=year_ago)))
    if shape == "resolve":
        weights = Call(id="c1", tool="index_weight", args={"index_code": market.index_of[code]},
                       dates={"trade_date": _session(0)})
        top = ValueRef(call="c1", select=Selection(mode="latest", key="trade_date"), field="weight",
                       aggregate="argmax", arg_field="con_code")
        bars = Call(id="c2", tool="daily", refs={"ts_code": top},
                    dates={"start_date": _session(9), "end_date": _session(0)})
        field = ("close", "open", "high", "low", "vol", "amount")[variant]
        return Program(calls=[weights, bars], extract=Extractor(**_latest("c2", field).model_dump(), format=_number(2)))
    if shape == "adjusted":
        # The agg60 shape's window: its daily call is shared; the factor call is the family's own.
        field, window = (("close", 60), ("open", 60), ("high", 60), ("low", 60), ("pre_close", 60), ("close", 20))[variant]
        factor = Call(id="c2", tool="adj_factor", args={"ts_code": code},
                      dates={"start_date": _session(window - 1), "end_date": _session(0)})
        return Program(calls=[_daily("c1", code, window), factor],
                       extract=Extractor(call="c1", select=day_key, field=field, aggregate="pct_change",
                                         times=RecordJoin(call="c2", field="adj_factor"),
                                         format=_number(2, kind="percent")))
    if shape == "fx":
        field = ("close", "open", "high", "low", "amount", "change")[variant]
        rates = Call(id="c2", tool="fx_daily", refs={"trade_date": _latest("c1", "trade_date")})
        cnh = ValueRef(call="c2", select=Selection(mode="latest", key="trade_date", where={"ts_code": "USDCNH.FXCM"}),
                       field="bid_close")
        hkd = ValueRef(call="c2", select=Selection(mode="latest", key="trade_date", where={"ts_code": "USDHKD.FXCM"}),
                       field="bid_close")
        return Program(calls=[_daily("c1", code, 10), rates],
                       extract=Extractor(**_latest("c1", field).model_dump(), format=_number(4),
                                         combine=Combine(op="product", other=cnh, then=Combine(op="ratio", other=hkd))))
    if shape == "drawdown":
        aggregate, window = (("max_drawdown", 60), ("drawdown_peak", 60), ("drawdown_trough", 60),
                             ("max_drawdown", 20), ("drawdown_peak", 20), ("drawdown_trough", 20))[variant]
        factor = Call(id="c2", tool="adj_factor", args={"ts_code": code},
                      dates={"start_date": _session(window - 1), "end_date": _session(0)})
        fmt = (_number(2, kind="percent") if aggregate == "max_drawdown"
               else Format(kind="date", in_fmt="%Y%m%d", out_fmt="%Y-%m-%d"))
        return Program(calls=[_daily("c1", code, window), factor],
                       extract=Extractor(call="c1", select=day_key, field="close", aggregate=aggregate,
                                         times=RecordJoin(call="c2", field="adj_factor"), format=fmt))
    if shape == "screen":
        weights = Call(id="c1", tool="index_weight", args={"index_code": market.index_of[code]},
                       dates={"trade_date": _session(0)})
        section = Call(id="c2", tool="daily", dates={"trade_date": _session(0)})
        within = Membership(call="c1", select=Selection(mode="latest", key="trade_date"), field="con_code", key="ts_code")
        field, aggregate = [("pct_chg", "argmin"), ("pct_chg", "argmax"), ("amount", "argmax"), ("vol", "argmax"),
                            ("pct_chg", "count"), ("close", "argmin")][variant]
        above = {"pct_chg": 0.0} if aggregate == "count" else None
        select = Selection(mode="latest", key="trade_date", within=within, above=above)
        if aggregate == "count":
            ex = Extractor(call="c2", select=select, field=field, aggregate="count", format=Format(kind="integer"))
        else:
            ex = Extractor(call="c2", select=select, field=field, aggregate=aggregate, arg_field="ts_code",
                           format=Format(kind="text"))
        return Program(calls=[weights, section], extract=ex)
    if shape == "pick":
        entities = market.entities
        at = entities.index(code)
        trio = [code, entities[(at + 1) % len(entities)], entities[(at + 2) % len(entities)]]
        window, op = ((20, "argmax"), (20, "argmin"), (60, "argmax"), (60, "argmin"), (10, "argmax"), (10, "argmin"))[variant]
        others = [ValueRef(call=f"c{i}", select=day_key, field="close", aggregate="pct_change") for i in (2, 3)]
        return Program(calls=[_daily(f"c{i + 1}", c, window) for i, c in enumerate(trio)],
                       extract=Extractor(call="c1", select=day_key, field="close", aggregate="pct_change",
                                         format=Format(kind="text"), pick=Pick(op=op, others=others, labels=trio)))
    raise ValueError(f"unknown program shape {shape!r}; expected one of {SHAPES}")


def build_questions(n_programs: int, market: SyntheticMarket) -> list[Question]:
    """N questions; shape cycles fastest, then entity, then variant (all combinations distinct)."""
    n_entities = len(market.entities)
    capacity = len(SHAPES) * n_entities * VARIANTS
    if not 0 < n_programs <= capacity:
        raise ValueError(f"--programs must be in 1..{capacity} for {n_entities} entities, got {n_programs}")
    if n_entities % len(SHAPES) == 0:
        raise ValueError(f"--entities must not be a multiple of {len(SHAPES)} (shapes would align with entities)")
    rule = MatchRule(rule="approx", rel_tol=0.001)
    questions = []
    for i in range(n_programs):
        shape, code = SHAPES[i % len(SHAPES)], market.entities[(i // len(SHAPES)) % n_entities]
        program = build_program(shape, i // (len(SHAPES) * n_entities), code, market)
        questions.append(Question(
            qid=compute_qid(program, code), question=f"Benchmark question ({shape}) about {code}.",
            program=program, match=rule, refresh_class="daily", tier="T3" if shape in FAMILY_SHAPES else "T1",
            asset_class="cn_equity", entity=code, entity_name=f"Synthetic {code}", visibility=5,
            signature=f"sig-{shape}", provenance=Provenance(verbalizer="template", pool_version="benchmark"),
        ))
    duplicates = [q for q, k in Counter(q.qid for q in questions).items() if k > 1]
    if duplicates:
        raise ValueError(f"benchmark generated duplicate qids: {duplicates[:5]}")
    return questions


def synthetic_entities(count: int) -> list[str]:
    return [f"{600000 + i:06d}.SH" for i in range(count)]


# --------------------------------------------------------------------------- run


@dataclass(frozen=True)
class BenchmarkResult:
    programs: int
    answers: list[GoldAnswer]
    stats: ExecutionStats
    execute_s: float
    snapshot_s: float
    wall_s: float
    busy_s: float
    mean_call_latency_s: float
    call_cost_s: float
    cpu_s: float
    peak_rss_mib: float
    max_concurrency: int
    entities: int
    bars_built: int

    @property
    def programs_per_s(self) -> float:
        return self.programs / self.wall_s

    @property
    def outside_tool_share(self) -> float:
        return max(0.0, 1.0 - self.busy_s / self.wall_s)

    @property
    def nominal_tool_bound_s(self) -> float:
        return self.stats.unique_calls * self.call_cost_s / self.max_concurrency

    @property
    def unique_calls_per_program(self) -> float:
        return self.stats.unique_calls / self.programs

    def checks(self) -> list[tuple[str, bool]]:
        return [
            (f"programs/s >= {TARGET_PROGRAMS_PER_S:.0f} (10k programs < 10 s)", self.programs_per_s >= TARGET_PROGRAMS_PER_S),
            (f"outside-tool share < {TARGET_OUTSIDE_SHARE:.0%}", self.outside_tool_share < TARGET_OUTSIDE_SHARE),
            (f"peak RSS < {TARGET_RSS_MIB:.0f} MiB", self.peak_rss_mib < TARGET_RSS_MIB),
            (f"unique calls per program <= {TARGET_UNIQUE_CALLS_PER_PROGRAM}",
             self.unique_calls_per_program <= TARGET_UNIQUE_CALLS_PER_PROGRAM),
        ]


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def run_benchmark(
    n_programs: int, *, n_entities: int = 500, call_cost_s: float = 0.0015,
    as_of: dt.date = DEFAULT_AS_OF, config: ExecutorConfig = ExecutorConfig(), snapshot_root: Path | None = None,
) -> BenchmarkResult:
    market = SyntheticMarket(synthetic_entities(n_entities))
    questions = build_questions(n_programs, market)
    client = TimedMarketClient(market, call_cost_s)
    with tempfile.TemporaryDirectory(prefix="refresh_core_") as scratch:
        store = SnapshotStore(snapshot_root or Path(scratch))
        cpu_started, started = time.process_time(), time.perf_counter()
        answers, stats = asyncio.run(execute_programs(questions, as_of, client, config))
        executed = time.perf_counter()
        # The synthetic market answers as of `as_of` whatever the wall clock: a point-in-time
        # provider, so the manifest states a cut-off (the evening of `as_of`), not a vintage.
        store.write(as_of, answers, pool_version="benchmark", pool_sha256="0" * 64, data_service=client.identity,
                    code_version="benchmark", max_withdrawn_share=1.0,
                    cutoff=dt.datetime.combine(as_of, dt.time(22, 0), tzinfo=dt.timezone.utc))
        finished = time.perf_counter()
        cpu_s = time.process_time() - cpu_started
    return BenchmarkResult(
        programs=n_programs, answers=answers, stats=stats, execute_s=executed - started,
        snapshot_s=finished - executed, wall_s=finished - started, busy_s=client.busy_s,
        mean_call_latency_s=client.call_time_s / max(client.calls, 1), call_cost_s=call_cost_s, cpu_s=cpu_s,
        peak_rss_mib=_peak_rss_mib(), max_concurrency=config.max_concurrency, entities=n_entities,
        bars_built=market.bars_built,
    )


def report(result: BenchmarkResult) -> list[str]:
    stats = result.stats
    statuses = Counter(a.status for a in result.answers)
    lines = [
        f"programs                 {result.programs}",
        f"answers by status        ok={statuses['ok']} empty={statuses['empty']} error={statuses['error']}",
        f"wall s                   {result.wall_s:.3f} (execute {result.execute_s:.3f}, snapshot {result.snapshot_s:.3f})",
        f"programs/s               {result.programs_per_s:.0f}",
        f"tool calls               requested {stats.tool_calls_requested}, unique {stats.unique_calls}, "
        f"failed {stats.failed_calls}, retries {stats.retries}",
        f"unique calls per program {result.unique_calls_per_program:.3f}",
        f"outside-tool share       {result.outside_tool_share:.1%} (busy {result.busy_s:.3f} s of {result.wall_s:.3f} s)",
        f"mean call latency ms     {result.mean_call_latency_s * 1000:.1f} (cost {result.call_cost_s * 1000:.1f} ms)",
        f"nominal tool-bound s     {result.nominal_tool_bound_s:.3f} (max_concurrency {result.max_concurrency})",
        f"process CPU s            {result.cpu_s:.3f}",
        f"market series built      {result.bars_built} for {result.entities} instruments (LRU of {BARS_CACHE})",
        f"peak RSS MiB             {result.peak_rss_mib:.0f}",
    ]
    lines += [f"{'PASS' if ok else 'FAIL'}  {name}" for name, ok in result.checks()]
    return lines


def unanswered(answers: list[GoldAnswer]) -> tuple[list[GoldAnswer], list[GoldAnswer]]:
    """(ties, failures) among the answers that are not `ok`. The synthetic programs are not
    screened the way construction screens a pool: a ranking whose deciding value ties on the day
    (two sessions at the same close) answers `empty` "tie: ...", which the refresh withdraws for
    that day (issue 29); that is the core working, not failing. Anything else not `ok` fails."""
    ties = [a for a in answers if a.status == "empty" and (a.error or "").startswith("tie:")]
    tied = {a.qid for a in ties}
    return ties, [a for a in answers if a.status != "ok" and a.qid not in tied]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=10_000)
    parser.add_argument("--entities", type=int, default=500)
    parser.add_argument("--call-cost-ms", type=float, default=1.5)
    parser.add_argument("--max-concurrency", type=int, default=ExecutorConfig().max_concurrency)
    parser.add_argument("--as-of", type=dt.date.fromisoformat, default=DEFAULT_AS_OF)
    args = parser.parse_args(argv)
    result = run_benchmark(
        args.programs, n_entities=args.entities, call_cost_s=args.call_cost_ms / 1000, as_of=args.as_of,
        config=ExecutorConfig(max_concurrency=args.max_concurrency),
    )
    print("\n".join(report(result)))
    ties, bad = unanswered(result.answers)
    if ties:
        print(f"note  {len(ties)} program(s) tie on the day and are withdrawn, as the refresh withdraws a tie, "
              f"e.g. {ties[0].qid}: {ties[0].error}")
    if bad:
        print(f"FAIL  {len(bad)} program(s) did not answer, e.g. {bad[0].qid}: {bad[0].error}")
    return 0 if not bad and all(ok for _, ok in result.checks()) else 1


if __name__ == "__main__":
    sys.exit(main())
