"""The client examples of docs/clients.md, run against a server on 127.0.0.1.

The `mcp` example runs in this environment. The OpenAI Agents SDK and LangChain examples need
packages that cannot live here (`langchain-mcp-adapters` requires mcp<2, `openai-agents` pins
websockets<17): they run in the interpreter named by LIVESEARCH_AGENTS_PYTHON /
LIVESEARCH_LANGCHAIN_PYTHON, a separate virtual environment with that package installed. What
those SDKs do to our schemas is checked here regardless (test_tool_metadata.py: the strict
transform and null arguments).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs, select_specs
from livesearch_pipeline.dataservice.server import DataService, http_server_thread

DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
DOC_URL = "http://127.0.0.1:8765/mcp"
_BLOCK = re.compile(r"<!-- example: (\w+) -->\n```python\n(.*?)```", re.S)


def examples() -> dict[str, str]:
    return dict(_BLOCK.findall(DOC.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def url():
    # What the doc serves: --clock 2026-11-27 --services cn_quotes,utility
    specs = select_specs(collect_tool_specs(), services=["cn_quotes", "utility"])
    with http_server_thread(DataService(specs, ServiceConfig(clock=dt.date(2026, 11, 27)))) as served:
        yield served


def run_example(name: str, python: str, url: str) -> list[str]:
    code = examples()[name]
    assert DOC_URL in code
    done = subprocess.run([python, "-c", code.replace(DOC_URL, url)], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "OPENAI_API_KEY": "not-used-no-model-is-called"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()


def test_the_doc_has_the_three_examples():
    assert set(examples()) == {"mcp", "agents", "langchain"}


def test_the_mcp_example(url):
    lines = run_example("mcp", sys.executable, url)
    count, rest = lines[0].split(" ", 1)
    title, read_only = rest.rsplit(" ", 1)
    assert int(count) == 15 and title == "A-share daily bars" and read_only == "True"
    assert lines[1] == "20261127"


def _other_python(variable: str) -> str:
    python = os.environ.get(variable)
    if not python:
        pytest.skip(f"{variable} is not set: point it at a virtual environment's python with the SDK installed "
                    "(docs/clients.md, Versions)")
    return python


def test_the_openai_agents_example(url):
    lines = run_example("agents", _other_python("LIVESEARCH_AGENTS_PYTHON"), url)
    assert lines[0].startswith("15 True ")
    assert lines[1] == "20261127"


def test_the_langchain_example(url):
    lines = run_example("langchain", _other_python("LIVESEARCH_LANGCHAIN_PYTHON"), url)
    assert lines[0] == "15 {'type': 'null'}"
    assert lines[1] == "20261127"
