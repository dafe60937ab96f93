"""Issue 23, findings 4 and 9: the web's identity is checked where it is served or searched and
recorded in run summaries; serve-web names a damaged index's rebuild command, builds result URLs
from its own base, bounds query length; build-web removes a killed build's temporary file."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from livesearch_pipeline.evaluation.agents.search_read import open_search_read_agent
from livesearch_pipeline.web.generate import generate_pages
from livesearch_pipeline.web.index import INDEX_FILE, WebIndex, WebIndexError, build_index
from livesearch_pipeline.web.server import MAX_QUERY_CHARS, running_web
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, build_small_web, small_web

EARLIER = CLOCK - dt.timedelta(days=3)


@pytest.fixture(scope="module")
def web_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_small_web(tmp_path_factory.mktemp("web")).parent


def _open(web_root: Path, day: dt.date, **options) -> None:
    async def opened() -> None:
        async with open_search_read_agent(web_dir=web_root / day.isoformat(), day=day, name="search-read", **options):
            pass

    asyncio.run(opened())


def _serve_web(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LIVESEARCH_DATA_DIR": str(root)}
    return subprocess.run([sys.executable, "-m", "livesearch_pipeline.cli", "serve-web", *args, "--port", "0"],
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_later_web_copied_under_an_earlier_day_is_refused(web_root: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(web_root / CLOCK.isoformat(), data / "web" / EARLIER.isoformat())
    with pytest.raises(WebIndexError, match=f"is the web of {CLOCK}.*not of {EARLIER}: it may hold pages published "
                                            f"after {EARLIER}"):
        _open(data / "web", EARLIER, allow_partial_web=True)
    served = _serve_web(data, "--date", EARLIER.isoformat(), "--allow-partial")
    assert served.returncode != 0
    assert f"is the web of {CLOCK}" in served.stderr.strip().splitlines()[-1]


def test_a_partial_web_is_refused_unless_allowed(web_root: Path, tmp_path: Path) -> None:
    with pytest.raises(WebIndexError, match="is a part of the web of 2026-11-27 \\(part="):
        _open(web_root, CLOCK)
    _open(web_root, CLOCK, allow_partial_web=True)
    data = tmp_path / "data"
    shutil.copytree(web_root / CLOCK.isoformat(), data / "web" / CLOCK.isoformat())
    served = _serve_web(data, "--date", CLOCK.isoformat())
    assert served.returncode != 0 and "is a part of the web" in served.stderr.strip().splitlines()[-1]


def test_the_run_summary_records_the_web_searched(tmp_path: Path) -> None:
    """A search-read run of D records the identity, clock and scope of D's web in summary.json."""
    from livesearch_pipeline.evaluation.agent_run import run_registered_agent
    from livesearch_pipeline.evaluation.registry import AgentSpec
    from livesearch_pipeline.evaluation.day_inputs import AgentDay
    from livesearch_pipeline.settings import DataPaths
    from livesearch_pipeline_tests.core.fakes import MARKET_TOOLS, FakeToolClient
    from livesearch_pipeline_tests.evaluation.eval_fixtures import DAY, standard_cases, write_gold, write_served

    cases = standard_cases()
    write_served(tmp_path, cases)
    write_gold(tmp_path, [c.gold for c in cases])
    # A web labelled as the full web of DAY (its pages are the small web's: only the label matters here).
    identity = f"livesearch-offline-web/test market-seed=1 clock={DAY} history=10"
    build_index(generate_pages(small_web().config(history_sessions=2), workers=1), tmp_path / "web" / DAY.isoformat(),
                identity=identity, extra_meta={"clock": DAY.isoformat()})
    result = asyncio.run(run_registered_agent(AgentSpec(name="search-read", kind="search-read"),
                                              AgentDay.build(DataPaths(tmp_path), DAY), FakeToolClient(MARKET_TOOLS)))
    assert result.summary.web is not None
    assert {k: result.summary.web[k] for k in ("identity", "clock", "scope")} == {
        "identity": identity, "clock": DAY.isoformat(), "scope": "full"}
    assert '"scope": "full"' in (result.run_dir / "summary.json").read_text()


def test_a_damaged_index_names_the_rebuild_command(web_root: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    day_dir = data / "web" / CLOCK.isoformat()
    shutil.copytree(web_root / CLOCK.isoformat(), day_dir)
    index = day_dir / INDEX_FILE
    index.write_bytes(index.read_bytes()[: index.stat().st_size // 3])  # a truncated copy
    with pytest.raises(WebIndexError, match=f"is damaged .*livesearch build-web --date {CLOCK}"):
        with running_web(day_dir):
            pass
    served = _serve_web(data, "--date", CLOCK.isoformat(), "--allow-partial")
    last = served.stderr.strip().splitlines()[-1]
    assert served.returncode != 0 and "Traceback" not in served.stderr, served.stderr
    assert "is damaged" in last and f"livesearch build-web --date {CLOCK}" in last
    index.write_bytes(b"not a database at all" * 100)
    with pytest.raises(WebIndexError, match="is damaged"):
        WebIndex(day_dir)


def test_result_urls_come_from_the_servers_own_base_and_long_queries_are_refused(web_root: Path) -> None:
    with running_web(web_root / CLOCK.isoformat()) as url:
        answer = httpx.get(f"{url}/search", params={"q": small_web().famous.name, "format": "json"},
                           headers={"Host": "evil.example:666"})
        assert answer.status_code == 200
        results = answer.json()["results"]
        assert results and all(r["url"].startswith(url + "/") for r in results)
        assert all("evil" not in r["url"] and "evil" not in r["parsed_url"][1] for r in results)
        started = time.monotonic()
        long = httpx.get(f"{url}/search", params={"q": "贵州茅台收盘价" * 900, "format": "json"})
        assert time.monotonic() - started < 2.0
        assert long.status_code == 400 and f"at most {MAX_QUERY_CHARS} are searched" in long.text


def test_build_removes_a_killed_builds_temporary_file(tmp_path: Path) -> None:
    directory = tmp_path / "web" / CLOCK.isoformat()
    directory.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = directory / f".{INDEX_FILE}.{int(dead.stdout)}.tmp"
    stale.write_bytes(b"x" * 1000)
    live = directory / f".{INDEX_FILE}.{os.getppid()}.tmp"  # a build still running in another process
    live.write_bytes(b"y")
    build_index(generate_pages(small_web().config(history_sessions=1), workers=1), directory, identity="t",
                extra_meta={"clock": CLOCK.isoformat()})
    assert not stale.exists() and live.exists() and (directory / INDEX_FILE).is_file()


def test_a_run_on_an_external_searxng_records_it_unchecked(tmp_path: Path) -> None:
    from livesearch_pipeline.evaluation.registry import AgentSpec
    from livesearch_pipeline.evaluation.searched_web import searched_web

    spec = AgentSpec(name="my-web", kind="web", searxng_url="http://127.0.0.1:8890")
    web_dir = tmp_path / "web" / CLOCK.isoformat()
    web = searched_web(spec, web_dir)
    assert web == {"searxng_url": "http://127.0.0.1:8890", "scope": "external search backend (identity not checked)"}
    assert searched_web(AgentSpec(name="stale", kind="stale"), web_dir) is None
