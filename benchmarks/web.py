"""Benchmark of the offline web (issue 16): corpus build, search latency, and what visibility does
to the search-and-read baseline.

    python benchmarks/web.py --pool data/pool [--date 2026-11-27] [--history-sessions 250]
                             [--workers 2] [--queries 400] [--out /tmp/web-bench] [--compare-tokenizers]

1. Build: generate the web of D for the default market (seed) and index it (SQLite FTS5, `cjk`
   mode); report pages, seconds, MB. Target: >= 100,000 pages in < 2 minutes on 2 cores.
2. Search: serve it with `livesearch serve-web`'s server on 127.0.0.1 and send `--queries`
   queries made from the pool's questions (entity + quantity, English and Chinese) through the
   HTTP API; report p50/p99 latency. Target: p50 < 20 ms, p99 < 100 ms.
   Relevance: the share of entity queries whose top 10 holds a page about that entity
   (a known-item check). With --compare-tokenizers, the same on a `trigram` index.
3. Evidence (issue 22): the evidence map of the web for the gold of D (web/evidence.py): the share
   of questions whose evidence is on the web, per visibility band and per family, the share of
   lookups whose gold value is printed on an evidence page, and the pages whose visible text
   names the generator or a tool (web/audit.py). Targets: >= 95% of lookups' gold values on the
   web and >= 90% in every band; 0 give-away pages.
4. Accuracy: the pool's questions answered by the search-and-read baseline against the web of
   D, scored with the pipeline's matching rules against gold computed at D by the oracle's
   executor; accuracy with 95% Wilson intervals per visibility band (0-3, 4-6, 7-10, market series) and for
   the oracle. Target: low band below high band with non-overlapping intervals; well below
   the oracle.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BANDS = (("low 0-3", range(0, 4)), ("mid 4-6", range(4, 7)), ("high 7-10", range(7, 11)))


def build(args: argparse.Namespace, root: Path, tokenizer: str = "cjk"):
    from livesearch_pipeline.web.build import build_web
    from livesearch_pipeline.web.corpus import CorpusConfig

    config = CorpusConfig(clock=args.date, history_sessions=args.history_sessions)
    before = _cpu_seconds()
    # The monthly quote histories reach as far back as the pool's questions read (web/needs.py).
    built = build_web(config, root, workers=args.workers, tokenizer=tokenizer,  # type: ignore[arg-type]
                      pool_file=args.pool / "questions.jsonl", gold_file=args.gold)
    cpu = _cpu_seconds() - before
    print(f"[build/{tokenizer}] {built.stats.pages} pages in {built.generate_and_index_s:.1f} s wall, "
          f"{cpu:.1f} CPU-s in all processes ({built.stats.bytes / 1e6:.0f} MB index) {built.stats.by_kind}", flush=True)
    return built, cpu


def _cpu_seconds() -> float:
    """User + system time of this process and its finished children (the generation workers): on an
    otherwise idle machine with two cores, wall time is about half of it."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def reindex(source: Path, target: Path, tokenizer: str) -> dict:
    """The pages of a built corpus indexed again with another tokenizer (same pages, same text)."""
    import sqlite3
    import zlib

    from livesearch_pipeline.evaluation.agents.web import html_to_text
    from livesearch_pipeline.web.corpus import Page
    from livesearch_pipeline.web.index import INDEX_FILE, WebIndex, build_index

    def pages():
        connection = sqlite3.connect(f"file:{source / INDEX_FILE}?mode=ro", uri=True)
        for path, site, kind, lang, title, published, entity, snippet, body in connection.execute(
                "SELECT path, site, kind, lang, title, published, entity, snippet, html FROM pages ORDER BY id"):
            html = zlib.decompress(body).decode("utf-8")
            yield Page(path, site, kind, lang, title, dt.date.fromisoformat(published), entity, snippet,
                       html_to_text(html)[1], html)

    stats = build_index(pages(), target, identity=WebIndex(source).identity + f" tokenizer={tokenizer}",
                        tokenizer=tokenizer)  # type: ignore[arg-type]
    figures = {"pages": stats.pages, "index_seconds": round(stats.seconds, 1), "index_mb": round(stats.bytes / 1e6, 1)}
    print(f"[reindex/{tokenizer}] {figures}", flush=True)
    return figures


def queries_from_pool(pool, count: int) -> list[tuple[str, str | None]]:
    """(query, entity code or None) pairs as a searching agent would send them."""
    from livesearch_pipeline.evaluation.agents.search_read import UnreadableQuestion, read_question
    from livesearch_pipeline.refresh import served_from_pool

    made: list[tuple[str, str | None]] = []
    for question in served_from_pool(pool):
        try:
            reading = read_question(question)
        except UnreadableQuestion:
            continue
        code = question.entity if reading.name else None
        made.append((" ".join(filter(None, (reading.name, code, reading.quantity_en))), code))
        if reading.quantity_zh:
            made.append((" ".join(filter(None, (reading.name, code, reading.quantity_zh))), code))
    random.Random(7).shuffle(made)
    return made[:count]


def search_latency(directory: Path, queries: list[tuple[str, str | None]], label: str) -> dict:
    import httpx

    from livesearch_pipeline.web.server import running_web

    latencies: list[float] = []
    found = asked = 0
    with running_web(directory) as url, httpx.Client() as http:
        http.get(f"{url}/search", params={"q": "warm up", "format": "json"})
        for query, code in queries:
            started = time.perf_counter()
            response = http.get(f"{url}/search", params={"q": query, "format": "json"})
            latencies.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
            results = response.json()["results"]
            if code:
                asked += 1
                found += any(code in r["title"] for r in results)
    latencies.sort()
    figures = {"queries": len(latencies), "p50_ms": round(statistics.median(latencies), 2),
               "p99_ms": round(latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 2),
               "max_ms": round(latencies[-1], 2),
               "known_item_top10": round(found / asked, 4) if asked else None}
    print(f"[search/{label}] {figures}", flush=True)
    return figures


async def gold_at(pool, day: dt.date):
    from livesearch_pipeline.core.executor import execute_programs
    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.client import McpToolClient
    from livesearch_pipeline.dataservice.market import shared_market
    from livesearch_pipeline.dataservice.server import DataService

    service = DataService(config=ServiceConfig(clock=day), market=shared_market(ServiceConfig().seed))
    async with McpToolClient.in_process(service) as client:
        answers, _ = await execute_programs(pool, day, client)
    return {a.qid: a for a in answers}


async def answer_all(directory: Path, pool, day: dt.date, concurrency: int = 8):
    from livesearch_pipeline.evaluation.agents.search_read import open_search_read_agent
    from livesearch_pipeline.refresh import served_from_pool

    served = served_from_pool(pool)
    semaphore = asyncio.Semaphore(concurrency)
    async with open_search_read_agent(web_dir=directory, day=day, name="search-read",
                                      concurrency=concurrency) as agent:
        async def one(question):
            async with semaphore:
                return await agent.answer(question)

        return await asyncio.gather(*(one(q) for q in served))


def wilson(correct: int, n: int) -> tuple[float, float]:
    from livesearch_pipeline.evaluation.leaderboard import wilson_interval

    return wilson_interval(correct, n)


def accuracy(args: argparse.Namespace, directory: Path, pool) -> dict:
    from livesearch_pipeline.core.matching import match_answer
    from livesearch_pipeline.core.pool import MARKET_BAND, is_instrument

    gold = asyncio.run(gold_at(pool, args.date))
    started = time.monotonic()
    predictions = asyncio.run(answer_all(directory, pool, args.date))
    elapsed = time.monotonic() - started
    by_qid = {q.qid: q for q in pool}
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # correct, n, answered
    oracle: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for prediction in predictions:
        question = by_qid[prediction.qid]
        answer = gold[prediction.qid]
        if answer.status != "ok":
            continue  # withdrawn on D: not in the scoring set
        # Market-wide series are their own band, not level 10 (core.pool.visibility_band).
        band = (MARKET_BAND if not is_instrument(question.asset_class)
                else next(name for name, levels in BANDS if question.visibility in levels))
        outcome = match_answer(question.match, answer.value, prediction.answer, gold_unit=answer.unit)
        for key in (band, "all"):
            tally[key][0] += outcome.correct
            tally[key][1] += 1
            tally[key][2] += prediction.answer is not None
            oracle_outcome = match_answer(question.match, answer.value, answer.answer, gold_unit=answer.unit)
            oracle[key][0] += oracle_outcome.correct
            oracle[key][1] += 1
    result = {}
    for key in [name for name, _ in BANDS] + [MARKET_BAND, "all"]:
        correct, n, answered = tally[key]
        low, high = wilson(correct, n)
        ocorrect, on = oracle[key]
        result[key] = {"n": n, "answered": answered, "correct": correct, "accuracy": round(correct / n, 4) if n else None,
                       "wilson95": [round(low, 4), round(high, 4)],
                       "oracle_accuracy": round(ocorrect / on, 4) if on else None}
        print(f"[accuracy] {key:10s} search-read {correct}/{n} = {correct / max(n, 1):.1%} "
              f"(95% CI {low:.1%}-{high:.1%}; answered {answered}); oracle {ocorrect}/{on}", flush=True)
    by_level = defaultdict(lambda: [0, 0])
    for prediction in predictions:
        question = by_qid[prediction.qid]
        answer = gold[prediction.qid]
        if answer.status == "ok":
            by_level[question.visibility][0] += match_answer(question.match, answer.value, prediction.answer,
                                                             gold_unit=answer.unit).correct
            by_level[question.visibility][1] += 1
    result["by_level"] = {str(k): f"{c}/{n}" for k, (c, n) in sorted(by_level.items())}
    result["answer_seconds"] = round(elapsed, 1)
    print(f"[accuracy] by level {result['by_level']}; {len(predictions)} questions answered in {elapsed:.1f} s")
    low, high = result[BANDS[0][0]], result[BANDS[2][0]]
    result["pass_visibility"] = low["wilson95"][1] < high["wilson95"][0]
    result["pass_below_oracle"] = (result["all"]["accuracy"] or 0) < 0.5 * (result["all"]["oracle_accuracy"] or 0)
    return result


def evidence(args: argparse.Namespace, directory: Path, pool) -> dict:
    from livesearch_pipeline.core.snapshot import SnapshotStore, snapshot_date
    from livesearch_pipeline.web.audit import pages_giving_the_game_away
    from livesearch_pipeline.web.evidence import build_evidence_map, file_sha256, write_evidence_map
    from livesearch_pipeline.web.index import WebIndex

    started = time.monotonic()
    if args.gold is not None:
        answers = SnapshotStore(args.gold.parent).read(snapshot_date(args.gold))
        sha = file_sha256(args.gold)
    else:
        answers, sha = list(asyncio.run(gold_at(pool, args.date)).values()), "benchmark"
    from livesearch_pipeline.dataservice.catalog import ServiceConfig

    mapped = build_evidence_map(directory, pool, answers, seed=ServiceConfig().seed, gold_sha256=sha)
    write_evidence_map(directory, mapped)
    summary = mapped["summary"]
    elapsed = time.monotonic() - started
    print(f"[evidence] {summary['evidence']['present']}/{summary['evidence']['n']} web questions with evidence "
          f"({summary['tools_only']} tools-only) in {elapsed:.1f} s; by band "
          + ", ".join(f"{k} {v['share']}" for k, v in summary["by_band"].items()), flush=True)
    print(f"[evidence] by family {json.dumps(summary['by_family'])}", flush=True)
    printed, bands = summary["lookup_value_printed"], summary["lookup_value_printed_by_band"]
    print(f"[evidence] lookups' gold value on the web {printed['present']}/{printed['n']} = {printed['share']}; by band "
          + ", ".join(f"{k} {v['share']}" for k, v in bands.items()), flush=True)
    giveaways = list(pages_giving_the_game_away(WebIndex(directory)))
    print(f"[evidence] pages naming the generator or a tool: {len(giveaways)} {giveaways[:3]}", flush=True)
    return {"summary": summary, "seconds": round(elapsed, 1), "giveaway_pages": len(giveaways),
            "pass": (printed["share"] or 0) >= 0.95 and all((v["share"] or 0) >= 0.9 for v in bands.values())
            and not giveaways}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pool", type=Path, required=True, help="a pool directory (questions.jsonl)")
    parser.add_argument("--date", type=dt.date.fromisoformat, default=dt.date(2026, 11, 27))
    parser.add_argument("--history-sessions", type=int, default=250)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--out", type=Path, default=Path("/tmp/livesearch-web-bench"))
    parser.add_argument("--compare-tokenizers", action="store_true")
    parser.add_argument("--skip-build", action="store_true", help="reuse the index already under --out")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-evidence", action="store_true")
    parser.add_argument("--gold", type=Path, default=None,
                        help="a gold snapshot of --date (gold_answers_<D>.jsonl) for the evidence map; "
                             "default: computed at D by the executor")
    parser.add_argument("--web", type=Path, default=None,
                        help="an already built web directory of --date (e.g. data/web/<D>) instead of --out")
    args = parser.parse_args()

    from livesearch_pipeline.core.program import load_pool
    from livesearch_pipeline.web.build import corpus_directory

    pool = load_pool(args.pool / "questions.jsonl")
    report: dict = {"date": args.date.isoformat(), "history_sessions": args.history_sessions, "cpus": os.cpu_count(),
                    "load_average_at_start": os.getloadavg()}
    root = args.out / "cjk"
    directory = args.web if args.web is not None else corpus_directory(root, args.date)
    if not args.skip_build and args.web is None:
        built, cpu = build(args, root)
        report["build"] = {"pages": built.stats.pages, "seconds": round(built.generate_and_index_s, 1),
                           "cpu_seconds": round(cpu, 1),
                           "index_mb": round(built.stats.bytes / 1e6, 1), "by_kind": built.stats.by_kind,
                           "pass": built.stats.pages >= 100_000 and built.generate_and_index_s < 120}
    queries = queries_from_pool(pool, args.queries)
    report["search"] = search_latency(directory, queries, "cjk")
    report["search"]["pass"] = report["search"]["p50_ms"] < 20 and report["search"]["p99_ms"] < 100
    if args.compare_tokenizers:
        trigram_dir = corpus_directory(args.out / "trigram", args.date)
        report["build_trigram"] = reindex(directory, trigram_dir, "trigram")
        report["search_trigram"] = search_latency(trigram_dir, queries, "trigram")
    if not args.skip_evidence:
        report["evidence"] = evidence(args, directory, pool)
    if not args.skip_accuracy:
        report["accuracy"] = accuracy(args, directory, pool)
    report["load_average_at_end"] = os.getloadavg()
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
