"""How a site prints what it shows: figures, labels, names and tables.

A figure is printed the way its site prints it (`Look`): at the precision of the record (Hong
Kong prices at their tick sizes), rounded where the site rounds, restated in 亿元 or million where
it restates, shifted 0.5-3% where the page carries a third-party feed that disagrees. Labels are
the reviewed lexicon's nouns in the site's own words (web/wording.py), names drop the market's
construction words ("Synthetic …", "合成…"), and a data set is named the way portals name it, never
by its tool. `group_table` prints one time key's records, `history_table` a daily series.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

from livesearch_pipeline.core.catalog import FieldMeta, ToolMeta
from livesearch_pipeline.core.lexicon import load_lexicon
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.web.render import Table, restate_amount
from livesearch_pipeline.web.sites import Site, uniform
from livesearch_pipeline.web.wording import data_title, site_label


def _shown_fields(meta: ToolMeta) -> list[FieldMeta]:
    """Fields a page prints: figures, labels, dates, adjustment factors, and the fields that tell
    several series of one time key apart (the exchange of a market-wide margin row, a pair)."""
    return [f for f in meta.fields
            if (f.role in ("measure", "label", "date", "factor") or f.name in meta.series_keys)
            and f.name != meta.entity_param]


# Hong Kong prices are quoted at their tick sizes: three decimals below HKD 0.50, two above. A
# volume-weighted average price is a quotient, not a traded price: printed as the exchange computes
# it (to four decimals), so that a change of it can be worked out from the page.
_HK_PRICE_TOOLS = frozenset({"hk_daily", "hk_daily_adj"})
_HK_PRICE_FIELDS = frozenset({"open", "high", "low", "close", "pre_close", "change"})


@dataclass
class Look:
    """How one site shows figures on one page."""

    site: Site
    disagree_seed: float | None  # not None: figures come from a third-party feed that differs


def _figure(look: Look, f: FieldMeta, value: Any, seed: int, salt: str,
            meta: ToolMeta | None = None) -> tuple[str, str]:
    """(value text, unit text) of one field as `look` prints it.

    Called for every figure of every table (millions per web): the decimals of the record's
    figure (its shortest repr) and `render.format_number` are inlined here, with the same results."""
    if value is None:
        return ("—" if look.site.lang == "en" else "--"), ""
    if (f.type != "number" and f.type != "integer") or isinstance(value, str):
        return str(value), ""
    number = float(value)
    decimals = 0
    if isinstance(value, float):
        text = repr(number)
        dot = text.find(".")
        if dot >= 0 and "e" not in text:
            decimals = len(text) - dot - 1
        if meta is not None and meta.name in _HK_PRICE_TOOLS and f.unit == "HKD" and f.name in _HK_PRICE_FIELDS:
            decimals = 3 if abs(number) < 0.5 and f.name != "change" else 2
    site = look.site
    if look.disagree_seed is not None and f.role == "measure" and number != 0:
        number = third_party_figure(number, look.disagree_seed, f, seed, salt, meta)
    unit = f.unit or ""
    if site.restates:
        restated = restate_amount(number, f.unit, site.lang)
        if restated is not None:
            number, unit = restated
            decimals = 2
    if site.rounding is not None and decimals > site.rounding:
        decimals = site.rounding
    if unit == "points" and site.lang == "zh":
        unit = "点"
    if isinstance(value, int) and decimals == 0 and look.disagree_seed is None and not site.restates:
        return str(value), unit
    if not math.isfinite(number):
        raise ValueError(f"non-finite figure {number!r}")
    return f"{number:.{decimals}f}", unit


def _plain_figure(value: Any, tick: bool, not_change: bool, rounding: int | None) -> str:
    """`_figure`'s text of a number field's value (not None) on a site that prints figures as they
    are: `tick`, a Hong Kong price at its tick size; `not_change`, not the field "change"."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, float):
        number = float(value)
        text = repr(number)
        dot = text.find(".")
        decimals = len(text) - dot - 1 if dot >= 0 and "e" not in text else 0
        if tick:
            decimals = 3 if abs(number) < 0.5 and not_change else 2
        if rounding is not None and decimals > rounding:
            decimals = rounding
    elif isinstance(value, int):
        return str(value)
    else:
        number, decimals = float(value), 0
    if not math.isfinite(number):
        raise ValueError(f"non-finite figure {number!r}")
    return f"{number:.{decimals}f}"


def third_party_figure(number: float, disagree_seed: float, f: FieldMeta, seed: int, salt: str,
                       meta: ToolMeta | None = None) -> float:
    """A third-party feed's copy of a figure: off by 0.5-3%, never impossible (issue 28). One shift
    per record and unit, so a bar's open, high, low and close move together and the bar stays
    within its own bounds; a whole count (a board lot, a volume) stays whole; reference data
    (a static tool: board lots, contract sizes) is copied as it is."""
    if meta is not None and meta.refresh_class == "static":
        return number
    shift = 0.005 + 0.025 * uniform(seed, "disagree", salt, f.unit or f.name)
    shifted = number * (1 + (shift if disagree_seed < 0.5 else -shift))
    whole = f.type == "integer" or f.unit in ("shares", "lots", "units")
    return float(round(shifted)) if whole and float(number).is_integer() else shifted


def _label(meta: ToolMeta, f: FieldMeta, lang: str, site: str = "exchange") -> str:
    """A field's label as `site` prints it: the reviewed lexicon's noun in the site's own words
    ("Close", "收盘"; web/wording.py), the catalog's description where the lexicon has no entry
    (non-answer fields)."""
    key = (meta.name, f.name, f.description, f.description_zh, lang, site)
    label = _LABELS.get(key)
    if label is None:
        entry = load_lexicon().entry(meta.name, f.name)
        if entry is None:
            text = (f.description_zh or f.description) if lang == "zh" else f.description
            label = re.split(r"[;(（]", text, maxsplit=1)[0].strip() or f.name
        else:
            label = site_label(entry.zh if lang == "zh" else entry.en, lang, site)
        _LABELS[key] = label
    return label


# Labels already worked out: a pure function of the tool, the field, the language and the site
# (the lexicon is read once per process), asked for again by every table of the data set.
_LABELS: dict[tuple[str, str, str | None, str | None, str, str], str] = {}


# The market names its industry indices after their construction ("Synthetic Bank Industry Index",
# "合成银行行业指数"); a real site prints the industry's name.
_CONSTRUCTION_WORDS = re.compile(r"^(?:Synthetic|Fictional)\s+|^(?:合成|虚构)")


def plain(name: str | None) -> str | None:
    return _CONSTRUCTION_WORDS.sub("", name) if name else name


def display_name(entity: Entity | None, lang: str) -> str:
    if entity is None:
        return ""
    name_en, name_zh = plain(entity.name_en) or "", plain(entity.name_zh)
    if lang == "zh":
        return name_zh or name_en
    return name_en if not name_zh else f"{name_en} {name_zh}"


_NAME_SUFFIXES_ZH = ("金融控股", "实业集团", "控股集团", "股份有限公司", "有限公司", "集团", "股份", "控股", "科技", "医疗",
                     "实业", "银行", "证券", "保险", "能源", "电子", "指数", "基金")


def short_name(entity: Entity) -> str:
    """The name people shorten it to: a Chinese name without its company-form suffix
    ("槿垚金融控股" → "槿垚"), else the first word of the English name."""
    name_zh, name_en = plain(entity.name_zh), plain(entity.name_en) or entity.name_en
    if name_zh:
        for suffix in _NAME_SUFFIXES_ZH:
            if name_zh.endswith(suffix) and len(name_zh) > len(suffix) + 1:
                return name_zh[: -len(suffix)]
        return name_zh
    return name_en.split(" ")[0]


def tool_title(meta: ToolMeta, lang: str) -> str:
    """The data set's name as a site prints it ("Daily quotes", "日行情"): never a tool's name."""
    return data_title(meta.name, meta.service, lang)


def as_of_text(meta: ToolMeta, group: list[dict[str, Any]], lang: str) -> str:
    record = group[0]
    key = record.get(meta.time_key) if meta.time_key else None
    if key is None:
        return "Reference data." if lang == "en" else "参考资料。"
    return f"Data as of {key}." if lang == "en" else f"数据截至{key}。"


def unit_text(unit: str | None, lang: str) -> str:
    if unit == "points" and lang == "zh":
        return "点"
    return unit or ""


def group_table(meta: ToolMeta, group: list[dict[str, Any]], look: Look, seed: int, salt: str) -> Table:
    """One record: Item | Value | Unit rows. Several records of one time key (holders, segments,
    series): one row per record, one column per field."""
    lang, site = look.site.lang, look.site.key
    # A figure's unit as its record states it (a Hong Kong company's statements in its reporting currency).
    fields = [f.in_record_unit(group[0]) for f in _shown_fields(meta)] if group else _shown_fields(meta)
    if len(group) == 1:
        rows = []
        for f in fields:
            text, unit = _figure(look, f, group[0].get(f.name), seed, salt, meta)
            rows.append((_label(meta, f, lang, site), text, unit))
        header = ("Item", "Value", "Unit") if lang == "en" else ("项目", "数值", "单位")
        return Table(header=header, rows=tuple(rows))
    header = tuple(_label(meta, f, lang, site) + (f" ({unit_text(f.unit, lang)})" if f.unit and not look.site.restates
                                                  else "") for f in fields)
    rows = []
    for index, record in enumerate(group):
        cells = []
        for f in fields:
            text, unit = _figure(look, f, record.get(f.name), seed, f"{salt}:{index}", meta)
            cells.append(f"{text} {unit}".strip() if look.site.restates and unit and unit != (f.unit or "") else text)
        rows.append(tuple(cells))
    return Table(header=header, rows=tuple(rows))


def history_table(meta: ToolMeta, groups: Sequence[list[dict[str, Any]]], look: Look, seed: int,
                   salt: str) -> Table:
    """Records of a daily series, newest first: Date | <series fields> | <figures>, one row per
    record (several per date when the series carries several, e.g. one per exchange)."""
    lang = look.site.lang
    series = [f for f in meta.fields if f.name in meta.series_keys and f.name != meta.entity_param]
    fields = [f for f in _shown_fields(meta) if f.type in ("number", "integer") and f.name not in meta.series_keys]
    if groups and groups[0]:
        fields = [f.in_record_unit(groups[0][0]) for f in fields]  # one entity's records: one reporting currency
    units: dict[str, str | None] = {f.name: f.unit for f in fields}
    if look.site.restates and groups:
        sample = groups[0][0]
        units = {f.name: (restate_amount(float(sample[f.name]), f.unit, lang) or (0, f.unit))[1]
                 if isinstance(sample.get(f.name), (int, float)) else f.unit for f in fields}
    # A site printing the figures as they are (no third-party feed, no restating): `_figure`'s text
    # for each cell, column by column (`_plain_figure`), without a call per cell to `_figure`.
    plain = look.disagree_seed is None and not look.site.restates
    columns = [(f.name, meta.name in _HK_PRICE_TOOLS and f.unit == "HKD" and f.name in _HK_PRICE_FIELDS,
                f.name != "change") for f in fields]
    none_text, rounding = ("—" if lang == "en" else "--"), look.site.rounding
    rows = []
    for index, group in enumerate(groups):
        for position, record in enumerate(group):
            cells = [str(record.get(meta.time_key))]
            cells += [str(record.get(f.name) if record.get(f.name) is not None else "") for f in series]
            if plain:
                for name, tick, not_change in columns:
                    value = record.get(name)
                    cells.append(none_text if value is None else _plain_figure(value, tick, not_change, rounding))
            else:
                record_salt = f"{salt}:h{index}:{position}"
                for f in fields:
                    text, _ = _figure(look, f, record.get(f.name), seed, record_salt, meta)
                    cells.append(text)
            rows.append(tuple(cells))
    header = ("Date" if lang == "en" else "日期", *(_label(meta, f, lang, look.site.key) for f in series),
              *(_label(meta, f, lang, look.site.key) + (f" ({unit_text(units[f.name], lang)})" if units[f.name] else "")
                for f in fields))
    return Table(header, tuple(rows))


def has_figures(meta: ToolMeta, groups: Sequence[list[dict[str, Any]]]) -> bool:
    """Whether the records hold anything but their dates and codes (no page shows only a date row)."""
    names = [f.name for f in _shown_fields(meta) if f.role in ("measure", "label", "factor")]
    return any(record.get(name) is not None for group in groups for record in group for name in names)
