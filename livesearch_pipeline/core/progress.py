"""Progress of a long step, as a handful of lines for whoever watches it.

A step that runs for a minute (the replay of 21 days, the enumeration) reports through a plain
callable `report(line)`: the Dagster asset passes `context.log.info`, which the command line
prints below the step's line (infra/run_console.py) and the UI shows in the run's log; tests
pass a list's `append`; None reports nothing. `Progress` turns "one more done" into at most
`steps` lines (every quarter by default, and always the last), so a long step says how far it
is without burying the console.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

Report = Optional[Callable[[str], None]]


def say(report: Report, line: str) -> None:
    """`report(line)` when someone listens."""
    if report is not None:
        report(line)


@dataclass
class Progress:
    """`advance()` once per unit done; reports "<what>: <done> of <total> <unit>" each time the
    count crosses one of `steps` equal parts of `total` (the last one included)."""

    total: int
    what: str
    report: Report
    unit: str = ""
    steps: int = 4
    done: int = 0
    # The line to say instead of "<what>: <done> of <total>", when the count is not what the line
    # tells (a web build counts batches and tells pages and entities); called only when due.
    line: Optional[Callable[[], str]] = None

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ValueError(f"Progress.steps must be >= 1, got {self.steps}")
        if self.total < 0:
            raise ValueError(f"Progress.total must be >= 0, got {self.total}")

    def _part(self, count: int) -> int:
        return min(count, self.total) * self.steps // self.total

    def advance(self, n: int = 1, detail: str = "") -> None:
        before, self.done = self.done, self.done + n
        if self.report is None or self.total == 0 or self._part(self.done) <= self._part(before):
            return
        if self.line is not None:
            self.report(self.line())
            return
        unit = f" {self.unit}" if self.unit else ""
        self.report(f"{self.what}: {self.done:,} of {self.total:,}{unit}" + (f" ({detail})" if detail else ""))
