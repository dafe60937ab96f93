"""Checks of a day's served texts against its gold (issues 39 and 40): what the wording presupposes,
whose trading days it counts, and how it names its entities.

    python benchmarks/question_texts.py [--data DIR] [--date YYYY-MM-DD] [--show N]

Reads `<data>/served/served_questions_<D>.jsonl`, `<data>/gold/gold_answers_<D>.jsonl` and the pool
(`<data>/pool/questions.jsonl` with the catalog it was built from), and prints:

- **signs**: the served texts (English and Chinese) whose wording presupposes the sign of the value
  asked ("by how much did A beat B", "高多少"; `construction.lint.presupposed_sign`) and, of those,
  the texts whose gold of D has the other sign (target 0);
- **calendars**: the rate and macro questions whose text counts trading days without naming whose
  (the lint's `unnamed_calendar` over the question's program; target 0);
- **names**: the share of entity questions (instruments) whose texts give no code of their
  instrument (target at least 30%), by family, visibility band and language, and the code-free
  texts whose name fits another entity the data service of D knows (target 0;
  `construction.naming`).

Exit code 1 when a target is missed. `--date` defaults to the latest served day under `--data`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from livesearch_pipeline.construction.lint import names_calendar, presupposed_sign  # noqa: E402
from livesearch_pipeline.construction.verbalize import question_lint_context  # noqa: E402
from livesearch_pipeline.core.catalog import Catalog  # noqa: E402
from livesearch_pipeline.core.models import GoldAnswer, Question, ServedQuestion  # noqa: E402
from livesearch_pipeline.core.pool import is_instrument, visibility_band  # noqa: E402

CODE_FREE_TARGET = 0.30
SERIES_CLASSES = ("rates_fx", "macro")


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _latest_day(data: Path) -> dt.date:
    days = sorted(p.name.removeprefix("served_questions_").removesuffix(".jsonl")
                  for p in (data / "served").glob("served_questions_*.jsonl"))
    if not days:
        raise SystemExit(f"no served questions under {data / 'served'}")
    return dt.date.fromisoformat(days[-1])


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def family_of(q: Question) -> str:
    """A question's family (its construction anchor is not kept in the pool): its program's shape."""
    ex = q.program.extract
    tools = ">".join(dict.fromkeys(c.tool for c in q.program.calls))
    return f"{tools}:{ex.aggregate or ex.select.mode}"


def signs(served: list[ServedQuestion], gold: dict[str, GoldAnswer], show: int) -> int:
    presupposing, contradicted, examples, questions = Counter(), Counter(), [], set()
    for s in served:
        value = _number(gold[s.qid].value) if s.qid in gold else None
        for lang, text in (("en", s.question), ("zh", s.question_zh)):
            if not text:
                continue
            found = presupposed_sign(text, lang)
            if found is None:
                continue
            presupposing[lang] += 1
            if value is not None and ((found[0] == "positive" and value < 0) or (found[0] == "negative" and value > 0)):
                contradicted[lang] += 1
                questions.add(s.qid)
                examples.append(f"{s.qid} [{lang}] {found[1]!r} vs gold {gold[s.qid].answer}: {text[:160]}")
    total = sum(contradicted.values())
    print(f"signs: {sum(presupposing.values())} texts presuppose a sign (en {presupposing['en']}, zh "
          f"{presupposing['zh']}); {total} of them contradicted by the gold (en {contradicted['en']}, zh "
          f"{contradicted['zh']}; {len(questions)} questions)  target 0")
    for line in examples[:show]:
        print(f"  {line}")
    return total


def calendars(served: list[ServedQuestion], pool: dict[str, Question], catalog: Catalog, show: int) -> int:
    unnamed, asked, examples = 0, 0, []
    for s in served:
        q = pool[s.qid]
        if q.asset_class not in SERIES_CLASSES:
            continue
        ctx = question_lint_context(q, catalog)
        counts = [(lang, text) for lang, text in (("en", s.question), ("zh", s.question_zh)) if text]
        counting = [(lang, text) for lang, text in counts if re.search(r"trading day|session|weekday|交易日|工作日", text)]
        if not counting:
            continue
        asked += 1
        missing = [(lang, text) for lang, text in counting
                   if not ctx.calendar_names or not names_calendar(text, lang, ctx.calendar_names)]
        if missing and ctx.calendar_names:
            unnamed += 1
            examples.append(f"{s.qid} [{missing[0][0]}] {missing[0][1][:160]}")
        elif missing:
            # No calendar the program counts on (a statistic by month): a text that still says
            # "trading day" names none.
            unnamed += 1
            examples.append(f"{s.qid} (no calendar in its program) {missing[0][1][:160]}")
    print(f"calendars: {asked} rate and macro questions count trading days; {unnamed} without naming whose  target 0")
    for line in examples[:show]:
        print(f"  {line}")
    return unnamed


def names(served: list[ServedQuestion], pool: dict[str, Question], day: dt.date, show: int) -> tuple[float, int]:
    from livesearch_pipeline.construction.naming import code_mentions, fitting_entities, service_names

    book = service_names(day)
    entity_questions = [s for s in served if is_instrument(pool[s.qid].asset_class)]
    free, by = 0, defaultdict(lambda: [0, 0])
    ambiguous, examples = 0, []
    for s in entity_questions:
        q = pool[s.qid]
        texts = [(lang, t) for lang, t in (("en", s.question), ("zh", s.question_zh)) if t]
        code_free = not any(code_mentions(t, q.entity) for _, t in texts)
        free += code_free
        for key in (f"family {family_of(q)}", f"band {visibility_band(q.visibility, q.asset_class)}",
                    *(f"language {lang}" for lang, _ in texts)):
            by[key][0] += code_free
            by[key][1] += 1
        if not code_free:
            continue
        for lang, text in texts:
            fits = fitting_entities(text, q.entity, book)
            if fits:
                ambiguous += 1
                examples.append(f"{s.qid} [{lang}] also fits {sorted(fits)[:3]}: {text[:140]}")
                break
    share = free / len(entity_questions) if entity_questions else 0.0
    print(f"names: {free} of {len(entity_questions)} entity questions give no code ({share:.1%})  target >= "
          f"{CODE_FREE_TARGET:.0%}; {ambiguous} code-free questions whose name fits another entity  target 0")
    for key in sorted(k for k in by if k.startswith(("band", "language"))):
        n_free, n = by[key]
        print(f"  {key:24s} {n_free:5d} / {n:5d}  {n_free / n:.1%}")
    families = sorted((k for k in by if k.startswith("family")), key=lambda k: -by[k][1])
    spread = sum(1 for k in families if by[k][0])
    print(f"  code-free questions in {spread} of {len(families)} program shapes; the largest:")
    for key in families[:show]:
        n_free, n = by[key]
        print(f"  {key[7:]:60s} {n_free:5d} / {n:5d}")
    for line in examples[:show]:
        print(f"  {line}")
    return share, ambiguous


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO / "data", help="data root (served/, gold/, pool/)")
    parser.add_argument("--date", type=dt.date.fromisoformat, default=None, help="the served day (default: latest)")
    parser.add_argument("--show", type=int, default=5, help="examples to print per check")
    args = parser.parse_args(argv)
    day = args.date or _latest_day(args.data)
    served = [ServedQuestion.model_validate_json(line)
              for line in _lines(args.data / "served" / f"served_questions_{day}.jsonl")]
    gold = {g.qid: g for g in (GoldAnswer.model_validate_json(line)
                               for line in _lines(args.data / "gold" / f"gold_answers_{day}.jsonl"))}
    pool = {q.qid: q for q in (Question.model_validate_json(line)
                               for line in _lines(args.data / "pool" / "questions.jsonl"))}
    catalog = Catalog.model_validate_json((args.data / "pool" / "tool_catalog.json").read_text(encoding="utf-8"))
    print(f"{len(served)} served questions of {day}")
    contradicted = signs(served, gold, args.show)
    unnamed = calendars(served, pool, catalog, args.show)
    share, ambiguous = names(served, pool, day, args.show)
    ok = contradicted == 0 and unnamed == 0 and share >= CODE_FREE_TARGET and ambiguous == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
