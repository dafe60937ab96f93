"""The site's downloads: per day, the questions, the gold where the live-answer rule shows it and
every agent's verdicts, in JSONL and Parquet, with a dataset card `datasets` loads from.

    downloads/<D>/questions.{jsonl,parquet}   the served questions of D (never an answer)
    downloads/<D>/gold.{jsonl,parquet}        one row per served question: status, and the answer,
                                              value, unit and observed period only where shown
    downloads/<D>/gold.manifest.json          what `livesearch evaluate` needs beside gold.jsonl to score a run
                                              on the shown golds (evaluation/published_gold.py): the file's
                                              sha256, the shown and withheld counts, D's snapshot manifest
    downloads/<D>/served_questions_<D>.jsonl  D's served file as agents received it (the name and records
                                              `livesearch agent run`, Inspect and `evaluate --served` read)
    downloads/<D>/verdicts.{jsonl,parquet}    one row per (agent, qid): rule, and correct, judge and the
                                              reason only where the gold is shown (`shown`; a verdict
                                              on a withheld gold would tell it, a reason quotes it)
    downloads/README.md                       the dataset card (YAML `configs` over the Parquet files)

`date` is a Parquet DATE column in every file, as in the analytical store (evaluation/store.py),
so pandas, pyarrow, DuckDB and `datasets` read it with its type. The bytes are a function of the
inputs (fixed row order, explicit schema, fixed writer settings).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from livesearch_pipeline.core.models import ServedQuestion
from livesearch_pipeline.core.served import render_served
from livesearch_pipeline.evaluation.published_gold import published_manifest
from livesearch_pipeline.evaluation.store import WRITER_SETTINGS

QUESTIONS_SCHEMA = pa.schema([
    ("date", pa.date32()), ("qid", pa.string()), ("question", pa.string()), ("question_zh", pa.string()),
    ("tier", pa.string()), ("asset_class", pa.string()), ("refresh_class", pa.string()), ("visibility", pa.int8()),
    ("entity", pa.string()),
])
GOLD_SCHEMA = pa.schema([
    ("date", pa.date32()), ("qid", pa.string()), ("status", pa.string()), ("shown", pa.bool_()),
    ("hidden_reason", pa.string()), ("answer", pa.string()), ("value_json", pa.string()), ("unit", pa.string()),
    ("observed_period", pa.string()), ("rule", pa.string()), ("match_json", pa.string()),
])
VERDICTS_SCHEMA = pa.schema([
    ("date", pa.date32()), ("agent", pa.string()), ("qid", pa.string()), ("shown", pa.bool_()), ("correct", pa.bool_()),
    ("rule", pa.string()), ("judge", pa.string()), ("reason", pa.string()),
])
TABLES = {"questions": QUESTIONS_SCHEMA, "gold": GOLD_SCHEMA, "verdicts": VERDICTS_SCHEMA}


def question_rows(day, served) -> list[dict]:
    return [{"date": day, "qid": q.qid, "question": q.question, "question_zh": q.question_zh, "tier": q.tier,
             "asset_class": q.asset_class, "refresh_class": q.refresh_class, "visibility": q.visibility,
             "entity": q.entity} for q in sorted(served, key=lambda q: q.qid)]


def gold_rows(day, served, gold: Mapping, hidden: Mapping[str, str]) -> list[dict]:
    rows = []
    for q in sorted(served, key=lambda q: q.qid):
        answer = gold.get(q.qid)
        if answer is None:
            continue
        shown = q.qid not in hidden
        rows.append({
            "date": day, "qid": q.qid, "status": answer.status, "shown": shown, "hidden_reason": hidden.get(q.qid),
            "answer": answer.answer if shown else None,
            "value_json": json.dumps(answer.value, ensure_ascii=False) if shown and answer.value is not None else None,
            "unit": answer.unit if shown else None,
            "observed_period": answer.observed_period if shown else None, "rule": answer.match.rule,
            # The full matching rule (tolerances, unit, decimals) the evaluator scores a shown gold with.
            "match_json": answer.match.model_dump_json() if shown else None,
        })
    return rows


def served_bytes(served) -> bytes:
    """D's served file (`core.served.render_served`): what the agents were asked, never an answer."""
    return render_served([ServedQuestion(**row._asdict()) for row in served])


def gold_manifest_bytes(day, gold_jsonl: bytes, rows: Sequence[dict], snapshot) -> bytes:
    """`gold.manifest.json` of a day's published gold.jsonl (evaluation/published_gold.py)."""
    shown = sum(1 for r in rows if r["status"] == "ok" and r["shown"])
    withheld = sum(1 for r in rows if r["status"] == "ok" and not r["shown"])
    return published_manifest(gold_jsonl, day, snapshot, shown=shown, withheld=withheld)


def verdict_rows(day, runs: Sequence, hidden: Mapping[str, str]) -> list[dict]:
    rows = []
    for run in sorted(runs, key=lambda r: r.agent):
        for qid, verdict in sorted(run.verdicts.items()):
            shown = qid not in hidden
            rows.append({"date": day, "agent": run.agent, "qid": qid, "shown": shown,
                         "correct": verdict.correct if shown else None, "rule": verdict.rule,
                         "judge": verdict.judge if shown else None, "reason": verdict.reason if shown else None})
    return rows


def jsonl_bytes(rows: Sequence[dict]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows).encode("utf-8")


def parquet_bytes(rows: Sequence[dict], schema: pa.Schema) -> bytes:
    table = pa.Table.from_pylist(list(rows), schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer, **WRITER_SETTINGS)
    return buffer.getvalue()


def dataset_card(days: Sequence[str], rule_lines: Sequence[str]) -> str:
    configs = "\n".join(
        f"- config_name: {name}\n  data_files:\n  - split: train\n    path: \"*/{name}.parquet\""
        + ("\n  default: true" if name == "questions" else "")
        for name in TABLES)
    columns = "\n".join(f"- `{name}`: " + ", ".join(f"`{f.name}` ({f.type})" for f in schema)
                        for name, schema in TABLES.items())
    rules = "\n".join(f"- {line}" for line in rule_lines)
    return f"""---
license: cc-by-4.0
pretty_name: LiveSearch benchmark (synthetic market)
configs:
{configs}
---

# LiveSearch: questions, frozen gold and verdicts per day

Frozen days: {', '.join(days) if days else 'none'}. One folder per day; every file has a `date` column.
The market is synthetic: every entity is fictional.

```python
from datasets import load_dataset

gold = load_dataset("path/to/downloads", "gold", split="train")   # or "questions", "verdicts"
```

Columns:
{columns}

## What is not here

The live-answer rule withholds every gold that could still be the answer on the day after the latest
frozen day on disk (`shown` is false, `hidden_reason` says why; the answer, value, unit and observed period
are empty, and so are the verdicts on that question — `correct`, `judge`, `reason` —, which would tell it):
{rules}
"""
