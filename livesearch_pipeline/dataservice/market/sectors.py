"""How each sector of the synthetic market is valued and financed (issue 40): the ranges a company's
valuation multiples, margin and leverage are drawn from, and the wider ranges the sanity check
holds every published valuation to.

A company draws its target trailing P/E, P/B and net margin from its sector's band once; the
statements then earn what the market values them at (market/fundamentals.py: each quarter's profit
is the quarter's average market value over the target P/E, its equity drifts towards the market
value over the target P/B), so the multiples the quote tools publish stay inside the sector's
plausible range as prices move: a bank at 4-9 times earnings and below book, a chip designer at
30-70 times. `SANITY` is what `python -m livesearch_pipeline.dataservice.sanity` checks: the trailing
P/E of a profitable company (a loss leaves P/E blank, as Tushare does) and the P/B of every company,
per sector, on the day it is asked (documented in docs/dataservice.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SectorProfile:
    pe: tuple[float, float]  # target trailing P/E a company of the sector draws from
    pb: tuple[float, float]  # target P/B
    net_margin: tuple[float, float]  # net profit / revenue
    leverage: tuple[float, float]  # total assets / total equity
    loss_rate: float  # chance a year ends in a loss (a fourth-quarter write-down)
    dip_rate: float  # chance a year's profit falls to 50-80% of what the market values
    vol_scale: float = 1.0  # the stock's own volatility relative to its market's


_BANK = SectorProfile((4.5, 8.5), (0.45, 0.95), (0.30, 0.45), (10.0, 14.0), 0.0, 0.05, 0.55)
_BROKER = SectorProfile((14.0, 28.0), (1.0, 2.2), (0.25, 0.40), (3.0, 4.5), 0.03, 0.15, 1.1)
_INSURER = SectorProfile((8.0, 16.0), (0.8, 1.8), (0.06, 0.12), (7.0, 10.0), 0.0, 0.10, 0.8)
_UTILITY = SectorProfile((10.0, 18.0), (0.9, 1.8), (0.06, 0.14), (2.4, 3.4), 0.04, 0.08, 0.7)
_ENERGY = SectorProfile((6.0, 12.0), (0.8, 1.8), (0.08, 0.18), (1.8, 2.6), 0.04, 0.12, 0.9)
_MATERIALS = SectorProfile((8.0, 20.0), (0.8, 2.0), (0.02, 0.07), (1.8, 2.8), 0.08, 0.15, 1.0)
_PROPERTY = SectorProfile((6.0, 14.0), (0.4, 1.1), (0.04, 0.12), (3.0, 4.5), 0.10, 0.15, 1.0)
_CONSTRUCTION = SectorProfile((6.0, 12.0), (0.5, 1.2), (0.02, 0.05), (3.0, 4.2), 0.04, 0.10, 0.8)
_CONSUMER = SectorProfile((18.0, 35.0), (2.5, 7.0), (0.08, 0.18), (1.4, 2.0), 0.03, 0.10, 1.0)
_SPIRITS = SectorProfile((20.0, 35.0), (5.0, 9.0), (0.30, 0.48), (1.2, 1.6), 0.0, 0.05, 0.9)
_HEALTH = SectorProfile((22.0, 45.0), (2.5, 6.0), (0.10, 0.22), (1.3, 1.9), 0.06, 0.12, 1.1)
_BIOTECH = SectorProfile((30.0, 70.0), (3.0, 8.0), (0.08, 0.20), (1.2, 1.7), 0.10, 0.15, 1.3)
_TECH = SectorProfile((28.0, 60.0), (3.0, 7.5), (0.06, 0.16), (1.3, 1.9), 0.07, 0.14, 1.2)
_SOFTWARE = SectorProfile((30.0, 65.0), (4.0, 9.0), (0.08, 0.22), (1.3, 1.8), 0.08, 0.14, 1.2)
_INDUSTRIAL = SectorProfile((14.0, 28.0), (1.5, 3.5), (0.05, 0.12), (1.6, 2.4), 0.05, 0.12, 1.0)
_AUTO = SectorProfile((12.0, 25.0), (1.2, 3.0), (0.03, 0.08), (1.8, 2.6), 0.06, 0.14, 1.1)
_MEDIA = SectorProfile((20.0, 40.0), (1.5, 4.0), (0.05, 0.14), (1.3, 1.8), 0.10, 0.15, 1.2)
_TRANSPORT = SectorProfile((7.0, 15.0), (0.8, 1.8), (0.06, 0.15), (1.8, 2.6), 0.06, 0.15, 1.0)
_TELECOM = SectorProfile((10.0, 18.0), (1.0, 2.2), (0.08, 0.16), (1.8, 2.4), 0.02, 0.06, 0.7)
_AGRICULTURE = SectorProfile((15.0, 35.0), (1.5, 3.5), (0.03, 0.10), (1.6, 2.2), 0.10, 0.15, 1.1)

PROFILES: dict[str, SectorProfile] = {
    # A-shares (Tushare's industry labels)
    "银行": _BANK, "证券": _BROKER, "保险": _INSURER, "白酒": _SPIRITS, "食品": _CONSUMER,
    "化学制药": _HEALTH, "医疗保健": _HEALTH, "半导体": _TECH, "元器件": _TECH, "软件服务": _SOFTWARE,
    "通信设备": _TECH, "汽车整车": _AUTO, "汽车配件": _AUTO, "电气设备": _INDUSTRIAL, "新型电力": _UTILITY,
    "化工原料": _MATERIALS, "普钢": _MATERIALS, "小金属": _MATERIALS, "煤炭开采": _ENERGY,
    "建筑工程": _CONSTRUCTION, "全国地产": _PROPERTY, "家用电器": _CONSUMER, "服饰": _CONSUMER,
    "影视音像": _MEDIA, "专用机械": _INDUSTRIAL, "水运": _TRANSPORT, "火力发电": _UTILITY,
    "农业综合": _AGRICULTURE,
    # Hong Kong
    "地产": _PROPERTY, "金融": _BANK, "资讯科技": _TECH, "消费": _CONSUMER, "能源": _ENERGY,
    "电讯": _TELECOM, "公用事业": _UTILITY, "物流": _TRANSPORT, "工业": _INDUSTRIAL,
    # United States
    "Software": _SOFTWARE, "Semiconductors": _TECH, "Biotechnology": _BIOTECH, "Banks": _BANK,
    "Insurance": _INSURER, "Retail": _CONSUMER, "Energy": _ENERGY, "Industrials": _INDUSTRIAL,
    "Utilities": _UTILITY, "Media": _MEDIA, "Consumer Goods": _CONSUMER, "Real Estate": _PROPERTY,
    "Aerospace": _INDUSTRIAL, "Healthcare": _HEALTH,
}
# Hong Kong "金融" companies are banks and insurers alike; the bank profile is the stricter one.


def profile_of(industry: str) -> SectorProfile:
    try:
        return PROFILES[industry]
    except KeyError:
        raise LookupError(f"industry {industry!r} has no sector profile (market/sectors.py PROFILES)") from None


@dataclass(frozen=True)
class PlausibleRange:
    """What no analyst would doubt for a sector, on any day: the trailing P/E of a profitable
    company and the P/B of any company with positive equity."""

    pe: tuple[float, float]
    pb: tuple[float, float]


def plausible_range(industry: str) -> PlausibleRange:
    """The sanity check's range for `industry` (docs/dataservice.md): banks are held to the ranges
    analysts quote (P/E 3-20, P/B under 2); every other sector to its target band widened for
    prices that moved since the last report, a dip year and a lagging book (P/E and P/B from 0.35
    to 4 times the band). An industry index is held to its industry's range: its P/E is its
    profitable members' (tools/indices.py), so it lies among theirs."""
    profile = profile_of(industry)
    if profile is _BANK:
        return PlausibleRange((3.0, 20.0), (0.2, 2.0))
    pe_low, pe_high = profile.pe
    pb_low, pb_high = profile.pb
    return PlausibleRange((round(pe_low * 0.35, 2), round(pe_high * 4.0, 2)),
                          (round(pb_low * 0.35, 2), round(pb_high * 4.0, 2)))
