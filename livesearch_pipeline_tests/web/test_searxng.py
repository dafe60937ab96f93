"""SearXNG compatibility of `serve-web`: the routes and parameters SearXNG clients rely on, and two
real clients (LangChain's SearxSearchWrapper, litellm's SearXNG search) run against it.
Also the engine's deduplication and true totals."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import httpx
import pytest

from livesearch_pipeline.web.index import WebIndex
from livesearch_pipeline.web.server import running_web
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, build_small_web, small_web


@pytest.fixture(scope="module")
def web_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_small_web(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="module")
def web_url(web_dir: Path):
    with running_web(web_dir) as url:
        yield url


def _urls(payload: dict) -> list[str]:
    return [r["url"] for r in payload["results"]]


def test_the_bare_host_redirects_to_search_with_the_same_query_string(web_url: str) -> None:
    famous = small_web().famous
    response = httpx.get(f"{web_url}/", params={"q": famous.code, "format": "json"})
    assert response.status_code == 302
    assert response.headers["location"] == f"/search?q={famous.code}&format=json"
    followed = httpx.get(f"{web_url}/", params={"q": famous.code, "format": "json"}, follow_redirects=True)
    direct = httpx.get(f"{web_url}/search", params={"q": famous.code, "format": "json"})
    assert followed.status_code == 200 and followed.json() == direct.json()
    home = httpx.get(f"{web_url}/")
    assert home.status_code == 200 and "<form" in home.text


def test_post_search_takes_form_data(web_url: str) -> None:
    famous = small_web().famous
    params = {"q": f"{famous.name_en} daily quotes", "format": "json", "pageno": "1"}
    posted = httpx.post(f"{web_url}/search", data=params)
    assert posted.status_code == 200
    assert posted.json() == httpx.get(f"{web_url}/search", params=params).json()
    assert httpx.post(f"{web_url}/search", content=b"{}", headers={"content-type": "application/json"}).status_code == 415
    assert httpx.post(f"{web_url}/elsewhere", data=params).status_code == 405


def test_time_range_keeps_pages_published_within_the_range(web_url: str) -> None:
    famous = small_web().famous
    query = {"q": famous.code, "format": "json"}
    everything = httpx.get(f"{web_url}/search", params=query).json()
    for name, days in (("day", 1), ("week", 7), ("month", 31), ("year", 366)):
        ranged = httpx.get(f"{web_url}/search", params={**query, "time_range": name}).json()
        for result in ranged["results"]:
            assert dt.datetime.fromisoformat(result["publishedDate"]).date() >= CLOCK - dt.timedelta(days=days)
        assert ranged["number_of_results"] <= everything["number_of_results"]
    day = httpx.get(f"{web_url}/search", params={**query, "time_range": "day"}).json()
    year = httpx.get(f"{web_url}/search", params={**query, "time_range": "year"}).json()
    assert day["number_of_results"] < year["number_of_results"], "an old profile or report falls out of a day's range"
    bad = httpx.get(f"{web_url}/search", params={**query, "time_range": "decade"})
    assert bad.status_code == 400 and "time_range" in bad.text
    empty = httpx.get(f"{web_url}/search", params={**query, "time_range": ""}).json()
    assert _urls(empty) == _urls(everything)


def test_parameters_searxng_ignores_are_ignored(web_url: str) -> None:
    famous = small_web().famous
    query = {"q": famous.code, "format": "json"}
    plain = httpx.get(f"{web_url}/search", params=query).json()
    noisy = httpx.get(f"{web_url}/search", params={**query, "categories": "general,news", "engines": "google",
                                                   "language": "en-US", "safesearch": "1", "theme": "simple"}).json()
    assert noisy == plain


def test_results_are_one_per_content_and_totals_count_every_match(web_dir: Path, web_url: str) -> None:
    famous = small_web().famous
    index = WebIndex(web_dir)
    first = index.search_results(famous.code, per_page=10)
    second = index.search_results(famous.code, pageno=2, per_page=10)
    assert first.total == second.total > len(first.hits) + len(second.hits) - 1
    connection = index._connection()
    contents = [connection.execute("SELECT content FROM pages WHERE path = ?", (h.path,)).fetchone()[0]
                for h in first.hits + second.hits]
    assert len(contents) == len(set(contents)), "no two results show the same content"
    # Mirror copies exist in the index (the same figures on several sites) and collapse in results.
    duplicated = connection.execute("SELECT count(*) FROM (SELECT content FROM pages GROUP BY content "
                                    "HAVING count(*) > 1)").fetchone()[0]
    assert duplicated > 0
    payload = httpx.get(f"{web_url}/search", params={"q": famous.code, "format": "json"}).json()
    assert payload["number_of_results"] == first.total and len(payload["results"]) == 10


def test_short_names_and_bare_tickers_find_their_entity(web_dir: Path) -> None:
    index = WebIndex(web_dir)
    chosen = small_web()
    for entity in (chosen.obscure, chosen.famous):
        ticker = entity.code.split(".")[0]
        assert index.search(ticker)[0].path == f"/exchange/company/{entity.code}.html"
        short = entity.name_zh[:2]
        assert any(h.path == f"/exchange/company/{entity.code}.html" for h in index.search(short, per_page=10))
        assert any(h.path.endswith(f"/{entity.code}.html") for h in index.search(entity.name_en.split(" ")[0]))


def test_langchain_searx_search_wrapper_works_with_the_documented_host(web_url: str) -> None:
    from langchain_community.utilities import SearxSearchWrapper

    famous = small_web().famous
    wrapper = SearxSearchWrapper(searx_host=web_url, k=5)
    results = wrapper.results(f"{famous.name_en} daily quotes", num_results=5)
    assert results and all(r["link"].startswith(web_url + "/") for r in results)
    assert any(famous.code in r["title"] for r in results)
    assert famous.code in wrapper.run(f"{famous.code} daily quotes") or wrapper.run(famous.code)


def test_litellm_searxng_search_works_against_the_offline_web(web_url: str) -> None:
    import litellm

    famous = small_web().famous
    response = litellm.search(query=f"{famous.name_en} daily quotes", search_provider="searxng", api_base=web_url)
    assert response.results and all(r.url.startswith(web_url + "/") for r in response.results)
    assert any(famous.code in r.title for r in response.results)
