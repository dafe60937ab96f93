"""The `public_site` asset materialised in process, and `livesearch site build | serve`."""

from __future__ import annotations

import datetime as dt
import gzip
import threading
import urllib.error
import urllib.request
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.defs.resources import StorageResource
from livesearch_pipeline.defs.site.assets import public_site
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline.site.build import site_dir
from livesearch_pipeline.site.serve import SiteServeError, make_server
from livesearch_pipeline_tests.site.conftest import DAYS


def test_public_site_asset_builds_the_site_of_its_day(data_paths: DataPaths) -> None:
    result = dg.materialize([public_site], partition_key=DAYS[-1].isoformat(),
                            instance=dg.DagsterInstance.ephemeral(),
                            resources={"storage": StorageResource(root=str(data_paths.root))})
    assert result.success
    metadata = result.asset_materializations_for_node("public_site")[0].metadata
    assert metadata["latest_day"].value == DAYS[-1].isoformat() and metadata["written"].value > 0
    assert (site_dir(data_paths) / "index.html").is_file()


def test_public_site_fails_for_a_day_without_frozen_gold(data_paths: DataPaths) -> None:
    day = DAYS[-1] + dt.timedelta(days=1)
    with pytest.raises(dg.Failure, match=f"the site of {day} has no frozen day {day}"):
        dg.materialize([public_site], partition_key=day.isoformat(), instance=dg.DagsterInstance.ephemeral(),
                       resources={"storage": StorageResource(root=str(data_paths.root))})


def test_site_build_command_and_the_server(data_paths: DataPaths, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(data_paths.root))
    assert main(["site", "build"]) == 0
    out = capsys.readouterr().out
    assert f"site of {DAYS[-1]}" in out and str(site_dir(data_paths) / "index.html") in out
    server = make_server(site_dir(data_paths), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_port}/"
        with urllib.request.urlopen(base, timeout=10) as response:  # / serves index.html
            assert b"Board" in response.read()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(base + "questions/", timeout=10)  # no directory listing
        assert missing.value.code == 404
        page = (site_dir(data_paths) / "days" / f"{DAYS[-1]}.html").read_bytes()
        gzipped = urllib.request.Request(base + f"days/{DAYS[-1]}.html", headers={"Accept-Encoding": "br, gzip"})
        with urllib.request.urlopen(gzipped, timeout=10) as response:
            assert response.headers["Content-Encoding"] == "gzip" and response.headers["Vary"] == "accept-encoding"
            assert gzip.decompress(response.read()) == page
        refused = urllib.request.Request(base + f"days/{DAYS[-1]}.html", headers={"Accept-Encoding": "gzip;q=0"})
        with urllib.request.urlopen(refused, timeout=10) as response:  # a client that refuses gzip gets the bytes
            assert response.headers["Content-Encoding"] is None and response.read() == page
        with urllib.request.urlopen(base + f"downloads/{DAYS[0]}/gold.parquet", timeout=10) as response:
            assert response.headers["Content-Encoding"] is None  # binary downloads go as they are
        with urllib.request.urlopen(base + "downloads/README.md", timeout=10) as response:
            assert response.headers["Content-Type"] == "text/markdown; charset=utf-8"
    finally:
        server.shutdown()
        server.server_close()
    assert server.server_address[0] == "127.0.0.1"


def test_serving_an_unbuilt_folder_is_refused(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(SiteServeError, match="build the site first"):
        make_server(tmp_path, "127.0.0.1", 0)
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path))
    with pytest.raises(SystemExit, match="no frozen day"):
        main(["site", "build"])
