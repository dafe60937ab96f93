"""Multi-step question families (DESIGN §8, issue 20): gold programs an analyst investigates.

Each family is a typed DAG in the program language (calls with `refs`, `times` joins, a combine
chain), drafted from what enumeration explored, executed and replayed like every other candidate,
and verbalized from the field lexicon as the chain an analyst states (entity first, relative time
only, one unit). A family's candidate carries the anchor `family:<name>[:<n>]`; the template
verbalizer and the LLM payload read its chain from here.

| module | families |
|---|---|
| reports | growth_period (a statement's latest reported period vs the same period a year earlier), growth_year (the latest annual report vs the fiscal year before), margin (a ratio of two fields of the latest report), since_report (the return since the latest report's announcement), named_high (a stock named as people name it: its highest close since that announcement) |
| dividends | payout (the latest implemented dividend → the EPS of the period it pays for), exdate_close / since_exdate (its ex-date → the close that day / the return since) |
| resolution | top_holding (a fund's largest holding → that stock's figures), top_constituent (an index's heaviest constituent → that stock's figures), holding_industry (a fund's largest holding → its industry index → the index's return) |
| prices | adj_return (closes × the cumulative adjustment factor), fx_convert (a Hong Kong or US figure × the day's FX rates → CNY), price_to_nav (an ETF's close against its latest published NAV), compare (two instruments' returns over the same window) |
| reconciled | cagr (compound growth over four or five annual reports, restated where restated), ah_premium (an A/H company's A close over its H close in CNY), cross_currency (a Hong Kong company's HKD market value in its reporting currency over its latest annual revenue or profit) — issue 39 |
| investigations | drawdown, volume_day, best_month, screen, three_indices (issue 29's T3 investigations) |

One job per module: `base` (the draft record, the `Family` registration, program and text
helpers), one module per family group (its drafting and its texts), `registry` (the families in
drafting order, the tools they read, their record filters' wording, `family_drafts`), `texts`
(a candidate's texts through the registry, its chain for the LLM payload).

To add a family: a module with a drafting function and its texts ending in a `Family`, appended
to `registry.FAMILIES`; tests in livesearch_pipeline_tests/construction/test_families.py.
"""

from livesearch_pipeline.construction.families.base import (
    FAMILY,
    IMPLEMENTED,
    DraftInputs,
    Family,
    FamilyDraft,
    family_of,
    is_multi_step,
    shape_of,
    ticker_of,
    unique_handles,
)
from livesearch_pipeline.construction.families.investigations import (
    INVESTIGATIONS,
    investigation_drafts,
    investigation_of,
    pick_family_drafts,
)
from livesearch_pipeline.construction.families.prices import compare_family_drafts
from livesearch_pipeline.construction.families.registry import (
    BY_NAME,
    FAMILIES,
    FAMILY_TOOLS,
    WHERE_FORMS,
    family_drafts,
    family_entities,
    family_targets,
)
from livesearch_pipeline.construction.families.texts import chain_en, question_en, question_zh

__all__ = [
    "BY_NAME", "FAMILIES", "FAMILY", "FAMILY_TOOLS", "IMPLEMENTED", "INVESTIGATIONS", "WHERE_FORMS", "DraftInputs", "Family",
    "FamilyDraft", "chain_en", "compare_family_drafts", "family_drafts", "family_entities", "family_of",
    "family_targets", "investigation_drafts", "investigation_of", "is_multi_step", "pick_family_drafts",
    "question_en", "question_zh", "shape_of", "ticker_of", "unique_handles",
]
