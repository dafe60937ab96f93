"""The evaluation's errors (the evaluator's fail-loud `EvaluationError`, the agent registry's
`AgentRegistryError`), and how their messages name qids.

Every module of the evaluation (inputs, consistency, scoring, settlement, outputs) raises
`EvaluationError` for a fail-loud rule, so that a caller catches one type whichever job refused.
"""

from __future__ import annotations

from collections.abc import Iterable

# A message names this many qids (or lines) and counts the rest: it stays one readable line.
SHOWN_QIDS = 5


class EvaluationError(ValueError):
    """A fail-loud rule was violated; nothing must be written."""


def name_qids(qids: Iterable[str]) -> str:
    """`N qid(s): a, b, …` with the first few in sorted order and how many more."""
    ordered = sorted(qids)
    shown = ", ".join(ordered[:SHOWN_QIDS])
    more = f" and {len(ordered) - SHOWN_QIDS} more" if len(ordered) > SHOWN_QIDS else ""
    return f"{len(ordered)} qid(s): {shown}{more}"


class AgentRegistryError(ValueError):
    """The registry file or a registration is invalid (bad name, duplicate, unknown agent), or a
    registered agent cannot be opened (its key variable unset, no search backend)."""
