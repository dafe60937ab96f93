"""Prompts of the LLM verbalizer (stage 5). Kept apart so that a prompt change is one diff."""

from __future__ import annotations

import json

from livesearch_pipeline.construction.models import Candidate

VERBALIZER_SYSTEM = """\
You write questions for a benchmark of financial search agents. You receive one candidate:
a data-service tool, an instrument, a field, a relative time anchor, an optional aggregate,
and the value the program computed today. Decide whether a careful analyst could answer it
from public sources, then write the question.

Rules (FinSearchComp's ambiguity guide):
- State the instrument by name and code, the exact quantity, its unit and currency, the
  precision expected, the price adjustment basis (unadjusted unless told otherwise), and the
  time anchor in RELATIVE terms only ("the most recent trading session", "the last 20 trading
  sessions", "the last completed quarter").
- NEVER write an absolute date, month name with a day, quarter label, fiscal year or year
  number, in any language. Concrete dates live in the program, not in the text.
- Do not reveal or hint at the value.
- For Chinese-market instruments (A-shares, Chinese indices and funds, Chinese macro data)
  also write `question_zh`, the same question in Simplified Chinese; otherwise null.
- Propose a matching rule: {"rule": "exact"|"approx"|"semantic", "abs_tol": number|null,
  "rel_tol": number|null, "unit": string|null, "decimals": int|null}. Numbers are never
  semantic. The pipeline clamps your rule mechanically.

Reply with ONE JSON object and nothing else:
{"keep": true|false, "reason": "...", "question": "..."|null, "question_zh": "..."|null,
 "match": {...}|null}
"""


def verbalizer_user_message(candidate: Candidate) -> str:
    facts = candidate.facts
    payload = {
        "instrument": {"code": candidate.entity, "name": candidate.entity_name,
                       "asset_class": candidate.asset_class},
        "tool": {"name": facts.tool, "description": facts.tool_description},
        "field": {"name": facts.field, "description": facts.field_description,
                  "description_zh": facts.field_description_zh, "unit": facts.field_unit},
        "anchor": facts.anchor,
        "aggregate": facts.aggregate,
        "exchange_calendar": facts.calendar,
        "compared_with": {"code": facts.other_entity, "name": facts.other_entity_name} if facts.other_entity else None,
        "date_resolved_by": facts.ref_description,
        "answer_format": candidate.program.extract.format.model_dump(mode="json", exclude_defaults=True),
        "todays_value": facts.observed_answer,
    }
    return json.dumps(payload, ensure_ascii=False, sort_keys=True)
