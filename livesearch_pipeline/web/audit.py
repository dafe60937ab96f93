"""Audit of a built web: pages whose visible text gives the game away.

A page must read like a page of the real web: it may not name the generator ("synthetic",
"fictional", "offline web", the project's name; 虚构, 合成市场, 模拟指数), the noise model ("third-party figures that
disagree", "revised by up to"), the data service or its tools (API names such as `hk_hold`,
parameter names such as `ts_code`). Provenance lives in the manifest and in an opaque digest in
each page's head, which this audit does not read.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from typing import Iterator

from livesearch_pipeline.web.index import WebIndex

_GENERATOR = re.compile(
    r"synthetic|fictional|offline web|livesearch|generated|noise model|revised by up to|data service|"
    r"\bts_code\b|\bdate window\b|\bwith a date window\b|only reports announced by the clock|\btool\b|"
    r"虚构|合成市场|模拟指数|合成.{0,6}指数",
    re.IGNORECASE)


@lru_cache(maxsize=1)
def _tool_names() -> re.Pattern[str]:
    """The data service's tool names that are not plain words ("hk_hold", "fina_mainbz", "cn_cpi")."""
    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.server import DataService

    service = DataService(config=ServiceConfig(clock=dt.date(2026, 1, 2)))  # any clock: the tool list is fixed
    names = sorted({spec.name for spec in service.specs if "_" in spec.name},
                   key=len, reverse=True)
    return re.compile(r"(?<![\w/])(?:" + "|".join(map(re.escape, names)) + r")(?![\w/])")


def giveaways(text: str) -> list[str]:
    """The give-away phrases and tool names in a page's visible text."""
    found = [m.group(0) for m in _GENERATOR.finditer(text)]
    found += [m.group(0) for m in _tool_names().finditer(text)]
    return found


def pages_giving_the_game_away(index: WebIndex) -> Iterator[tuple[str, list[str]]]:
    """(path, give-aways) of every page of the index whose visible text names the generator or a tool."""
    connection = index._connection()
    for (path,) in connection.execute("SELECT path FROM pages ORDER BY id"):
        found = giveaways(index.page_text(path))
        if found:
            yield path, found
