"""Entities named as people name them (issue 39, construction/naming.py): every name the data
service knows, a name used alone only where it fits one entity, the deterministic share of
code-free questions, and their texts in both languages."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

from livesearch_pipeline.construction.lint import lint_question
from livesearch_pipeline.construction.naming import (
    CODE_FREE_PERCENT,
    KnownName,
    NameBook,
    code_mentions,
    fitting_entities,
    fold,
    handles,
    naming_for,
    service_names,
    with_naming,
)
from livesearch_pipeline.construction.verbalize import (
    has_chinese_text,
    lint_context,
    template_question_en,
    template_question_zh,
)
from livesearch_pipeline_tests.construction.builders import candidate

CLOCK = dt.date(2026, 11, 27)


def book(*names: tuple[str, str, str]) -> NameBook:
    return NameBook(KnownName(code, name, kind) for code, name, kind in names)


SHARED = book(("600001.SH", "恒宇电气", "short"), ("600001.SH", "Hengyu Electric", "english"),
              ("000001.SZ", "兰亭食品", "short"), ("600002.SH", "兰亭食品", "short"),
              ("159730.SZ", "骞澜科技ETF", "short"), ("600003.SH", "骞澜科技", "short"),
              ("600004.SH", "青山矿业", "short"), ("600005.SH", "青山矿业", "former"),
              ("600006.SH", "沅棠食品", "short"), ("600006.SH", "沅棠科技", "former"))


def test_a_name_shared_by_two_entities_is_not_used_without_a_code():
    # Two stocks named 兰亭食品: neither is named alone.
    assert SHARED.fits("兰亭食品") == {"000001.SZ", "600002.SH"}
    assert handles("000001.SZ", "兰亭食品", SHARED) == {}
    assert naming_for("ls-0000000000000000", "000001.SZ", "兰亭食品", SHARED, chinese=True) is None
    # A name contained in another entity's (a search for 骞澜科技 returns 骞澜科技ETF too): neither.
    assert SHARED.fits("骞澜科技") == {"159730.SZ", "600003.SH"} == SHARED.fits("骞澜科技ETF")
    assert handles("600003.SH", "骞澜科技", SHARED) == handles("159730.SZ", "骞澜科技ETF", SHARED) == {}
    # Another company's former name is a name it is known by: 青山矿业 is not used alone either.
    assert handles("600004.SH", "青山矿业", SHARED) == {}
    # A name of one entity only is used, so are its English and former names.
    assert handles("600001.SH", "恒宇电气", SHARED) == {"short": "恒宇电气", "english": "Hengyu Electric"}
    assert handles("600006.SH", "沅棠食品", SHARED) == {"short": "沅棠食品", "former": "沅棠科技"}
    # A question about a stock whose name is shared keeps the code in both texts.
    c = candidate("000001.SZ", anchor="latest")
    c = c.model_copy(update={"entity_name": "兰亭食品"})
    unchanged = with_naming(c, SHARED, has_chinese_text)
    assert unchanged.facts.named_as is None
    assert "000001.SZ" in template_question_en(unchanged) and "000001.SZ" in template_question_zh(unchanged)


def test_a_former_name_of_a_company_listed_in_two_markets_fits_both_listings():
    """A company listed as an A-share and an H-share is one company: the former name `namechange`
    records for its A-share is its H-share's too (on the web its Hong Kong company page says
    "Formerly ..."), so it is never used alone (a question naming it would fit two codes)."""
    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.server import DataService

    names = service_names(CLOCK)
    service = DataService(config=ServiceConfig(seed=20260101, clock=CLOCK))
    pairs = [(r["ts_code"], r["h_code"]) for r in service.call("stock_basic", {})["items"] if r.get("h_code")]
    assert pairs, "the market has A/H dual listings"
    renamed = [(a, h) for a, h in pairs if names.names_of(a, "former")]
    assert renamed, "some dual-listed company was renamed"
    for a, h in renamed:
        for former in names.names_of(a, "former"):
            assert {a, h} <= names.fits(former) and not names.alone(former, a), (a, h, former)


def test_names_are_compared_case_and_width_insensitively():
    assert fold("Ｈｅｎｇｙｕ  ELECTRIC") == fold("hengyu electric")
    assert SHARED.fits("hengyu electric") == {"600001.SH"}
    assert SHARED.fits("ＨＥＮＧＹＵ") == {"600001.SH"}  # contained in the English name
    assert SHARED.fits("恒") == SHARED.fits("恒宇电气")  # a prefix fits what it starts


def test_the_service_knows_short_full_english_and_former_names():
    names = service_names(CLOCK)
    renamed = next(code for code, known in names.by_code.items() if any(n.kind == "former" for n in known))
    kinds = {n.kind for n in names.by_code[renamed]}
    assert {"short", "full", "english", "former"} <= kinds
    # Index and fund names are known too.
    assert any(code.endswith(".OF") for code in names.by_code)
    assert any(n.kind == "full" for code, known in names.by_code.items() if code.endswith((".SI",)) for n in known)


def test_the_code_free_share_is_deterministic_spread_and_named_in_each_language():
    many = NameBook(KnownName(f"60{i:04d}.SH", name, kind) for i in range(400)
                    for name, kind in ((f"名{i:04d}号", "short"), (f"Name{i:04d} Group", "english"),
                                       *(((f"旧{i:04d}号", "former"),) if i % 3 == 0 else ())))
    kinds: Counter = Counter()
    for i in range(400):
        qid = f"ls-{i:016x}"
        first = naming_for(qid, f"60{i:04d}.SH", f"名{i:04d}号", many, chinese=True)
        assert first == naming_for(qid, f"60{i:04d}.SH", f"名{i:04d}号", many, chinese=True)  # deterministic
        kinds[first.kind if first else None] += 1
        if first is not None:
            # The Chinese text names it in Chinese: its short name, or a former name.
            assert first.zh is not None and not first.zh.isascii()
    assert abs(sum(v for k, v in kinds.items() if k) / 400 - CODE_FREE_PERCENT / 100) < 0.08
    assert {"short", "english", "former"} <= set(kinds)


def test_a_code_free_question_names_its_entity_alone_in_both_texts_and_the_lint_checks_it():
    names = book(("600001.SH", "恒宇电气", "short"), ("600001.SH", "Hengyu Electric", "english"),
                 ("600001.SH", "恒宇科技", "former"), ("000002.SZ", "兰亭食品", "short"))
    base = candidate("600001.SH", anchor="window:20", aggregate="mean").model_copy(update={"entity_name": "恒宇电气"})
    seen = {}
    for i in range(60):
        c = with_naming(base.model_copy(update={"qid": f"ls-{i:016x}"}), names, has_chinese_text)
        if c.facts.named_as is not None:
            seen[c.facts.named_as.kind] = c
    assert set(seen) == {"short", "english", "former"}
    for kind, c in seen.items():
        en, zh = template_question_en(c), template_question_zh(c)
        assert not code_mentions(en, "600001.SH") and not code_mentions(zh, "600001.SH")
        assert lint_question(en, zh, lint_context(c)) == []
        assert fitting_entities(en, "600001.SH", names) == set()
    assert template_question_en(seen["english"]).startswith("What was the average closing price of Hengyu Electric over")
    assert template_question_zh(seen["english"]).startswith("恒宇电气最近20个交易日")
    assert "of the company formerly named 恒宇科技 over" in template_question_en(seen["former"])
    assert template_question_zh(seen["former"]).startswith("原名恒宇科技的公司最近20个交易日")
    # A text that gives the code of an entity it names alone is flagged.
    c = seen["short"]
    leaked = template_question_en(c).replace("恒宇电气", "恒宇电气 (600001.SH)")
    assert "code_given" in {f.rule for f in lint_question(leaked, None, lint_context(c))}


def test_a_comparison_goes_without_codes_only_when_both_names_fit_alone():
    names = book(("600001.SH", "恒宇电气", "short"), ("000001.SZ", "兰亭食品", "short"),
                 ("000002.SZ", "兰亭食品", "short"), ("600004.SH", "青山矿业", "short"))
    base = candidate("600001.SH", anchor="latest").model_copy(update={"entity_name": "恒宇电气"})
    shared = base.model_copy(update={"facts": base.facts.model_copy(update={"other_entity": "000001.SZ",
                                                                           "other_entity_name": "兰亭食品"})})
    alone = base.model_copy(update={"facts": base.facts.model_copy(update={"other_entity": "600004.SH",
                                                                          "other_entity_name": "青山矿业"})})
    for i in range(40):
        qid = f"ls-{i:016x}"
        assert with_naming(shared.model_copy(update={"qid": qid}), names, has_chinese_text).facts.named_as is None
        named = with_naming(alone.model_copy(update={"qid": qid}), names, has_chinese_text)
        assert (named.facts.named_as is None) == (named.facts.other_named_as is None)
        if named.facts.named_as is not None:
            en = template_question_en(named)
            assert "minus that of 青山矿业 on" in en and not code_mentions(en, "600004.SH")


@pytest.mark.parametrize(("text", "code", "given"), [
    ("What was the closing price of 恒宇电气 (600001.SH)?", "600001.SH", True),
    ("What was the highest closing price of 600001 since …?", "600001.SH", True),
    ("What was the closing price of 恒宇电气?", "600001.SH", False),
    ("For 恒宇电气, what was … for the constituent 600002.SH?", "600001.SH", False),
])
def test_a_text_gives_a_code_or_its_ticker(text, code, given):
    assert code_mentions(text, code) == given


@pytest.mark.slow
def test_entities_are_named_in_a_built_pool_without_a_code_and_alone(tmp_path):
    """Construction names its entities: a share of the questions of a small build give no code, each
    of them by a name the service ties to that entity alone."""
    from livesearch_pipeline.construction.naming import service_names
    from livesearch_pipeline.construction.pipeline import TABLES, read_table
    from livesearch_pipeline.construction.models import Candidate
    from livesearch_pipeline.defs.construction.materialize import materialize_pool
    from livesearch_pipeline.defs.resources import StorageResource
    from livesearch_pipeline_tests.defs.construction.test_build_pool import ThreeLevelsService

    materialize_pool(as_of=CLOCK, tools=["daily", "income"], resources={
        "data_service": ThreeLevelsService(kind="embedded", clock=CLOCK.isoformat()),
        "storage": StorageResource(root=str(tmp_path))})
    candidates = read_table(tmp_path / "construction" / TABLES["candidates"], Candidate)
    named = [c for c in candidates if c.facts.named_as is not None]
    assert named and len(named) < len(candidates)
    names = service_names(CLOCK)
    for c in named:
        assert names.fits(c.facts.named_as.name) == {c.entity}
        assert not code_mentions(template_question_en(c), c.entity)
