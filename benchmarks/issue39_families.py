"""The families of issue 39 in a built pool, measured on the day D: how many questions each has and
their share of the pool, how many the gold of D answers, whether D's web holds the evidence of
every deciding record, and whether the navigator reading the web answers as the gold.

    python benchmarks/issue39_families.py [--data DIR] [--date YYYY-MM-DD] [--seed N] [--examples]

Reads `<data>/pool/questions.jsonl`. The families are told from their programs' shapes (a question
record carries no family): `cagr` (a `cagr` combine step), `fiscal_growth` (a `pct_difference` of
two latest annual reports, `where_first`), `growth_first` (a `pct_difference` against a comparative
read at `revision: "first"`), `ah_premium` (`daily` → `hk_daily` →
`fx_daily`), `cross_currency` (`hk_daily_adj` → `fx_daily` → `hk_income`), `peer_best` (a pick over
`fina_indicator` calls). Each question is executed at D's clock on the embedded market; its
evidence is looked up on the pages D's web generates for the instruments it reads and the FX
releases (the evidence map's links, web/evidence.py `question_links`, over that part of the web);
the navigator (evaluation/agents/investigations.py) reads the same pages by their links, with no
search engine and no read budget, and its answer is scored with the question's matching rule.

With `--examples`, one question per family (the first with a Chinese text, if any) in
docs/construction.md's form: its texts, its gold on D and its program.

Exit code 1 when a family is under 1% of the pool, a gold answer is not `ok`, evidence is missing
or the navigator misses.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace

import httpx

from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.matching import match_answer
from livesearch_pipeline.core.models import Program, Question, ServedQuestion
from livesearch_pipeline.core.program import load_pool
from livesearch_pipeline.dataservice.market import DEFAULT_SEED
from livesearch_pipeline.dataservice.point_in_time import EmbeddedPointInTime
from livesearch_pipeline.evaluation.agents.investigations import investigate, read_investigation
from livesearch_pipeline.evaluation.agents.navigator import NavigatorAgent, _Question
from livesearch_pipeline.evaluation.agents.reading import Reading
from livesearch_pipeline.web.corpus import CorpusConfig
from livesearch_pipeline.web.evidence import _Replayer, question_links
from livesearch_pipeline.web.pages import CorpusGenerator

FAMILIES = ("cagr", "fiscal_growth", "growth_first", "ah_premium", "cross_currency", "peer_best")
MIN_SHARE = 0.01


def family_of(program: Program) -> str | None:
    """Which issue-39 family a program is, from its shape; None for any other."""
    ex = program.extract
    tools = [c.tool for c in program.calls]
    ops = [step.op for step in ex.combine.chain()] if ex.combine else []
    if "cagr" in ops:
        return "cagr"
    if tools == ["daily", "hk_daily", "fx_daily"] and ops and ops[-1] == "pct_difference":
        return "ah_premium"
    if tools == ["hk_daily_adj", "fx_daily", "hk_income"]:
        return "cross_currency"
    if ex.pick is not None and set(tools) == {"fina_indicator"}:
        return "peer_best"
    refs = [ref for _, ref in ex.refs()]
    if ops == ["pct_difference"] and any(ref.select.revision == "first" for ref in refs):
        return "growth_first"
    if ops == ["pct_difference"] and all(ref.select.where_first for ref in refs):
        return "fiscal_growth"
    return None


class _NoSearch:
    """A search engine that finds nothing: the pages are reached by their links alone."""

    async def web_search(self, arguments: dict) -> SimpleNamespace:
        return SimpleNamespace(content=json.dumps({"results": []}), trace={"query": arguments["query"]})


def _served(q: Question) -> ServedQuestion:
    return ServedQuestion(qid=q.qid, question=q.question, question_zh=q.question_zh, tier=q.tier,
                          asset_class=q.asset_class, refresh_class=q.refresh_class, visibility=q.visibility,
                          entity=q.entity)


async def _gold(questions: list[Question], day: dt.date, seed: int):
    async with EmbeddedPointInTime(seed)(day) as client:
        answers, _ = await execute_programs(questions, day, client)
    return {a.qid: a for a in answers}


def _navigate(html: dict[str, str], q: Question, day: dt.date) -> tuple[str | None, int]:
    def handler(request: httpx.Request) -> httpx.Response:
        page = html.get(request.url.path)
        return httpx.Response(200, text=page) if page is not None else httpx.Response(404, text="")

    served = _served(q)
    found = read_investigation(served)
    if found is None:
        return None, 0
    agent = NavigatorAgent(tools=_NoSearch(), http=httpx.AsyncClient(transport=httpx.MockTransport(handler)),  # type: ignore[arg-type]
                           as_of=day, base_url="http://web")
    state = _Question(served, Reading(kind="investigation", name="", quantity_en=found[0], quantity_zh=None), None)
    return asyncio.run(investigate(agent, state, *found)), state.reads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--date", type=dt.date.fromisoformat, default=dt.date(2026, 12, 4))
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--examples", action="store_true", help="print one example per family (docs' form)")
    args = parser.parse_args(argv)
    pool = load_pool(args.data / "pool" / "questions.jsonl")
    by_family: dict[str, list[Question]] = defaultdict(list)
    for q in pool:
        family = family_of(q.program)
        if family is not None:
            by_family[family].append(q)
    mine = [q for f in FAMILIES for q in by_family[f]]
    gold = asyncio.run(_gold(mine, args.date, args.seed))
    codes = sorted({str(v) for q in mine for a in [gold[q.qid]] for call_args in a.args.values()
                    for k, v in call_args.items() if k == "ts_code"})
    generator = CorpusGenerator(CorpusConfig(clock=args.date, seed=args.seed, entities=tuple(codes),
                                             market_tools=("fx_daily",)))
    pages, _, _ = generator.entity_batch(codes)
    pages += generator.market_batch()
    html = {p.path: p.html for p in pages}
    pages_of: dict[str, list[str]] = defaultdict(list)
    for p in pages:
        for key in p.records:
            pages_of[key].append(p.path)
    replayer = _Replayer(args.seed, args.date)
    failed = False
    print(f"pool {args.data / 'pool'}: {len(pool)} questions; D = {args.date}; web part: {len(codes)} instruments, "
          f"{len(pages)} pages")
    print("| family | questions | share | gold ok | evidence present | navigator correct | median reads |")
    print("|---|---|---|---|---|---|---|")
    misses: Counter = Counter()
    for family in FAMILIES:
        questions = by_family[family]
        ok = [q for q in questions if gold[q.qid].status == "ok"]
        present = correct = 0
        reads: list[int] = []
        for q in ok:
            answer = gold[q.qid]
            links = question_links(q, answer, replayer, pages_of)
            if all(link.present for link in links):
                present += 1
            else:
                misses[(family, "evidence", next(k for link in links for k in link.missing))] += 1
            got, n = _navigate(html, q, args.date)
            reads.append(n)
            if got is not None and match_answer(q.match, answer.value, got, gold_unit=answer.unit).correct:
                correct += 1
            else:
                misses[(family, "navigator", q.qid)] += 1
        share = len(questions) / len(pool) if pool else 0.0
        median = sorted(reads)[len(reads) // 2] if reads else 0
        print(f"| {family} | {len(questions)} | {share:.2%} | {len(ok)} | {present}/{len(ok)} | {correct}/{len(ok)} "
              f"| {median} |")
        failed |= share < MIN_SHARE or len(ok) < len(questions) or present < len(ok) or correct < len(ok)
    for (family, kind, what), n in sorted(misses.items())[:20]:
        print(f"  miss: {family} {kind} {what} ({n})")
    if args.examples:
        for family in FAMILIES:
            ok = [q for q in by_family[family] if gold[q.qid].status == "ok"]
            if ok:
                pick = next((q for q in ok if q.question_zh), ok[0])
                print(_example(family, pick, gold[pick.qid]))
    return 1 if failed else 0


def _example(family: str, q: Question, answer) -> str:
    """One question as docs/construction.md shows it."""
    zh = f"\n>\n> {q.question_zh}" if q.question_zh else ""
    program = json.dumps(q.program.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False,
                         separators=(",", ":"))
    dynamics = q.provenance.dynamics
    cls = dynamics.observed_class if dynamics is not None else q.refresh_class
    return (f"\n#### `{family}`\n\n> {q.question}{zh}\n\nGold on {answer.date}: **{answer.answer}** (observed "
            f"{answer.observed_period}; tier {q.tier}, class {cls}, `{q.qid}`)\n\n<details><summary>program</summary>"
            f"\n\n```json\n{program}\n```\n\n</details>")


if __name__ == "__main__":
    sys.exit(main())
