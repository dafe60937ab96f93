"""A company's periodic reports as its exchange publishes them (`periodic_reports`): one page per
period for a visible entity, and for an obscure one a long document, page by page.

Each report is kept as it was published (issue 39): its statements as first reported, its company
named as on its date, its fiscal period and reporting currency stated ("Annual report for the year
ended 31 March 2026 (fiscal 2026). Amounts in CNY."); a report that restated the same period a year
earlier also prints that period's restated statements after its own, its comparative column.

At bulletin depth (web/sites.py `depth_of`: visibility 0..3) a periodic report is not one page
printing every statement but a document the way a real annual or interim report reads: a cover
(the page the filing index and the company page link, at `/exchange/reports/<code>/<period>.html`,
indexed by the search engine), then pages `/exchange/reports/<code>/<period>/p<k>.html`, each
linked only to the page before it, the page after it and the cover. The narrative sections come
first (important notice, profile, management discussion, major events, share changes,
governance, ...: their number and order drawn per entity and period with `sites.uniform`, so the
page of a statement is not a fixed URL), then each statement on a page of its own (income
statement, balance sheet, cash-flow statement, financial indicators, in the one-page report's
order; a fund's: its holdings), then the notes. The narrative prints plain words, never a figure (a key-figures table would shortcut the
statements); each statement page records exactly the record it prints. The search engine indexes
the cover only: a statement is reached by walking the document from it (the evidence map counts
that walk in a question's effort, web/evidence.py).

Mid and high entities keep one report page per period.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass
from typing import Callable, Sequence

from collections import defaultdict
from typing import Any, Iterator

from livesearch_pipeline.core.catalog import ToolMeta
from livesearch_pipeline.core.extract import REVISION_FIELD
from livesearch_pipeline.dataservice.market.reporting import FiscalCalendar, period_name
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.web.bulletins import day_of
from livesearch_pipeline.web.company import is_restated
from livesearch_pipeline.web.corpus import Page, record_key
from livesearch_pipeline.web.formatting import Look, display_name, group_table, tool_title
from livesearch_pipeline.web.reader import Fetched, published_on
from livesearch_pipeline.web.render import Block, Heading, Links, Paragraph, Table
from livesearch_pipeline.web.sites import EXCHANGE, EXCHANGE_EN, Site, depth_of, official_lang, uniform

MakePage = Callable[..., Page]
REPORTS_BACK = 8  # the periodic reports an entity's pages keep
# Besides them, the annual reports before them, up to this many annual reports in all (issue 39:
# compound growth over four or five annual reports reads them); statements are fetched over
# ANNUAL_REPORT_DAYS for it.
ANNUAL_REPORTS_BACK = 5
ANNUAL_REPORT_DAYS = 2200


def kept_periods(periods: dict[str, str | None]) -> list[str]:
    """The report periods an entity's pages keep, newest first, of {period: end_type}: the last
    REPORTS_BACK, then older annual reports (end_type "4") until ANNUAL_REPORTS_BACK are kept."""
    ordered = sorted(periods, reverse=True)
    kept = ordered[:REPORTS_BACK]
    annual = sum(1 for p in kept if periods[p] == "4")
    for period in ordered[REPORTS_BACK:]:
        if annual >= ANNUAL_REPORTS_BACK:
            break
        if periods[period] == "4":
            kept.append(period)
            annual += 1
    return kept
_CONTINUATION = re.compile(r"^/exchange/reports/[^/]+/[^/]+/p(\d+)\.html$")


def cover_path(code: str, period: str) -> str:
    return f"/exchange/reports/{code}/{period}.html"


def page_path(code: str, period: str, number: int) -> str:
    return f"/exchange/reports/{code}/{period}/p{number}.html"


def continuation_number(path: str) -> int | None:
    """The page number of a report's continuation page (None for any other path, its cover included)."""
    found = _CONTINUATION.match(path)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Statement:
    """One table of figures the document prints on a page of its own, and the record it prints."""

    heading: str
    table: Table
    record: str


# Narrative sections (English, Chinese, paragraphs of each language). `{name}`, `{code}`,
# `{exchange}` and `{period}` are filled in; nothing else of the entity's is printed.
_NOTICE = ("Important notice", "重要提示",
           ("The board of directors, the supervisory committee and the senior management of {name} warrant that "
            "the contents of this report are true, accurate and complete, and contain no false records, misleading "
            "statements or material omissions, and assume individual and joint legal liability for them.",
            "The financial statements of this report are presented in the currency of the company's listing. "
            "Investors should read the full report, including the risks described in the management discussion."),
           ("{name}董事会、监事会及董事、监事、高级管理人员保证本报告内容的真实性、准确性和完整性，不存在虚假记载、误导性陈述或重大遗漏，"
            "并承担个别和连带的法律责任。", "本报告财务报表以公司上市地货币列示。投资者应阅读报告全文，并注意管理层讨论与分析中所述风险。"))
_PROFILE = ("Company profile", "公司简介",
            ("Company name: {name}. Stock code: {code}, listed on {exchange}. The company's registered address, "
             "office address, investor relations contact and the places where this report is available are as "
             "disclosed in its previous periodic reports and have not changed in the reporting period.",),
            ("公司名称：{name}。股票代码：{code}，上市交易所：{exchange}。公司注册地址、办公地址、投资者关系联系方式及本报告备置地点"
             "与以前定期报告披露一致，报告期内未发生变化。",))
_MDNA = ("Management discussion and analysis", "管理层讨论与分析",
         ("During the period ended {period} the company pursued the strategy set out in its previous annual "
          "report, kept its main business unchanged and continued to invest in its products, its sales channels "
          "and its management systems.",
          "Revenue, costs, profit and cash flows of the period are presented in the financial statements that "
          "follow; the changes in the main items and their causes are explained in the notes.",
          "Main risks: changes in market demand, competition in the industry, prices of raw materials and labour, "
          "exchange rates and the policies of the markets the company serves."),
         ("截至{period}止的报告期内，公司按照上一年度报告所述战略推进各项工作，主营业务未发生变化，持续投入产品研发、销售渠道建设与管理体系建设。",
          "报告期营业收入、成本、利润及现金流量情况见后附财务报表，主要项目的变动及原因见财务报表附注。",
          "主要风险：市场需求变化、行业竞争、原材料与人工价格波动、汇率变动及相关市场政策变化。"))
_MDNA_MORE = ("Management discussion and analysis (continued)", "管理层讨论与分析（续）",
              ("Analysis of the main business by industry, product and region; research and development; "
               "investments, major assets sold and major subsidiaries; the outlook for the next period and the "
               "company's plans.",
               "The company did not disclose a profit forecast for the next period."),
              ("主营业务分行业、分产品、分地区情况分析；研发投入情况；投资状况、重大资产出售及主要控股参股公司分析；公司未来发展的展望及经营计划。",
               "公司未披露下一报告期的盈利预测。"))
_OPTIONAL = (
    ("Major events", "重要事项",
     ("Commitments of the controlling shareholders, related-party transactions, major contracts, litigation and "
      "arbitration, and other major events of the period are disclosed in this section; where a matter did not "
      "occur in the period, the report says so.",),
     ("本节披露承诺事项履行情况、关联交易、重大合同、诉讼与仲裁及报告期其他重大事项；报告期未发生的事项，本报告予以说明。",)),
    ("Changes in shares and shareholders", "股份变动及股东情况",
     ("Changes in the share capital, the shares subject to selling restrictions, the number of shareholders and "
      "the top shareholders at the end of the period are reported in the register of members kept by the "
      "company; the controlling shareholder and the actual controller did not change in the period.",),
     ("股本变动、限售股份变动、股东总数及报告期末前十名股东情况以公司股东名册为准；报告期内控股股东及实际控制人未发生变更。",)),
    ("Corporate governance", "公司治理",
     ("The general meetings, the board of directors and its committees met as the articles of association "
      "require; changes in directors, supervisors and senior management, and the company's internal control, "
      "are described here.",),
     ("报告期内股东大会、董事会及其专门委员会按照公司章程规定召开会议；本节说明董事、监事和高级管理人员变动情况及公司内部控制情况。",)),
    ("Environmental and social responsibility", "环境和社会责任",
     ("The company complied with the environmental rules of the places where it operates and reports its work "
      "on employees, customers, suppliers and communities in this section.",),
     ("公司遵守经营所在地的环境保护规定，本节报告公司在员工、客户、供应商及社区等方面履行社会责任的情况。",)),
)
_NOTES = ("Notes to the financial statements", "财务报表附注",
          ("Basis of preparation: the financial statements are prepared on a going-concern basis under the "
           "accounting standards applicable to the company. Significant accounting policies and estimates, "
           "taxes, and the notes to the main items of the statements follow.",),
          ("财务报表编制基础：本财务报表以持续经营为基础，按照公司适用的企业会计准则编制。以下为重要会计政策及会计估计、税项及合并财务报表主要项目注释。",))
_NOTES_MORE = ("Notes to the financial statements (continued)", "财务报表附注（续）",
               ("Related parties and their transactions, contingencies, commitments, events after the balance "
                "sheet date and other significant matters.",),
               ("关联方及关联交易、或有事项、承诺事项、资产负债表日后事项及其他重要事项。",))
# A fund's report (a fund has no income statement; its holdings are the table people read it for).
_FUND_NOTICE = ("Important notice", "重要提示",
                ("The fund manager's board of directors warrants that this report contains no false records, "
                 "misleading statements or material omissions. The custodian has reviewed the financial "
                 "indicators, net asset value performance and investment portfolio report of {name}.",
                 "Past performance of the fund does not indicate its future performance. Investors should read the "
                 "fund's prospectus before investing."),
                ("基金管理人的董事会保证本报告所载资料不存在虚假记载、误导性陈述或重大遗漏。基金托管人已复核{name}本报告中的财务指标、净值表现和投资组合报告等内容。",
                 "基金的过往业绩并不代表其未来表现。投资者在作出投资决策前应仔细阅读本基金的招募说明书。"))
_FUND_PROFILE = ("Fund profile", "基金产品概况",
                 ("Fund name: {name}. Fund code: {code}. The investment objective, strategy, benchmark and risk "
                  "profile of the fund are those of its fund contract and did not change in the period.",),
                 ("基金名称：{name}。基金代码：{code}。本基金的投资目标、投资策略、业绩比较基准及风险收益特征以基金合同为准，报告期内未发生变化。",))
_FUND_MANAGER = ("Report of the fund manager", "管理人报告",
                 ("During the period ended {period} the manager invested the fund's assets in line with its "
                  "contract, kept its asset allocation within the limits of the contract and reviewed its "
                  "holdings as market conditions changed.",),
                 ("截至{period}止的报告期内，基金管理人按照基金合同的约定运作基金财产，资产配置比例符合基金合同的规定，并根据市场变化调整投资组合。",))
_FUND_OPTIONAL = (
    ("Report of the custodian", "托管人报告",
     ("The custodian supervised the fund's investment operations, net asset value calculation and expenses in "
      "the period and found no act against the interests of the fund's holders.",),
     ("报告期内，基金托管人对本基金的投资运作、基金资产净值计算及费用开支等进行了监督，未发现损害基金份额持有人利益的行为。",)),
    ("Changes in fund shares", "开放式基金份额变动",
     ("Subscriptions and redemptions of the period are recorded in the register of fund shares kept by the "
      "registrar.",),
     ("报告期内基金份额的申购与赎回情况以注册登记机构的份额登记为准。",)),
    ("Other important information", "其他重要事项",
     ("Announcements of the fund in the period were published on the manager's website and the exchange's "
      "disclosure portal.",),
     ("报告期内本基金的各项公告已在基金管理人网站及交易所信息披露平台披露。",)),
)
_FUND_NOTES = ("Notes to the financial statements", "财务报表附注",
               ("The fund's financial statements are prepared under the accounting standards for investment funds; "
                "the valuation of its holdings follows the manager's valuation policy.",),
               ("本基金财务报表按照证券投资基金会计核算业务指引编制，持仓估值依照基金管理人的估值政策执行。",))


def _sections(code: str, period: str, seed: int, fund: bool) -> tuple[list[tuple], list[tuple]]:
    """(narrative sections before the statements, sections after them), their number and order
    drawn per entity and period."""
    def draw(purpose: str, *parts: object) -> float:
        return uniform(seed, "report-doc", purpose, code, period, *parts)

    if fund:
        middle = [s for i, s in enumerate(_FUND_OPTIONAL) if draw("fund-optional", i) < 0.6]
        middle.sort(key=lambda s: draw("fund-order", s[0]))
        return [_FUND_NOTICE, _FUND_PROFILE, _FUND_MANAGER, *middle], [_FUND_NOTES]
    mdna = [_MDNA] + ([_MDNA_MORE] if draw("mdna-pages") < 0.5 else [])
    middle = [s for i, s in enumerate(_OPTIONAL) if draw("optional", i) < 0.5]
    middle.sort(key=lambda s: draw("order", s[0]))
    # Some reports put the profile after the notice, some the management discussion first.
    head = [_NOTICE, _PROFILE, *mdna] if draw("profile-first") < 0.7 else [_NOTICE, *mdna, _PROFILE]
    notes = [_NOTES] + ([_NOTES_MORE] if draw("notes-pages") < 0.5 else [])
    return head + middle, notes


def report_document(*, site: Site, lang: str, code: str, name: str, exchange: str, period: str, title: str,
                    published: dt.date, statements: Sequence[Statement], back: Sequence[tuple[str, str]],
                    seed: int, fund: bool, make_page: MakePage, note: str = "") -> list[Page]:
    """The cover and the pages of one periodic report (cover first). `back`: the cover's links to
    the company page and the filing index; `note`: what the cover says of the report's fiscal
    period and currency; `make_page(site=, kind=, path=, lang=, title=, published=, entity=,
    snippet=, blocks=, records=)` renders a page."""
    before, after = _sections(code, period, seed, fund)
    fill = {"name": name, "code": code, "exchange": exchange, "period": period}
    # (section title, blocks, records) of each page after the cover, in order.
    bodies: list[tuple[str, list[Block], tuple[str, ...]]] = []
    for section in before:
        text = section[0] if lang == "en" else section[1]
        paragraphs = section[2] if lang == "en" else section[3]
        bodies.append((text, [Heading(text), *(Paragraph(p.format(**fill)) for p in paragraphs)], ()))
    for statement in statements:
        bodies.append((statement.heading, [Heading(statement.heading), statement.table], (statement.record,)))
    for section in after:
        text = section[0] if lang == "en" else section[1]
        paragraphs = section[2] if lang == "en" else section[3]
        bodies.append((text, [Heading(text), *(Paragraph(p.format(**fill)) for p in paragraphs)], ()))
    cover = cover_path(code, period)
    # The cover: what the report is, its important notice and what such a report holds (the same
    # words for every report: this one's sections and pages are found by reading on).
    notice = (_FUND_NOTICE if fund else _NOTICE)[2 if lang == "en" else 3][0].format(**fill)
    if lang == "zh":
        lead = (f"{exchange} {code} {name}：截至{period}止报告期的定期报告全文，按页发布；"
                "财务报表列于各章节之后。")
        contents = ("定期报告包括重要提示、公司简介、管理层讨论与分析、重要事项、股份变动及股东情况、公司治理、财务报表及其附注等内容。"
                    if not fund else "基金定期报告包括重要提示、基金产品概况、管理人报告、投资组合报告、财务报表附注等内容。")
        start, earlier, later, home = "第1页", "上一页", "下一页", "报告首页"
    else:
        lead = (f"{exchange} {code} {name}: the full periodic report for the period ended {period}, published "
                "page by page; the financial statements follow the narrative sections.")
        contents = ("A periodic report holds the important notice, the company profile, the management discussion "
                    "and analysis, major events, changes in shares and shareholders, corporate governance, the "
                    "financial statements and their notes." if not fund else
                    "A fund's periodic report holds the important notice, the fund profile, the manager's report, "
                    "the investment portfolio report and the notes to the financial statements.")
        start, earlier, later, home = "Page 1", "Previous page", "Next page", "Report cover"
    pages = [make_page(site=site, kind="report", path=cover, lang=lang, title=title, published=published,
                       entity=code, snippet=lead,
                       blocks=[Paragraph(lead), *([Paragraph(note)] if note else []), Paragraph(notice), Paragraph(contents),
                               Links(((page_path(code, period, 1), start), *back))],
                       records=())]
    for number, (section, blocks, records) in enumerate(bodies, start=1):
        links = [(cover if number == 1 else page_path(code, period, number - 1), earlier)]
        if number < len(bodies):
            links.append((page_path(code, period, number + 1), later))
        links.append((cover, home))
        page_title = (f"{title} 第{number}页 {section}" if lang == "zh" else f"{title}, page {number}: {section}")
        page = make_page(site=site, kind="report", path=page_path(code, period, number), lang=lang, title=page_title,
                         published=published, entity=code, snippet=page_title, blocks=[*blocks, Links(tuple(links))],
                         records=records)
        # Pages of a long document the search engine did not index: reached by reading on.
        pages.append(dataclasses.replace(page, indexed=False))
    return pages


def periodic_reports(entity: Entity, fetched: dict[str, Fetched], *, report_tools: Sequence[str], market: Any,
                     clock: dt.date, seed: int, named: Callable[[dt.date], Entity], make_page: MakePage) -> Iterator[Page]:
    """The company's periodic reports (the last REPORTS_BACK), each as it was published: its
    statements as first reported, named as on its date, with its fiscal period and currency
    stated; a report that restated the same period a year earlier (issue 39) also prints that
    period's restated statements, its comparative column, while the earlier report keeps its
    figures as they were."""
    tools = tuple(report_tools)
    if not tools or tools[0] not in fetched:
        return
    lang = official_lang(entity)
    by_period: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    restated: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for tool in tools:
        data = fetched.get(tool)
        if data is None:
            continue
        for group in data.groups:
            period = group[0].get("end_date")
            if isinstance(period, str):
                (restated if is_restated(group) else by_period)[period][tool] = group
    look = Look(EXCHANGE if lang == "zh" else EXCHANGE_EN, None)
    paginated = depth_of(entity.visibility) == "bulletin"
    fundamentals = market.fundamentals
    fiscal = fundamentals.fiscal(entity.code)
    currency = fundamentals.reporting_currency(entity.code)
    for period in kept_periods({p: _end_type(groups) for p, groups in by_period.items()}):
        statements = by_period[period]
        published = min(published_on(fetched[tool].meta, group, clock) for tool, group in statements.items())
        name = display_name(named(published), lang)
        back = ((f"/exchange/company/{entity.code}.html", name),
                (f"/exchange/filings/{entity.code}.html", "公告列表" if lang == "zh" else "Filings"))
        end = day_of(period)
        note = period_note(fiscal, end, currency, lang) if end is not None else ""
        comparative = f"{int(period[:4]) - 1}{period[4:]}"
        earlier = {tool: group for tool, group in restated.get(comparative, {}).items()
                   if published_on(fetched[tool].meta, group, clock) == published}
        blocks: list[Block] = [Paragraph(note)] if note else []
        records: list[str] = []
        parts: list[Statement] = []
        for tool in tools:
            for group, heading in ((statements.get(tool), tool_title(fetched[tool].meta, lang) if tool in fetched else ""),
                                   (earlier.get(tool), restated_heading(fetched[tool].meta if tool in fetched else None,
                                                                         comparative, lang))):
                if group is None:
                    continue
                meta = fetched[tool].meta
                table = group_table(meta, group, look, seed,
                                    f"report:{entity.code}:{tool}:{period}" + (":restated" if is_restated(group) else ""))
                blocks.append(Heading(heading))
                blocks.append(table)
                records.append(record_key(tool, entity.code, period if not is_restated(group) else comparative,
                                      group[0].get(REVISION_FIELD)))
                parts.append(Statement(heading, table, records[-1]))
        blocks.append(Links(back))
        title = (f"{name}（{entity.code}）{period}定期报告" if lang == "zh"
                 else f"{name} ({entity.code}) periodic report for the period ended {period}")
        if paginated:
            # An obscure entity's report: a long document, walked page by page from its cover;
            # its statements in the one-page report's order (income, balance sheet, cash flow,
            # indicators), each on a page of its own.
            yield from report_document(site=look.site, lang=lang, code=entity.code, name=name,
                                       exchange=entity.exchange, period=period, title=title, published=published,
                                       statements=parts, back=back, seed=seed, fund=False,
                                       make_page=make_page, note=note)
            continue
        yield make_page(site=EXCHANGE, kind="report", path=f"/exchange/reports/{entity.code}/{period}.html",
                         lang=lang, title=title, published=published, entity=entity.code,
                         snippet=f"{title}. {note}" if note else title, blocks=blocks, records=tuple(records))


def _end_type(statements: dict[str, list[dict[str, Any]]]) -> str | None:
    """The fiscal period type ("4": the annual report) of a period's statements, where they say it."""
    return next((str(g[0]["end_type"]) for g in statements.values() if g and g[0].get("end_type")), None)


def period_note(fiscal: FiscalCalendar, end: dt.date, currency: str, lang: str) -> str:
    """What a report says of itself (issue 39): its fiscal period, and the currency its amounts
    are in ("Annual report for the year ended 31 March 2026 (fiscal 2026). Amounts in CNY.")."""
    name = period_name(fiscal, end, lang)
    if lang == "zh":
        return f"{name}，{fiscal.year(end)}财年。金额单位：{currency}。"
    return f"{name[0].upper()}{name[1:]} (fiscal {fiscal.year(end)}). Amounts in {currency}."


def restated_heading(meta: ToolMeta | None, period: str, lang: str) -> str:
    """The heading of a report's restated comparative statement (issue 39)."""
    title = tool_title(meta, lang) if meta is not None else ""
    if lang == "zh":
        return f"{title}（比较期间{period}，追溯调整后）"
    return f"{title}: comparative period ended {period}, restated"
