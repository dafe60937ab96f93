"""Stage 6 (pool filter, no LLM) and the versioned question pool on disk.

Given agents' evaluation history, signatures that every evaluated agent solved are dropped;
surviving templates are re-instantiated with fresh entities of the same class and visibility
band (other qids of the same signature that were not served before). Caps per signature and
per tool keep any one template or tool from dominating.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from livesearch_pipeline.core.jsonl import render_jsonl
from livesearch_pipeline.construction.families import investigation_of, is_multi_step
from livesearch_pipeline.core.models import PoolManifest, Question
# Reading and checking the pool lives in core.pool, below every package that reads it.
from livesearch_pipeline.core.pool import (
    CATALOG_FILE,
    MANIFEST_FILE,
    POOL_FILE,
    SignatureHistory,
    is_instrument,
    visibility_band,
    visibility_label,
)
from livesearch_pipeline.core.snapshot import write_atomic


@dataclass(frozen=True)
class PoolPolicy:
    max_per_signature: int = 3
    # A multi-step family's signature (construction/families/) is the chain itself; its
    # questions differ by the instrument investigated, spread over the visibility levels (the
    # families draft two instruments per level).
    max_per_chain_signature: int = 24
    # 28 (45 before issue 29): the single lookups yield pool share to the multi-step families.
    max_per_tool: int = 28
    # Of a tool's questions, at most this many may be of a class slower than `daily` (issue 12:
    # yesterday's gold must fail on a majority of the pool; a statement tool still gets its share).
    max_slow_per_tool: int = 15
    # A chain's cap key (a multi-step program or a T3 investigation, `cap_key`) gets caps of its
    # own (issue 29: the investigations and multi-step families hold their share of the pool; the
    # single lookups, which fill every tool's cap, are bounded by `max_per_tool`).
    max_per_chain: int = 90
    max_slow_per_chain: int = 30
    seed: int = 17


# Fastest first: a tool's cap is filled with its questions that move most before the slower ones.
CLASS_ORDER = ("daily", "weekly", "monthly", "quarterly", "annual", "static")


def visit_key(first, signature: str) -> tuple:
    """Order in which the per-tool cap visits a tool's signatures: observed class, tier, signature."""
    return CLASS_ORDER.index(first.refresh_class), first.tier, signature


@dataclass
class PoolSelection:
    questions: list[Question]
    dropped_solved_signatures: list[str]
    reinstantiated: int
    capped_by_signature: int
    capped_by_tool: int


def tool_of(q: Question) -> str:
    return q.program.calls[0].tool


def cap_key(q) -> str:
    """What the per-tool cap counts a question under: its tool, or for a multi-step program its
    chain of tools and combine operations ("fund_portfolio>daily", "income|pct_difference"), so
    that a chain does not compete with the single lookups of its first tool."""
    program = q.program
    construct = investigation_of(program)
    if construct is not None:
        # A T3 investigation (issue 29) is its own template: a drawdown of daily bars does not
        # compete with the lookups of `daily`, a screen of index constituents not with the
        # index's heaviest constituent.
        tools = ">".join(dict.fromkeys(c.tool for c in program.calls))
        ex = program.extract
        how = ex.pick.op if ex.pick is not None else ex.aggregate
        # The month's close, or its turnover; a pick's ranked figure (issue 39: a peer set ranked by
        # its net margin does not compete with the same set ranked by its ROE or its growth).
        read = f">{ex.arg_field}" if construct == "window_rank" else f">{ex.field}" if construct == "pick" else ""
        return f"{tools}|{construct}:{how}{read}"
    if not is_multi_step(program):
        return tool_of(q)
    tools = ">".join(dict.fromkeys(c.tool for c in program.calls))
    ops = ",".join(step.op for step in program.extract.combine.chain()) if program.extract.combine else ""
    # A figure read as first reported (issue 39) is a template of its own: the growth against the
    # comparative as first reported does not compete with the growth against the restated one.
    refs = [ref for _, ref in program.extract.refs()]
    first = "@first" if any(ref.select.revision == "first" for ref in refs) else ""
    # So is a figure of the company's own fiscal year (the latest annual report, `where_first`):
    # the growth of a March or June year does not compete with the calendar year's `growth_year`.
    fiscal = "@fiscal" if any(ref.select.where_first for ref in refs) else ""
    return (f"{tools}|{ops}" if ops else tools) + first + fiscal


def is_chain(q) -> bool:
    """A multi-step program or a T3 investigation: what the chain caps count."""
    return is_multi_step(q.program) or investigation_of(q.program) is not None


def signature_cap(q, policy: PoolPolicy) -> int:
    return policy.max_per_chain_signature if is_chain(q) else policy.max_per_signature


def key_caps(q, policy: PoolPolicy) -> tuple[int, int]:
    """(questions, of them slower than daily) one cap key keeps at most: a chain's caps or a tool's."""
    if is_chain(q):
        return policy.max_per_chain, policy.max_slow_per_chain
    return policy.max_per_tool, policy.max_slow_per_tool


def select_pool(
    questions: Sequence[Question],
    history: Mapping[str, SignatureHistory],
    policy: PoolPolicy = PoolPolicy(),
) -> PoolSelection:
    by_signature: dict[str, list[Question]] = defaultdict(list)
    for q in sorted(questions, key=lambda q: q.qid):
        by_signature[q.signature].append(q)
    dropped = sorted(
        s for s, h in history.items()
        if s in by_signature and h.agents_evaluated >= 1 and h.agents_solved == h.agents_evaluated
    )
    chosen: list[Question] = []
    capped_sig = reinstantiated = 0
    for signature in sorted(by_signature):
        if signature in dropped:
            continue
        group = by_signature[signature]
        rng = random.Random(f"{policy.seed}:{signature}")
        served = history[signature].served_qids if signature in history else frozenset()
        if served:
            # Fresh entities of the bands served before: same class, same visibility band.
            bands = {visibility_band(q.visibility) for q in group if q.qid in served}
            fresh = [q for q in group if q.qid not in served and visibility_band(q.visibility) in bands]
            rng.shuffle(fresh)
            origin = min(served)
            cap = signature_cap(group[0], policy)
            picked = [q.model_copy(update={"provenance": q.provenance.model_copy(update={"derived_from": origin})})
                      for q in fresh[:cap]]
            reinstantiated += len(picked)
            # Where the reserve has fewer fresh entities than the signature's share, its served
            # questions stay (the soak of 2026-12-05: a weekly re-selection took the pool from
            # 2,592 questions to 1,109, the verbalized reserve holding few unserved questions).
            picked += [q for q in group if q.qid in served][: cap - len(picked)]
        else:
            # Spread across visibility: shuffle, then take distinct levels first.
            pool = list(group)
            rng.shuffle(pool)
            picked = _spread(pool, signature_cap(group[0], policy), rng)
        capped_sig += len(group) - len(picked)
        chosen.extend(picked)
    kept, capped_tool = _cap_per_tool(chosen, policy)
    return PoolSelection(sorted(kept, key=lambda q: q.qid), dropped, reinstantiated, capped_sig, capped_tool)


def _spread(pool: Sequence[Question], n: int, rng: random.Random) -> list[Question]:
    """Up to n questions on evenly spaced visibility levels (random offset), one per level."""
    levels: dict[int, list[Question]] = defaultdict(list)
    for q in pool:
        levels[q.visibility].append(q)
    ordered_levels = sorted(levels)
    if len(ordered_levels) <= n:
        picks = ordered_levels
    else:
        step = len(ordered_levels) / n
        offset = rng.random() * step
        picks = sorted({ordered_levels[int(offset + i * step)] for i in range(n)})
    chosen = [levels[level][0] for level in picks]
    rest = [q for level in ordered_levels for q in levels[level][1:]]
    return (chosen + rest)[:n]


def preselect(candidates: Sequence, per_signature: int, seed: int = 17, signatures_per_tool: int | None = None,
              per_chain_signature: int | None = None) -> list:
    """Before verbalizing (an LLM costs money): keep a reserve of `per_signature` candidates per
    signature, spread over visibility levels; stage 6 picks the pool from these.

    With `signatures_per_tool`, only each tool's first signatures in the order the pool's
    per-tool cap visits them (`visit_key`) are kept: the cap's round-robin never
    reaches the others unless evaluation history drops many before them. A multi-step
    signature keeps `per_chain_signature` (default: `per_signature`), counted under its chain.
    """
    by_signature: dict[str, list] = defaultdict(list)
    for c in sorted(candidates, key=lambda c: c.qid):
        by_signature[c.signature].append(c)
    if signatures_per_tool is not None:
        by_tool: dict[str, list[str]] = defaultdict(list)
        for signature, group in by_signature.items():
            by_tool[cap_key(group[0])].append(signature)
        reachable = {s for sigs in by_tool.values()
                     for s in sorted(sigs, key=lambda s: visit_key(by_signature[s][0], s))[:signatures_per_tool]}
        by_signature = {s: g for s, g in by_signature.items() if s in reachable}
    kept = []
    for signature in sorted(by_signature):
        rng = random.Random(f"{seed}:{signature}")
        group = by_signature[signature]
        rng.shuffle(group)
        n = per_chain_signature if per_chain_signature is not None and is_chain(group[0]) else per_signature
        kept.extend(_spread(group, n, rng))
    return sorted(kept, key=lambda c: c.qid)


def _take_spread(group: list[Question], levels_taken: Counter) -> Question:
    """Remove and return the question of `group` whose visibility level the pool holds fewest
    instrument questions of so far (ties: the group's order). A market-wide series has no level
    of its own: the group's first question."""
    def rank(item: tuple[int, Question]) -> tuple[int, int]:
        index, q = item
        return (levels_taken[q.visibility] if is_instrument(q.asset_class) else 0), index

    index, q = min(enumerate(group), key=rank)
    del group[index]
    if is_instrument(q.asset_class):
        levels_taken[q.visibility] += 1
    return q


def _cap_per_tool(questions: Sequence[Question], policy: PoolPolicy) -> tuple[list[Question], int]:
    """Round-robin over each tool's signatures so the cap keeps a spread of templates and tiers.

    Each visit takes, of the signature's questions, the one on the visibility level the pool holds
    fewest instrument questions of (issue 20): taking the first would take the lowest picked level
    of every signature, and a tool's cap is often reached after one question per signature.
    """
    by_tool: dict[str, dict[str, list[Question]]] = defaultdict(lambda: defaultdict(list))
    for q in questions:
        by_tool[cap_key(q)][q.signature].append(q)
    kept: list[Question] = []
    dropped = 0
    levels_taken: Counter = Counter()
    for tool in sorted(by_tool):
        groups = by_tool[tool]
        order = sorted(groups, key=lambda s: visit_key(groups[s][0], s))
        taken: list[Question] = []
        slow = 0
        cap, slow_cap = key_caps(groups[order[0]][0], policy)
        while len(taken) < cap and any(groups[s] for s in order):
            for s in order:
                if groups[s] and len(taken) < cap:
                    q = _take_spread(groups[s], levels_taken)
                    if q.refresh_class != "daily":
                        if slow >= slow_cap:
                            if is_instrument(q.asset_class):
                                levels_taken[q.visibility] -= 1
                            dropped += 1
                            continue
                        slow += 1
                    taken.append(q)
        dropped += sum(len(groups[s]) for s in order)
        kept.extend(taken)
    return kept, dropped


# --------------------------------------------------------------------------- files


def render_pool(questions: Sequence[Question]) -> bytes:
    return render_jsonl(sorted(questions, key=lambda q: q.qid))


def pool_version(questions: Sequence[Question]) -> str:
    """Content hash of the pool (before the version is stamped into provenance)."""
    unstamped = [q.model_copy(update={"provenance": q.provenance.model_copy(update={"pool_version": None})})
                 for q in questions]
    return "pool-" + hashlib.sha256(render_pool(unstamped)).hexdigest()[:12]


def stamp_version(questions: Sequence[Question]) -> tuple[str, list[Question]]:
    version = pool_version(questions)
    stamped = [q.model_copy(update={"provenance": q.provenance.model_copy(update={"pool_version": version})})
               for q in questions]
    return version, sorted(stamped, key=lambda q: q.qid)


def pool_counts(questions: Iterable[Question]) -> dict[str, dict[str, int]]:
    dims: dict[str, Counter] = defaultdict(Counter)
    for q in questions:
        dims["tier"][q.tier] += 1
        dims["asset_class"][q.asset_class] += 1
        dims["tool"][tool_of(q)] += 1
        dims["visibility"][visibility_label(q.visibility, q.asset_class)] += 1  # series: "market"
        dims["refresh_class"][q.refresh_class] += 1
        dims["verbalizer"][q.provenance.verbalizer] += 1
        dims["language"]["zh+en" if q.question_zh else "en"] += 1
    return {d: dict(sorted(c.items())) for d, c in sorted(dims.items())}


def write_pool(root: Path, questions: Sequence[Question], *, data_service: str,
               created_at: dt.datetime | None = None, catalog_bytes: bytes | None = None) -> PoolManifest:
    """Write questions.jsonl and pool_manifest.json atomically; returns the manifest.

    The manifest's `created_at` is kept from an existing manifest of the same version, so a
    rebuild that selects the same pool leaves both files byte-identical.
    """
    version, stamped = stamp_version(questions)
    data = render_pool(stamped)
    manifest_path = root / MANIFEST_FILE
    if manifest_path.exists():
        previous = PoolManifest.model_validate_json(manifest_path.read_bytes())
        if previous.version == version:
            created_at = previous.created_at
    manifest = PoolManifest(
        version=version, questions=len(stamped), sha256=hashlib.sha256(data).hexdigest(),
        data_service=data_service, created_at=created_at or dt.datetime.now(dt.timezone.utc),
        counts=pool_counts(stamped),
        catalog_sha256=hashlib.sha256(catalog_bytes).hexdigest() if catalog_bytes is not None else None,
    )
    root.mkdir(parents=True, exist_ok=True)
    if catalog_bytes is not None:
        # The catalog the programs were checked against travels with the pool (bound by the manifest).
        write_atomic(root / CATALOG_FILE, catalog_bytes)
    else:
        (root / CATALOG_FILE).unlink(missing_ok=True)  # never an unbound catalog beside a new pool
    write_atomic(root / POOL_FILE, data)
    write_atomic(manifest_path, (json.dumps(manifest.model_dump(mode="json", exclude_none=True), indent=2,
                                            sort_keys=True) + "\n").encode())
    return manifest

