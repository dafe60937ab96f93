"""Child process of test_prefix_stability: call every data tool of the embedded service over a
fixed set of entities and windows ending on or before PROBE_END, and write the results as JSON.

    python -m livesearch_pipeline_tests.dataservice.prefix_probe OUT.json [--wall-clock ISO-DATETIME]

The calendar span comes from LIVESEARCH_CALENDAR_ENDS (read when the calendars are built). With
--wall-clock the process runs with its wall clock moved there (time-machine patches the C-level
clock functions: date.today, datetime.now, time.time, pandas' Timestamp.now), before any module
of the project is imported, so nothing the service computes can see the real date.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any

PROBE_END = dt.date(2026, 11, 20)
SERVICE_CLOCK = PROBE_END
ENTITIES_PER_CLASS = 3
WINDOW_START = {"start": "20250601", "start_m": "202501", "start_q": "2025Q1"}
NO_ENTITY_WINDOW_START = "20261001"  # market-wide tools: a shorter window keeps pages small
MINUTE_WINDOW_START = "20261116"  # minute bars are served for at most 100 sessions per call
HISTORY_LIMIT = 120  # an entity's whole history (no dates): the newest records up to the clock
LONG_WINDOW = ("20150105", 100)  # market-wide tools: a decade, newest records first
POINT_DATES = ("20261120", "20261016")
PERIOD = "20260630"
REQUIRED_CHOICES = {"hs_type": "SH"}


def probe_calls(service: Any) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) for every data tool: per entity of its class (a few of each), its
    date windows (or point dates) ending on PROBE_END."""
    from livesearch_pipeline.dataservice.market.macro import FX_PAIRS

    universe = service.market.universe
    calls: list[tuple[str, dict[str, Any]]] = []
    for spec in service.specs:
        meta = spec.meta
        if meta.role != "data":
            continue
        roles = {d.name: (d.role, d.fmt) for d in meta.date_params}
        names = {p.name for p in spec.params}
        base: dict[str, Any] = {p.name: REQUIRED_CHOICES[p.name] for p in spec.params if p.required and p.name in REQUIRED_CHOICES}
        has_window = any(role in ("start", "end") for role, _ in roles.values())
        entities: list[str | None] = [None]
        if meta.entity_param is not None and meta.entity_param in names:
            classes = [c for c in meta.asset_classes if c in ("cn_equity", "hk_equity", "us_equity", "index", "fund")]
            if classes:
                entities = [e.code for c in classes for e in _spread(universe.of_class(c))]
            elif "rates_fx" in meta.asset_classes:
                entities = [pair.code for pair in FX_PAIRS[:ENTITIES_PER_CLASS]]
        for code in entities:
            args = dict(base)
            if code is not None:
                args[meta.entity_param] = code
            windows = []
            if code is not None:
                windows.append({**args, "limit": HISTORY_LIMIT})
            if has_window:
                window = dict(args)
                for name, (role, fmt) in roles.items():
                    if role == "start":
                        window[name] = MINUTE_WINDOW_START if spec.name.endswith("_mins") else _start(fmt, code is None)
                    elif role == "end":
                        window[name] = _end(fmt)
                    elif role == "period" and name not in window:
                        window[name] = PERIOD if fmt == "%Y%m%d" else "202606"
                windows.append(window)
                if code is None and not spec.name.endswith("_mins"):
                    long_window = {**window, "limit": LONG_WINDOW[1]}
                    for name, (role, fmt) in roles.items():
                        if role == "start" and fmt == "%Y%m%d":
                            long_window[name] = LONG_WINDOW[0]
                    windows.append(long_window)
            else:
                points = [n for n, (role, _) in roles.items() if role in ("point", "period")]
                for day in POINT_DATES:
                    window = dict(args)
                    if points:
                        role, fmt = roles[points[0]]
                        window[points[0]] = (PERIOD if role == "period" else day) if fmt == "%Y%m%d" else day[:6]
                    windows.append(window)
            calls.extend((spec.name, w) for w in windows)
    return calls


def _spread(entities: list[Any]) -> list[Any]:
    """A few entities spread over the class (first, middle, last), not just its first ones."""
    if len(entities) <= ENTITIES_PER_CLASS:
        return list(entities)
    step = (len(entities) - 1) / (ENTITIES_PER_CLASS - 1)
    return [entities[round(i * step)] for i in range(ENTITIES_PER_CLASS)]


def _start(fmt: str, market_wide: bool) -> str:
    if fmt == "%Y%m%d":
        return NO_ENTITY_WINDOW_START if market_wide else WINDOW_START["start"]
    return WINDOW_START["start_m"] if fmt == "%Y%m" else WINDOW_START["start_q"]


def _end(fmt: str) -> str:
    if fmt == "%Y%m%d":
        return PROBE_END.strftime("%Y%m%d")
    return PROBE_END.strftime("%Y%m") if fmt == "%Y%m" else f"{PROBE_END.year}Q{(PROBE_END.month - 1) // 3 + 1}"


def run(out: str) -> None:
    from livesearch_pipeline.core.calendars import CALENDARS, get_calendar
    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.server import DataService
    from livesearch_pipeline.dataservice.spec import ToolInputError

    service = DataService(config=ServiceConfig(clock=SERVICE_CLOCK))
    results = []
    for name, args in probe_calls(service):
        try:
            outcome: Any = service.call(name, args)
        except ToolInputError as exc:
            outcome = {"tool_error": str(exc)}
        results.append({"tool": name, "args": args, "result": outcome})
    spans = {c: get_calendar(c).last_session.date().isoformat() for c in CALENDARS}
    payload = {"wall_clock": dt.datetime.now().isoformat(), "spans": spans, "calls": results}
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, ensure_ascii=False, sort_keys=True, default=str)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--wall-clock", type=dt.datetime.fromisoformat, default=None)
    ns = parser.parse_args(argv)
    if ns.wall_clock is None:
        run(ns.out)
        return
    import time_machine

    with time_machine.travel(ns.wall_clock, tick=False):
        run(ns.out)


if __name__ == "__main__":
    main(sys.argv[1:])
