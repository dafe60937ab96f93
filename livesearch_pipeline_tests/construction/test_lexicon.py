"""The bilingual field lexicon: it covers every answerable field, and its loader is strict."""

from __future__ import annotations

import re

import pytest

from livesearch_pipeline.construction.formats import value_format
from livesearch_pipeline.core.lexicon import LEXICON_PATH, LexiconError, load_lexicon
from livesearch_pipeline.dataservice.catalog import ServiceConfig, build_catalog, collect_tool_specs

CATALOG = build_catalog(collect_tool_specs(), ServiceConfig())
CJK = re.compile(r"[\u4e00-\u9fff]")
UNIT_IN_NOUN_EN = re.compile(r"\b(CNY|HKD|USD|percent|in (?:10 )?thousand|in (?:100 )?million)\b|[(（:=]")
UNIT_IN_NOUN_ZH = re.compile(r"[（(](?:元|万元|亿元|千元|%|股|万股|手|HKD|USD|CNY)[）)]|CNY|HKD|USD")


def _answerable():
    for tool in CATALOG.data_tools():
        for f in tool.fields:
            if f.answerable:
                yield tool, f


def test_every_answerable_field_of_every_tool_has_an_entry():
    lexicon = load_lexicon()
    missing = [f"{t.name}.{f.name}" for t, f in _answerable() if lexicon.entry(t.name, f.name) is None]
    assert missing == [], f"add lexicon entries for {missing}"


def test_entries_read_like_an_analyst_wrote_them():
    lexicon = load_lexicon()
    problems = []
    for tool, f in _answerable():
        e = lexicon.entry(tool.name, f.name)
        if UNIT_IN_NOUN_EN.search(e.en) or CJK.search(e.en):
            problems.append(f"{tool.name}.{f.name} en={e.en!r}")
        if UNIT_IN_NOUN_ZH.search(e.zh) or not CJK.search(e.zh):
            problems.append(f"{tool.name}.{f.name} zh={e.zh!r}")
        if e.en.strip().casefold() == f.description.strip().casefold() and _has_aside(f.description):
            problems.append(f"{tool.name}.{f.name} pastes its description")
    assert problems == []


def _has_aside(text: str) -> bool:
    return bool(re.search(r"[(:;=]", text))


def test_every_numeric_answerable_field_gets_a_format_from_its_entry():
    """The tool's reading and the unit-fitting reading (no tool given) agree on the format, unless
    the tool overrides the kind on purpose (an ETF's volume counts fund units, not shares:
    DESIGN §4.8), which then gives the format its kind says."""
    disagree = []
    lexicon = load_lexicon()
    for tool, f in _answerable():
        if f.type not in ("number", "integer"):
            continue
        with_tool = value_format(f, None, 1234.5, "%Y%m%d", tool=tool.name)
        without = value_format(f, None, 1234.5, "%Y%m%d")
        override = lexicon.tools.get(tool.name, {}).get(f.name)
        if with_tool != without and override is not None and override.kind == "units":
            assert (with_tool.unit or "").endswith("units"), f"{tool.name}.{f.name}: {with_tool}"
            continue
        if with_tool != without:
            disagree.append(f"{tool.name}.{f.name}: {with_tool} vs {without}")
    assert disagree == []


def test_tool_override_changes_only_its_keys():
    lexicon = load_lexicon()
    base, weekly = lexicon.entry(None, "close"), lexicon.entry("weekly", "close")
    assert (base.en, base.kind) == ("closing price", "price")
    assert (weekly.en, weekly.zh, weekly.kind) == ("weekly closing price", "周收盘价", "price")
    assert lexicon.entry("index_daily", "close").kind == "index_level"
    assert lexicon.entry("balancesheet", "total_assets").plural is True


def _write(tmp_path, text: str):
    path = tmp_path / "lexicon.yaml"
    path.write_text(LEXICON_PATH.read_text(encoding="utf-8") + text, encoding="utf-8")
    return path


def test_loader_rejects_unknown_keys_naming_them(tmp_path):
    path = tmp_path / "lexicon.yaml"
    source = LEXICON_PATH.read_text(encoding="utf-8")
    path.write_text(source.replace("  accounts_receiv: {", "  accounts_receiv: {colour: red, ", 1), encoding="utf-8")
    with pytest.raises(LexiconError, match=r"fields\.accounts_receiv\.colour"):
        load_lexicon(path)


def test_loader_rejects_an_unknown_kind(tmp_path):
    path = tmp_path / "lexicon.yaml"
    source = LEXICON_PATH.read_text(encoding="utf-8")
    path.write_text(source.replace("accounts receivable, kind: amount", "accounts receivable, kind: money", 1),
                    encoding="utf-8")
    with pytest.raises(LexiconError, match="accounts_receiv"):
        load_lexicon(path)


def test_loader_rejects_an_incomplete_override_of_an_unknown_field(tmp_path):
    path = _write(tmp_path, "  daily:\n    no_such_field: {en: something}\n")
    with pytest.raises(LexiconError, match="no_such_field"):
        load_lexicon(path)


def test_loader_names_an_unreadable_file(tmp_path):
    with pytest.raises(LexiconError, match="cannot read"):
        load_lexicon(tmp_path / "missing.yaml")


def test_bar_tools_match_the_catalogs_refresh_classes():
    """`bars` names every weekly/monthly OHLC bar tool of the catalog, with its bar length."""
    bars = load_lexicon().bars
    ohlc = {"open", "high", "low", "close"}
    expected = {t.name: t.refresh_class[:-2] for t in CATALOG.data_tools()
                if t.refresh_class in ("weekly", "monthly") and ohlc <= {f.name for f in t.fields}}
    assert bars == expected


def test_chinese_market_tools_are_series_tools_of_the_catalog_with_chinese_nouns():
    lexicon = load_lexicon()
    instruments = {"cn_equity", "hk_equity", "us_equity", "index", "fund"}
    problems = []
    for name in lexicon.chinese_market.tools:
        tool = CATALOG.get(name)
        if tool is None:
            problems.append(f"{name}: not a catalog tool")
            continue
        if set(tool.asset_classes) & instruments:
            problems.append(f"{name}: an instrument tool ({tool.asset_classes}); ZH_CLASSES covers those")
        for f in tool.fields:
            if not f.answerable:
                continue
            zh = lexicon.entry(name, f.name).zh
            # entirely Chinese: an abbreviation only in parentheses after the Chinese name ("（CPI）", "（综合PMI）")
            if re.search(r"[A-Za-z]", re.sub(r"（[^（）]+）", "", zh)):
                problems.append(f"{name}.{f.name}: zh {zh!r} has Latin letters outside （…）")
    assert problems == []
    for code in lexicon.chinese_market.currencies:
        assert CJK.search(lexicon.currency_names[code])
    assert lexicon.pair_zh("USD", "CNY") == "美元兑人民币"
    assert lexicon.pair_zh("USD", "XXX") is None


def test_loader_rejects_a_chinese_currency_without_a_name(tmp_path):
    path = tmp_path / "lexicon.yaml"
    text = LEXICON_PATH.read_text(encoding="utf-8").replace("CNH: 离岸人民币, ", "")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LexiconError, match=r"chinese_market.*CNH.*currency_names"):
        load_lexicon(path)


def test_no_two_answerable_fields_of_a_tool_share_a_noun():
    """A question names its figure by the noun alone: two columns of one data set with one noun
    (a turnover rate on total and on free-float shares, both 换手率) leave a reader guessing."""
    lexicon = load_lexicon()
    clashes = []
    for tool in CATALOG.data_tools():
        for lang in ("en", "zh"):
            seen: dict[str, str] = {}
            for f in tool.fields:
                if not f.answerable:
                    continue
                noun = getattr(lexicon.entry(tool.name, f.name), lang)
                if noun in seen:
                    clashes.append(f"{tool.name}: {seen[noun]} and {f.name} are both {noun!r} ({lang})")
                seen.setdefault(noun, f.name)
    assert clashes == []


def test_the_float_holders_list_is_named_in_its_nouns():
    """A shareholder appears in both top-10 lists with different figures: a question about the
    float holders' list says so in both languages."""
    lexicon = load_lexicon()
    for f in ("hold_amount", "hold_change", "hold_ratio", "hold_float_ratio"):
        holders, floats = lexicon.entry("top10_holders", f), lexicon.entry("top10_floatholders", f)
        if holders is None or floats is None:
            continue
        assert floats.en != holders.en and "float-share holding" in floats.en, f
        assert floats.zh != holders.zh and "流通股" in floats.zh, f
