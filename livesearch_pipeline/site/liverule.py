"""The live-answer rule: which frozen gold the public site may show.

Publishing the site must never hand out an answer an agent could still be scored on. The gold of
a question on a frozen day D is *live* (not shown) when it could still be the answer on the day
after the latest frozen day L:

- every gold of L itself (any question of the current day: tomorrow may give the same answer);
- every gold of a `static` question (its answer does not change: each day's gold is tomorrow's);
- a gold of D < L that still passes as L's answer under the question's own matching rule (the
  answer has not changed since D: slow classes — weekly, monthly, quarterly, annual — until their
  answer moves, and a daily question on a day its value did not move), or that only a judge could
  tell from it;
- a gold of D < L when L has no `ok` gold for the question (withdrawn on L): whether the answer
  has changed cannot be told, so it is not shown.

A question no longer served on L (retired from the pool) is never asked again: its gold is shown.
A gold that is not `ok` (empty, error) carries no answer and is shown as its status. The decision
is deterministic (`core.matching` through `evaluation.scoring.match_gold`, the scorer's own
matcher) and only depends on D's and L's gold and the refresh class served on L. A gold is a
`GoldAnswer` or a record with its fields (the site's `inputs.GoldRow`).

L is the newest frozen day on disk (`inputs.newest_frozen_day`), whatever day a site is built as of:
a site of an older day must not publish an earlier gold that is L's answer again. The decision
governs every per-question output of that question on that day, not only its answer and value:
each agent's verdict (correct or not, the judge, the reason), its evidence pages, its observed
period and the agents' trajectories (site/build.py, pages.py, downloads.py) — a ✓ on a withheld
gold tells it as surely as the gold.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

from livesearch_pipeline.core.models import GoldAnswer
from livesearch_pipeline.evaluation.scoring import match_gold

LATEST_DAY = "the latest frozen day: tomorrow's answer may be the same"
STATIC = "a static question: its answer does not change"
UNCHANGED = "still the answer of the latest frozen day under its matching rule"
UNDECIDED = "only a judge could tell it from the latest frozen day's answer"
NOT_OK_ON_LATEST = "no ok gold on the latest frozen day to tell whether it has changed"
REASONS = (LATEST_DAY, STATIC, UNCHANGED, UNDECIDED, NOT_OK_ON_LATEST)
# Each reason in a few words, where a page shows it beside a withheld gold (the full reason on hover).
SHORT_REASONS = {LATEST_DAY: "latest day", STATIC: "static answer", UNCHANGED: "still today's answer",
                 UNDECIDED: "may still be today's answer", NOT_OK_ON_LATEST: "no gold today to compare"}


def hidden_reason(gold: GoldAnswer, *, is_latest_day: bool, latest_class: str | None,
                  latest_gold: GoldAnswer | None) -> str | None:
    """Why the site may not show `gold` (one of REASONS), or None when it may.

    `latest_class` is the question's refresh class served on the latest day L (None: not served
    on L, a retired question); `latest_gold` its gold of L (None when L's snapshot lacks it)."""
    if gold.status != "ok":
        return None  # no answer to hand out: shown as its status
    if is_latest_day:
        return LATEST_DAY
    if latest_class is None:
        return None  # retired: never served again
    if latest_class == "static":
        return STATIC
    if latest_gold is None or latest_gold.status != "ok":
        return NOT_OK_ON_LATEST
    if gold.answer == latest_gold.answer:
        return UNCHANGED
    outcome = match_gold(latest_gold, gold.answer or "")
    if outcome.correct:
        return UNCHANGED
    if outcome.needs_judge:
        return UNDECIDED
    return None


def hidden_on_day(answers: Mapping[str, GoldAnswer], *, is_latest_day: bool, latest_classes: Mapping[str, str],
                  latest_answers: Mapping[str, GoldAnswer]) -> dict[str, str]:
    """qid -> reason for every gold of one day that the site may not show."""
    hidden: dict[str, str] = {}
    for qid, gold in answers.items():
        reason = hidden_reason(gold, is_latest_day=is_latest_day, latest_class=latest_classes.get(qid),
                               latest_gold=latest_answers.get(qid))
        if reason is not None:
            hidden[qid] = reason
    return hidden


@dataclass
class ClassCount:
    """Per refresh class: frozen ok gold answers, how many are hidden, and questions never shown."""

    questions: int = 0
    answers: int = 0
    hidden: int = 0
    never_shown: int = 0
    reasons: Counter = field(default_factory=Counter)


def count_by_class(days: list[tuple[Mapping[str, GoldAnswer], Mapping[str, str]]],
                   latest_classes: Mapping[str, str]) -> dict[str, ClassCount]:
    """What the rule hides per refresh class (of the latest day) over the given days, each
    (answers, hidden) of `hidden_on_day`."""
    counts: dict[str, ClassCount] = {}
    shown_once: set[str] = set()
    seen: set[str] = set()
    for answers, hidden in days:
        for qid, gold in answers.items():
            if gold.status != "ok" or qid not in latest_classes:
                continue
            count = counts.setdefault(latest_classes[qid], ClassCount())
            seen.add(qid)
            count.answers += 1
            if qid in hidden:
                count.hidden += 1
                count.reasons[hidden[qid]] += 1
            else:
                shown_once.add(qid)
    for qid in seen:
        count = counts[latest_classes[qid]]
        count.questions += 1
        count.never_shown += qid not in shown_once
    return dict(sorted(counts.items()))
