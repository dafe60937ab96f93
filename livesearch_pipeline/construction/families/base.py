"""What every question family shares: the draft record, the registration of a family, the program
helpers its drafts are built with and the phrases its texts are written with.

A family module (one per family or per group of families that share a drafting loop) defines a
`Family`: the names it owns, how it drafts programs from what enumeration explored (`draft`), and
its texts in English and, for the Chinese market, Chinese. `families/registry.py` lists the
families in drafting order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from livesearch_pipeline.construction.formats import value_format
from livesearch_pipeline.construction.models import Candidate, EntityInfo, Naming
from livesearch_pipeline.core.catalog import Catalog, FieldMeta, ToolMeta
from livesearch_pipeline.core.lexicon import Lexicon, LexiconError
from livesearch_pipeline.core.models import (
    PERCENTAGE_POINTS,
    DateSpec,
    Format,
    Program,
    Selection,
    ValueRef,
)
from livesearch_pipeline.core.program import window_rows

FAMILY = "family"
YMD = "%Y%m%d"
PERCENT = Format(kind="percent", decimals=2, unit="%")
# A difference of two returns: percentage points, as an analyst states a return gap.
POINTS_GAP = Format(kind="percent", decimals=2, unit=PERCENTAGE_POINTS)
# A ratio of two amounts, as a percentage (net margin, payout ratio).
RATIO_PERCENT = Format(kind="percent", decimals=2, unit="%", scale=100.0)
# An answer that is a code (a screen's stock, a pick's index).
CODE = Format(kind="text")
# The answer scale of a figure of a stock the program resolves at run time (no sample of it was
# observed): a typical value in the catalog unit, which picks the scale word.
RESOLVED_SAMPLES = {"amount": 1e5, "total_mv": 1e6}
IMPLEMENTED = "实施"
LATEST_SESSIONS = 10
# Statement tool and bar tool of each equity class (growth, margins, the return since a report).
STATEMENT_TOOLS = {"cn_equity": ("income", "daily"), "hk_equity": ("hk_income", "hk_daily"),
                   "us_equity": ("us_income", "us_daily")}
# Bar tool and adjustment-factor tool of each class (adjusted returns, drawdowns).
ADJ_TOOLS = {"cn_equity": ("daily", "adj_factor"), "hk_equity": ("hk_daily", "hk_adjfactor"),
             "us_equity": ("us_daily", "us_adjfactor"), "fund": ("fund_daily", "fund_adj")}


@dataclass
class FamilyDraft:
    """A family's program and the facts enumeration's `_Draft` needs."""

    program: Program
    entity: EntityInfo
    tool: ToolMeta  # the tool of the extracted call (its lexicon entry names the quantity)
    field: FieldMeta
    family: str
    other: EntityInfo | None = None
    aggregate: str | None = None


@dataclass
class DraftInputs:
    """What a family drafts from: the catalog, the entities enumeration covered by tool, their
    explored responses, the date arguments of a tool's latest record (`lookback_of`), the
    stocks a question may name without their code (`handles`), every entity (`market`), each
    listed stock's basic record (`basics`) and each index's current members (`members`). `add` runs one generator and
    records, instead of raising, a field the lexicon has no reading of."""

    catalog: Catalog
    covered: Mapping[str, Sequence[EntityInfo]]
    explored: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]]
    lookback_of: Callable[[ToolMeta, EntityInfo], dict[str, DateSpec]]
    handles: Mapping[str, str] | None = None
    problems: list[str] | None = None
    # Every entity of the market by code, and each listed stock's basic record (`stock_basic`,
    # `hk_basic`, `us_basic`: its A or H code, reporting currency, fiscal year end).
    market: Mapping[str, EntityInfo] = field(default_factory=dict)
    basics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Each index's current members (the peer sets of industry indices).
    members: Mapping[str, Sequence[str]] = field(default_factory=dict)
    out: list[FamilyDraft] = field(default_factory=list)

    def entities(self, tool: str) -> Sequence[EntityInfo]:
        return self.covered.get(tool, ())

    def add(self, generate: Callable[..., list[FamilyDraft]], *args: Any) -> None:
        try:
            self.out.extend(generate(*args))
        except LexiconError as exc:
            if self.problems is not None:
                self.problems.append(f"{generate.__name__}: {exc}")


# (candidate, family name, parameter, lexicon) -> text
TextWriter = Callable[[Candidate, str, str, Lexicon], str]


@dataclass(frozen=True)
class Family:
    """A family (or a group of families drafted in one loop) as the registry lists it.

    `names`: the family names its candidates carry (`family:<name>[:<parameter>]`); `draft`: its
    drafts from `DraftInputs`, appended to `inputs.out` (None when another stage drafts it, as
    enumeration does the pairs of `compare`); `question_en` / `question_zh`: its texts (no
    Chinese text when the family is never about the Chinese market); `tools`: per instrument
    class, the tools whose responses its drafts read (explored for its instruments); `where_forms`:
    how its texts name a record filter of its programs (the lint checks they do); `zh_classes`:
    classes outside the Chinese market whose candidates it writes Chinese texts for."""

    names: tuple[str, ...]
    draft: Callable[[DraftInputs], None] | None
    question_en: TextWriter
    question_zh: TextWriter | None = None
    tools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    where_forms: Mapping[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    # Instrument classes beyond the Chinese market's whose candidates get a Chinese text too (a
    # Hong Kong company that reports in CNY, valued in CNY).
    zh_classes: frozenset[str] = frozenset()


def family_of(c: Candidate) -> tuple[str, str] | None:
    """(family, parameter) of a family candidate, or None."""
    kind, _, rest = c.facts.anchor.partition(":")
    if kind != FAMILY:
        return None
    name, _, param = rest.partition(":")
    return name, param


def is_multi_step(program: Program) -> bool:
    """Two or more calls, or a combine: what issue 20 counts as a multi-step program."""
    return len(program.calls) > 1 or program.extract.combine is not None


def shape_of(program: Program) -> str:
    """A program's shape: calls, combine ops, refs, joins, tools and fields (issue 20's 'shapes')."""
    calls = "+".join(c.tool for c in program.calls)
    refs = ",".join(f"{c.id}.{n}<-{r.call}.{r.field}" for c in program.calls for n, r in sorted(c.refs.items()))
    ex = program.extract
    ops = ",".join(f"{s.op}:{s.other.field}" for s in ex.combine.chain()) if ex.combine else ""
    join = f"*{ex.times.field}" if ex.times else ""
    return f"{calls}|{ex.field}{join}:{ex.aggregate or ''}|{ops}|{refs}"


# --------------------------------------------------------------------------- program helpers


def latest(call: str, key: str, fld: str, **kw: Any) -> ValueRef:
    """The field of the latest record of `call` by `key` (selection keywords in `kw`)."""
    return ValueRef(call=call, select=Selection(mode="latest", key=key, key_fmt=YMD, **kw), field=fld)


def session_window(tool: ToolMeta, calendar: str, sessions: int) -> dict[str, DateSpec]:
    """The date arguments of the last `sessions` sessions of `calendar`."""
    start = next(p for p in tool.date_params if p.role == "start")
    end = next(p for p in tool.date_params if p.role == "end")
    return {start.name: DateSpec(sessions_back=sessions - 1, calendar=calendar, fmt=start.fmt),
            end.name: DateSpec(sessions_back=0, calendar=calendar, fmt=end.fmt)}


def return_window(tool: ToolMeta, calendar: str, sessions: int) -> dict[str, DateSpec]:
    """A return "over the last N sessions": N + 1 closes (core.program.window_rows)."""
    return session_window(tool, calendar, window_rows("pct_change", sessions))


def answer_format(tool: ToolMeta, f: FieldMeta, sample: Any, *, unit: str | None = None) -> Format:
    """The answer format of `f` (its unit, or `unit`) for a value like `sample`."""
    meta = f if unit is None else f.model_copy(update={"unit": unit})
    return value_format(meta, None, sample, YMD, tool=tool.name)


def first_number(records: Sequence[Mapping[str, Any]], name: str) -> Any:
    """The first numeric value of `name` among `records` (None when there is none)."""
    return next((r.get(name) for r in records if isinstance(r.get(name), (int, float))), None)


def gold_tools(catalog: Catalog, *names: str) -> list[ToolMeta] | None:
    """The named tools, or None when one is missing or cannot define a gold program."""
    found = [catalog.get(n) for n in names]
    return None if any(t is None or not t.defines_gold for t in found) else found  # type: ignore[return-value]


# --------------------------------------------------------------------------- text helpers


def nouns(c: Candidate, lexicon: Lexicon, field_name: str | None = None) -> tuple[str, str]:
    """The lexicon's noun phrases (EN, ZH) of the candidate's field, or of `field_name` of its tool."""
    entry = lexicon.require(c.facts.tool, field_name or c.facts.field)
    return entry.en, entry.zh


def subject(c: Candidate) -> tuple[str, str]:
    """The instrument as the texts name it (EN, ZH): its name and code, or as people name it
    without a code (`facts.named_as`, construction/naming.py)."""
    return subject_names(c)


def subject_names(c: Candidate) -> tuple[str, str]:
    """(EN, ZH) name of the candidate's instrument: "name (code)", or its `named_as` phrases."""
    return _named(c.entity_name, c.entity, c.facts.named_as)


def other_names(c: Candidate) -> tuple[str, str]:
    """(EN, ZH) name of the instrument the candidate compares with."""
    return _named(c.facts.other_entity_name or "", c.facts.other_entity or "", c.facts.other_named_as)


def _named(name: str, code: str, naming: Naming | None) -> tuple[str, str]:
    if naming is None:
        return f"{name} ({code})", f"{name}（{code}）"
    return naming.en, naming.zh or naming.en


def sessions_spanned(c: Candidate) -> int | None:
    """Sessions from the first close of the extracted window to its last (the window convention
    the text states), or None when the window is not counted in sessions."""
    call = next(call for call in c.program.calls if call.id == c.program.extract.call)
    start, end = call.dates.get("start_date"), call.dates.get("end_date")
    if start is None or end is None or start.sessions_back is None or end.sessions_back is None:
        return None
    return start.sessions_back - end.sessions_back


# --------------------------------------------------------------------------- names

TICKER_CLASSES = ("cn_equity", "hk_equity", "us_equity")


def ticker_of(code: str) -> str:
    """A stock's ticker as people type it: its code without the exchange suffix (600123, 00721, AAPL)."""
    return code.split(".")[0]


def unique_handles(entities: Sequence[EntityInfo]) -> dict[str, str]:
    """code -> how a question may name the stock alone: "name" when exactly one entity of the
    market answers to its short name, else "ticker" when exactly one answers to its ticker (no
    other entity has it as name, code or ticker); stocks with neither are left out."""
    seen: Counter = Counter()
    for e in entities:
        # Every code's bare digits count (people say 000001 for an index too), but only a stock
        # is named by its ticker.
        handles = {e.name, e.code, ticker_of(e.code)}
        seen.update(h.casefold() for h in handles)
    out = {}
    for e in entities:
        if e.asset_class not in TICKER_CLASSES:
            continue
        if seen[e.name.casefold()] == 1:
            out[e.code] = "name"
        elif seen[ticker_of(e.code).casefold()] == 1:
            out[e.code] = "ticker"
    return out


def handle(c: Candidate, how: str) -> str:
    """The stock as people name it: its short name or its ticker alone (`unique_handles`)."""
    return c.entity_name if how == "name" else ticker_of(c.entity)
