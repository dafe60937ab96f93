"""The bilingual field lexicon (DESIGN §2 item 5): how a professional names a field and its unit.

The reviewed data file `dataservice/lexicon.yaml` sits beside the catalog. It holds, per record
field, an English noun phrase (with its grammatical number), a Chinese noun phrase and the
*kind* of quantity, which fixes the answer's unit, scale and precision (construction/formats.py)
and the unit phrase of both question texts (construction/verbalize.py). Entries are keyed by
field name; a tool overrides some keys where the same name means something else there.

Pure: reading the file is the only effect, and it is cached per path.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

import yaml
from pydantic import ValidationError, model_validator

from livesearch_pipeline.core.models import StrictModel

LEXICON_PATH = Path(__file__).resolve().parent.parent / "dataservice" / "lexicon.yaml"

Kind = Literal[
    "price", "nav", "amount", "shares", "units", "percent", "macro_percent", "index_level",
    "macro_index", "fx", "ratio", "count", "factor", "label",
]
ALL_KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]
# What a value is over time (the lexicon file's header explains each): it decides which window
# aggregates are sound (construction/semantics.py).
Quantity = Literal["flow", "stock", "level", "derived", "bound", "daily_high", "daily_low", "artefact",
                   "session_open"]
ALL_QUANTITIES: tuple[str, ...] = Quantity.__args__  # type: ignore[attr-defined]
# A kind's quantity when its entry states none: amounts and counts accumulate, the rest are levels.
FLOW_KINDS = frozenset({"amount", "shares", "units", "count"})


def default_quantity(kind: str) -> Quantity | None:
    if kind == "label":
        return None
    return "flow" if kind in FLOW_KINDS else "level"


class LexiconError(ValueError):
    """The lexicon file is malformed, or a field the pipeline needs has no entry."""


class KindSpec(StrictModel):
    decimals: int | None
    scaled: bool = False


class LexEntry(StrictModel):
    en: str
    zh: str
    kind: Kind
    plural: bool = False
    quantity: Quantity | None = None  # None: the kind's default (`quantity_of`)
    # A derived indicator's definition as a terminal states it (a sentence the text ends with):
    # "Here MACD is ... 2 × (DIF − DEA) ...". Both languages or neither.
    define_en: str | None = None
    define_zh: str | None = None

    @model_validator(mode="after")
    def _both_definitions(self) -> LexEntry:
        if (self.define_en is None) != (self.define_zh is None):
            raise ValueError(f"{self.en!r}: give define_en and define_zh together, or neither")
        return self

    @property
    def quantity_of(self) -> Quantity | None:
        return self.quantity if self.quantity is not None else default_quantity(self.kind)


class LexOverride(StrictModel):
    """A tool's partial entry: the keys it changes of the field-level entry."""

    en: str | None = None
    zh: str | None = None
    kind: Kind | None = None
    plural: bool | None = None
    quantity: Quantity | None = None
    define_en: str | None = None
    define_zh: str | None = None


class ChineseMarket(StrictModel):
    """Series of the Chinese market that are not instruments: their questions get a Chinese text."""

    tools: list[str] = []  # series tools: China's statistics, Chinese rates, A-share market totals
    currencies: list[str] = []  # an FX pair with one of these currencies is Chinese-market


class Lexicon(StrictModel):
    kinds: dict[Kind, KindSpec]
    fields: dict[str, LexEntry]
    tools: dict[str, dict[str, LexOverride]] = {}
    # Tools whose records are weekly or monthly bars, and the bar length the text must name.
    bars: dict[str, Literal["week", "month"]] = {}
    chinese_market: ChineseMarket = ChineseMarket()
    # ISO code -> the Chinese name of the currency, for FX pairs in a Chinese text.
    currency_names: dict[str, str] = {}
    # Label values of the market (industries, fund types, boards, ...): each group lists the names
    # of one label in Chinese and English, so an answer in either language matches without a judge.
    labels: list[list[str]] = []

    @model_validator(mode="after")
    def _complete(self) -> Lexicon:
        missing = [k for k in ALL_KINDS if k not in self.kinds]
        if missing:
            raise ValueError(f"kinds {missing} have no precision in the kinds table")
        for tool, overrides in self.tools.items():
            for name, o in overrides.items():
                if name not in self.fields and (o.en is None or o.zh is None or o.kind is None):
                    raise ValueError(f"tools.{tool}.{name}: no field-level entry to complete it; "
                                     "give en, zh and kind")
        for name, e in self.fields.items():
            if not e.en.strip() or not e.zh.strip():
                raise ValueError(f"fields.{name}: empty noun phrase")
        seen: dict[str, int] = {}
        for number, group in enumerate(self.labels):
            if len(group) < 2 or any(not name.strip() for name in group):
                raise ValueError(f"labels[{number}]: a label group lists at least two non-empty names, got {group}")
            for name in group:
                key = name.strip().casefold()
                if key in seen and seen[key] != number:
                    raise ValueError(f"labels[{number}]: {name!r} is already a name of labels[{seen[key]}]")
                seen[key] = number
        unnamed = [c for c in self.chinese_market.currencies if c not in self.currency_names]
        if unnamed:
            raise ValueError(f"chinese_market.currencies {unnamed} have no entry in currency_names")
        return self

    def label_names(self, value: str) -> tuple[str, ...]:
        """The other names of the label `value` (case-insensitive), or () when it is not a label."""
        key = value.strip().casefold()
        for group in self.labels:
            if any(name.strip().casefold() == key for name in group):
                return tuple(name for name in group if name.strip().casefold() != key)
        return ()

    def pair_zh(self, base: str, quote: str) -> str | None:
        """"美元兑离岸人民币" for USD/CNH; None when a currency has no Chinese name."""
        if base not in self.currency_names or quote not in self.currency_names:
            return None
        return f"{self.currency_names[base]}兑{self.currency_names[quote]}"

    def entry(self, tool: str | None, field: str) -> LexEntry | None:
        """The entry of `field` as `tool` uses it (its override applied), or None."""
        override = self.tools.get(tool or "", {}).get(field)
        base = self.fields.get(field)
        if override is None:
            return base
        merged = {**(base.model_dump() if base else {}),
                  **{k: v for k, v in override.model_dump().items() if v is not None}}
        return LexEntry(**merged)

    def entries_for(self, field: str) -> list[LexEntry]:
        """Every reading of a field name: the field-level entry and each tool's override."""
        out = [self.fields[field]] if field in self.fields else []
        for tool, overrides in sorted(self.tools.items()):
            if field in overrides:
                merged = self.entry(tool, field)
                assert merged is not None
                out.append(merged)
        return out

    def require(self, tool: str | None, field: str) -> LexEntry:
        found = self.entry(tool, field)
        if found is None:
            raise LexiconError(f"no lexicon entry for field {field!r} of tool {tool!r}; "
                               f"add it to {LEXICON_PATH.name} (fields: or tools: {tool}:)")
        return found


@functools.lru_cache(maxsize=8)
def load_lexicon(path: Path = LEXICON_PATH) -> Lexicon:
    """Read and check the lexicon file; LexiconError names the file and the bad key."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise LexiconError(f"{path}: cannot read the lexicon: {exc}") from exc
    if not isinstance(raw, dict):
        raise LexiconError(f"{path}: expected a mapping with kinds, fields and tools")
    # YAML reads keys such as `on` or `1y` as they are written only when quoted; field names are
    # strings whatever YAML makes of them.
    for section in ("fields", "tools"):
        if isinstance(raw.get(section), dict):
            raw[section] = {str(k): v for k, v in raw[section].items()}
    if isinstance(raw.get("tools"), dict):
        raw["tools"] = {t: ({str(k): v for k, v in o.items()} if isinstance(o, dict) else o)
                        for t, o in raw["tools"].items()}
    try:
        return Lexicon.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LexiconError(f"{path}: {where}: {first['msg']} ({exc.error_count()} problem(s))") from exc
