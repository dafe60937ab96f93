"""Counter-based deterministic randomness for the synthetic market.

Every random stream is keyed by (seed, entity code, purpose) and nothing else, so a value never
depends on which other entities or dates were asked for first, nor on the process. Streams that
run along time are drawn on a fixed grid of weekdays (`WEEKDAY_GRID_START` onward) rather than
on a calendar's sessions, so a value at a date does not move when a calendar's holiday horizon
is extended by a library upgrade.
"""

from __future__ import annotations

import datetime as dt
import hashlib

import numpy as np

WEEKDAY_GRID_START = dt.date(2014, 12, 29)  # a Monday just before the first simulated session
# Fixed length of every per-weekday random array of the price engine: arrays are always drawn
# this long and read at the sessions' grid positions, so their values never depend on how many
# sessions a calendar has.
GRID_END = dt.date(2035, 12, 31)
# The last date the market is simulated on (the macro grid's end and the last year of the
# yearly schedules). A calendar reaching past it would need a longer grid, which is a new market.
SIMULATION_END = dt.date(2030, 12, 31)


def stable_hash(*parts: object) -> int:
    """A 64-bit integer hash of `parts`, identical across processes and platforms."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def generator(seed: int, *key: object) -> np.random.Generator:
    """An independent numpy Generator for the stream named by (seed, *key)."""
    return np.random.Generator(np.random.Philox(key=[seed & 0xFFFFFFFFFFFFFFFF, stable_hash(*key)]))


def unit_uniform(seed: int, *key: object) -> float:
    """One uniform draw in [0, 1) for (seed, *key), without building a generator."""
    return stable_hash(seed, *key) / 2.0**64


def weekday_index(day: dt.date) -> int:
    """Position of a weekday on the fixed weekday grid (weekends map to the preceding Friday)."""
    days = (day - WEEKDAY_GRID_START).days
    if days < 0:
        raise ValueError(f"{day.isoformat()} is before the simulation grid start {WEEKDAY_GRID_START}")
    weeks, rest = divmod(days, 7)
    return weeks * 5 + min(rest, 4)


GRID_LENGTH = weekday_index(GRID_END) + 1


def check_simulated(calendar: str, last_session: dt.date) -> None:
    """Refuse a calendar that extends past the simulated span (its values would not exist)."""
    if last_session > SIMULATION_END:
        raise ValueError(
            f"the {calendar} calendar runs to {last_session.isoformat()}, past the synthetic market's last simulated "
            f"day {SIMULATION_END.isoformat()}; set its end (CALENDAR_ENDS / LIVESEARCH_CALENDAR_ENDS) on or before it"
        )
