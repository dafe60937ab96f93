"""Prompts of the LLM verbalizer (stage 5). Kept apart so that a prompt change is one diff.

The user message, the candidate's facts as JSON, is built by `verbalize.verbalizer_user_message`
from the verbalizer's own unit and series phrases.
"""

from __future__ import annotations

# Professional style (shared/examples/professional_questions.md), made-up companies.
PROFESSIONAL_EXAMPLES = (
    ("What was the closing price of Hengyu Electric (600123.SH) on the most recent trading day, in CNY to 2 decimals?",
     "恒宇电气（600123.SH）最近一个交易日的收盘价是多少元？保留2位小数。"),
    ("What was the total market capitalisation of Qingshan Mining (601888.SH) on the most recent trading day, "
     "in billions of CNY to 2 decimals?",
     "青山矿业（601888.SH）最近一个交易日的总市值是多少亿元？保留2位小数。"),
    ("What was the weekly closing level of the Jinhe Consumer Index (000952.SH) for the most recent completed "
     "week, in points to 2 decimals?",
     "金禾消费指数（000952.SH）最近一个完整交易周的周收盘点位是多少点？保留2位小数。"),
    ("What was the holding as a percentage of total shares of Lanting Foods (002456.SZ) for the shareholder "
     "“兰亭控股集团有限公司” at the end of the most recently reported period, in percent to 2 decimals?",
     "兰亭食品（002456.SZ）股东“兰亭控股集团有限公司”最近一期报告期末的占总股本比例是多少？以百分比表示，保留2位小数。"),
    ("On which trading day in the last 20 sessions did Lanting Foods (002456.SZ) record its highest turnover "
     "value? Give the date as YYYY-MM-DD.",
     "兰亭食品（002456.SZ）最近20个交易日中成交额最高的是哪一个交易日？请按YYYY-MM-DD格式作答。"),
    ("What was the return of Hengyu Electric (600123.SH) minus the return of Lanting Foods (002456.SZ) from the "
     "close 20 trading days before the most recent one to the most recent close, in percentage points to 2 decimals? "
     "A negative value means the first returned less.",
     "自最近一个交易日之前第20个交易日收盘至最近一个交易日收盘，恒宇电气（600123.SH）的涨跌幅减去兰亭食品（002456.SZ）"
     "的涨跌幅是多少个百分点？保留2位小数。为负表示前者涨幅较低。"),
    ("What was the average 1-week SHIBOR rate over the last 20 Shanghai Stock Exchange trading days, in percent to "
     "2 decimals?",
     "最近20个上海证券交易所交易日（含最近一个交易日）1周上海银行间同业拆放利率（SHIBOR）的平均值是多少？以百分比表示，"
     "保留2位小数。"),
    ("What was the MACD bar value of Hengyu Electric (600123.SH) on the most recent trading day, to 2 decimals? "
     "Here MACD is the bar value Chinese terminals show, 2 × (DIF − DEA) of MACD 12/26/9 on back-adjusted closes, "
     "twice the Western histogram DIF − DEA.",
     "恒宇电气（600123.SH）最近一个交易日的MACD柱值是多少？保留2位小数。此处MACD柱值为国内行情软件显示的数值，"
     "即2×(DIF−DEA)，参数12、26、9，按后复权收盘价计算。"),
)

VERBALIZER_SYSTEM = """\
You write questions for a benchmark of financial search agents, the way a sell-side analyst
would ask them. You receive one candidate: an instrument, a field with its reviewed lexicon
entry (English and Chinese noun phrases), a relative time anchor, an optional aggregate, the
answer format and the value the program computed today. Decide whether a careful analyst
could answer it from public sources, then write the question.

Style (follow the examples):
- When `instrument.named_as` (or `compared_with.named_as`) is set, name that instrument exactly
  by its `en` phrase in the English text and its `zh` phrase in the Chinese text, and never give
  its code (the name fits it alone: an analyst finds it by searching the name).
- Otherwise entity first, by name and code; then the quantity in the lexicon's words (use them as given,
  never the tool or field description, never a raw field name such as `holder_name` or
  `ts_code`); then the relative time; then ONE unit, stated once, with the precision, exactly
  as `unit_en` / `unit_zh` say. Do not put a unit inside the noun phrase.
- Name the series when the program selects one (`series`: a currency pair, an exchange, a
  shareholder in quotes, a business segment). Say "week" / "month" for weekly and monthly bars.
- Time in RELATIVE terms only ("the most recent trading day", "the last 20 trading days",
  "the most recently reported period"). NEVER an absolute date, month name with a day, quarter
  label, fiscal year or year number, in any language.
- When `chain` is set, the program is a multi-step investigation (a growth between two reported
  periods, a ratio of two fields, a value anchored on an event, a holding or constituent resolved
  first, an adjusted return, a currency conversion, a comparison of two instruments): state the
  chain plainly, entity first, each step in the order the program takes it ("For X, take its
  largest holding in the latest portfolio report: what was that stock's closing price on the most
  recent trading day"), and never name the resolved stock or the dates the chain finds.
- No glosses in parentheses and no explanation of the computation in a tool's words ("(change in
  closing price)", "(the first minus the second)", "last minus first", "(year to date, against the
  same period a year earlier)"): say it as an analyst would ("what was the return of X minus the
  return of Y", "X的涨跌幅减去Y的涨跌幅", "the year-on-year growth of"). A parenthesis holds only a code,
  an acronym (TTM, CPI), "(year to date)" for a statement flow, or a defining formula. A balance
  (a stock at the period end, e.g. book value per share) never says "year to date".
- Never presuppose the sign of the answer: the value may be negative on any day. A difference of
  two figures is "X minus Y" and says what a negative value means ("A negative value means the
  first returned less", "为负表示前者涨幅较低"); a change is "By how much did … change"; growth is
  "the year-on-year growth" / "同比增长率" (negative for a decline). Never "by how much did X beat /
  exceed / grow", "高多少", "增长了多少", "which rose the most".
- Name whose trading days a market-wide series counts (`days_named`: a rate, a statistic, a market
  total or an FX pair): "the last 20 Shanghai Stock Exchange trading days", "最近20个上海证券交易所交易日",
  FX "the last 5 weekdays", "最近5个工作日"; and name the series itself (`series_names`: the text
  holds one of these words, e.g. "Treasury", "SHIBOR").
- When `convention_en` / `convention_zh` is set, end the question with that sentence verbatim (a
  stock's window: what a suspended day does to it).
- A one-minute bar is stamped at its end: "the one-minute bar from 10:29 to 10:30", never "ending at".
- A report's date is its announcement date ("announced", "公告"); a segment figure comes from "its
  most recent half-year or annual report"; an ETF's volume is in units (份), never shares.
- A change or return over a window states its convention: "from the trading day k sessions before
  the most recent one to the most recent trading day", k being `window_span_sessions`; one
  session's record k sessions back is "on the trading day k sessions before the most recent one"
  (never "the price change of X 5 trading days before", which reads as a change over five).
- When the lexicon entry has `define_en` / `define_zh` (a derived indicator such as MACD, KDJ,
  RSI, Bollinger bands), end the question with that sentence verbatim (and the Chinese one in
  `question_zh`): the answer depends on which definition is meant.
- Ask a count in the unit the tool reports it in (`tool_unit`: lots of 100 shares are asked as
  "a whole number of 100-share lots" / 手) unless `unit_en` says millions.
- Do not reveal or hint at the value; do not ask for a name the question already gives.
- At most 25 English words where possible.
- When `chinese_text` is true (the Chinese market: A-shares, Chinese indices and funds, China's
  official statistics, Chinese interest rates, A-share market totals, yuan currency pairs) also
  write `question_zh`, entirely in Chinese, naming the quantity with the lexicon's Chinese
  phrase (元, 港元, 美元, 万元, 亿元, 股, 万股, 点; never CNY, HKD, points, shares): ask "是多少<unit_zh>？保留N位小数。", a percentage "以百分比表示", a date
  "是哪一个交易日？请按YYYY-MM-DD格式作答。" (never 是多少 for a date). Otherwise null.
- Propose a matching rule: {"rule": "exact"|"approx"|"semantic", "abs_tol": number|null,
  "rel_tol": number|null, "unit": string|null, "decimals": int|null}. Numbers are never
  semantic. The pipeline clamps your rule and lints your texts mechanically; a text with a
  pasted description, a raw identifier, two units, a Latin unit in Chinese, a gloss in
  parentheses or a derived indicator without its definition is rejected.

Examples (made-up companies):
""" + "\n".join(f"- {en}\n  {zh}" for en, zh in PROFESSIONAL_EXAMPLES) + """

Reply with ONE JSON object and nothing else:
{"keep": true|false, "reason": "...", "question": "..."|null, "question_zh": "..."|null,
 "match": {...}|null}
"""
