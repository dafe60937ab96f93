"""Retrieval metrics of D's agent runs against D's evidence map (web/evidence.py).

Every web agent's trace records the searches it ran (`web_search`: query and result URLs) and the
pages it opened (`fetch_page`: URL). Per agent this reports, over D's web-answerable questions
(the scoring set minus the tools-only ones), its accuracy beside its *evidence recall*: the share
of questions for which it opened at least one evidence page (and the share for which one was
among its search results). Per visibility band it reports the *ceiling*: the share of questions
whose evidence is on the web at all, which no web-only agent can exceed. Agents without web
tools (oracle, stale, closed book) open nothing: their recall is 0 by construction and is shown
as "-".

It also shows the *effort* the evidence takes (web/evidence.py): the fewest page reads that together
show every deciding record of a question, its distribution per visibility band and per family, so
an agent's accuracy can be read against how much work its questions needed. Agents with a page-read
budget carry it in their name (`navigator-6`).

Written beside the leaderboard as `retrieval.json` and `retrieval.md`; it adds to the leaderboard
and changes nothing in its ranking.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

from livesearch_pipeline.core.markdown import md_text
from livesearch_pipeline.core.snapshot import write_atomic
from livesearch_pipeline.core.untrusted import UntrustedFileError, read_untrusted
from livesearch_pipeline.evaluation.limits import MAX_PREDICTIONS_BYTES, MAX_RUN_META_BYTES, MAX_VERDICTS_BYTES

RETRIEVAL_JSON = "retrieval.json"
RETRIEVAL_MD = "retrieval.md"
BAND_NAMES = ("low", "mid", "high")


class RetrievalError(ValueError):
    """A run's predictions or verdicts cannot be read."""


def _jsonl(path: Path, max_bytes: int) -> list[dict[str, Any]]:
    """The JSON objects of a run folder's JSONL file, read as a writable input (`core.untrusted`)."""
    try:
        data = read_untrusted(path, max_bytes=max_bytes)
        rows = [json.loads(line) for line in data.splitlines() if line.strip()]
    except (UntrustedFileError, ValueError) as exc:
        raise RetrievalError(f"{path}: {exc}") from exc
    if not all(isinstance(row, dict) and isinstance(row.get("qid"), str) for row in rows):
        raise RetrievalError(f"{path}: a line is not a JSON object with a qid")
    return rows


def _agent_of(run_dir: Path) -> str | None:
    """The agent the run's metadata records (its identity), or None when it cannot be read."""
    try:
        meta = json.loads(read_untrusted(run_dir / "predictions.meta.json", max_bytes=MAX_RUN_META_BYTES))
    except (UntrustedFileError, ValueError):
        return None
    agent = meta.get("agent") if isinstance(meta, dict) else None
    return agent if isinstance(agent, str) else None


def pages_of_trace(trace: Sequence[Mapping[str, Any]] | None) -> tuple[set[str], set[str]]:
    """(opened page paths, searched result paths) of one prediction's trace."""
    opened: set[str] = set()
    searched: set[str] = set()
    for entry in trace or ():
        tool = entry.get("tool")
        if tool == "fetch_page":
            for key in ("url", "final_url"):
                if isinstance(entry.get(key), str):
                    opened.add(urlsplit(entry[key]).path)
        elif tool == "web_search":
            searched.update(urlsplit(u).path for u in entry.get("urls") or () if isinstance(u, str))
    return opened, searched


def _share(hits: int, n: int) -> float | None:
    return round(hits / n, 4) if n else None


def run_retrieval(run_dir: Path, evidence: Mapping[str, Any]) -> dict[str, Any]:
    """One run's accuracy and evidence recall over the web-answerable questions of the map."""
    questions: Mapping[str, Mapping[str, Any]] = evidence["questions"]
    predictions = {p["qid"]: p for p in _jsonl(run_dir / "predictions.jsonl", MAX_PREDICTIONS_BYTES)}
    verdicts = ({v["qid"]: v for v in _jsonl(run_dir / "verdicts.jsonl", MAX_VERDICTS_BYTES)}
                if os.path.lexists(run_dir / "verdicts.jsonl") else {})
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # n, correct, opened, searched
    used_web = False
    for qid, entry in questions.items():
        if entry["tools_only"] or qid not in verdicts:
            continue
        prediction = predictions.get(qid, {})
        opened, searched = pages_of_trace(prediction.get("trace"))
        used_web = used_web or bool(opened or searched)
        pages = set(entry["pages"])
        row = (1, int(verdicts[qid].get("correct") is True), int(bool(opened & pages)), int(bool(searched & pages)))
        for key in ("all", entry["band"]):
            totals[key] = [a + b for a, b in zip(totals[key], row)]

    def figures(key: str) -> dict[str, Any]:
        n, correct, opened, searched = totals.get(key, [0, 0, 0, 0])
        return {"n": n, "accuracy": _share(correct, n),
                "evidence_recall": _share(opened, n) if used_web else None,
                "evidence_in_results": _share(searched, n) if used_web else None}

    return {"agent": _agent_of(run_dir) or run_dir.name, "folder": run_dir.name, "uses_web": used_web, **figures("all"),
            "by_band": {band: figures(band) for band in BAND_NAMES}}


def _run_or_problem(run_dir: Path, evidence: Mapping[str, Any]) -> dict[str, Any]:
    """`run_retrieval`, or the run with no figures and the reason it cannot be read: one run's bad file
    never takes the day's report down."""
    try:
        return run_retrieval(run_dir, evidence)
    except RetrievalError as exc:
        empty = {"n": 0, "accuracy": None, "evidence_recall": None, "evidence_in_results": None}
        return {"agent": _agent_of(run_dir) or run_dir.name, "folder": run_dir.name, "uses_web": False,
                "error": " ".join(str(exc).split())[:300], **empty, "by_band": {band: dict(empty) for band in BAND_NAMES}}


def build_retrieval(run_dirs: Sequence[Path], evidence: Mapping[str, Any]) -> dict[str, Any]:
    summary = evidence.get("summary", {})
    return {
        "clock": evidence.get("clock"), "gold_sha256": evidence.get("gold_sha256"),
        "web_questions": summary.get("evidence", {}).get("n"), "tools_only": summary.get("tools_only"),
        "ceiling": summary.get("evidence", {}).get("share"),
        "ceiling_by_band": {band: summary.get("by_band", {}).get(band, {}).get("share") for band in BAND_NAMES},
        "effort": summary.get("effort"),
        "runs": [_run_or_problem(Path(d), evidence) for d in run_dirs],
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def render_retrieval_markdown(report: Mapping[str, Any]) -> str:
    header = ["agent", "n", "accuracy", "evidence recall", "evidence in results",
              *(f"recall {band}" for band in BAND_NAMES)]
    lines = [f"# Retrieval — web of {report['clock']}", "",
             f"Web-answerable questions: {report['web_questions']} (tools-only, excluded: {report['tools_only']}). "
             f"Evidence-present ceiling: {_pct(report['ceiling'])} — "
             + ", ".join(f"{band} {_pct(report['ceiling_by_band'][band])}" for band in BAND_NAMES) + ".", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for run in report["runs"]:
        cells = [md_text(run["agent"]), str(run["n"]), _pct(run["accuracy"]), _pct(run["evidence_recall"]),
                 _pct(run["evidence_in_results"]),
                 *(_pct(run["by_band"][band]["evidence_recall"]) for band in BAND_NAMES)]
        lines.append("| " + " | ".join(cells) + " |")
    effort = report.get("effort")
    if effort:
        lines += ["", "## Effort: page reads that show every deciding record", "",
                  "| group | questions | median | mean | p90 | max |", "|---|---:|---:|---:|---:|---:|"]
        groups = [("all", effort["all"]), *((f"band {band}", effort["by_band"][band]) for band in BAND_NAMES),
                  *((f"family {name}", figures) for name, figures in effort["by_family"].items()),
                  *((name, figures) for name, figures in effort["by_band_family"].items())]
        for name, figures in groups:
            if figures["n"]:
                lines.append(f"| {name} | {figures['n']} | {figures['median']} | {figures['mean']} | {figures['p90']} "
                             f"| {figures['max']} |")
    return "\n".join(lines) + "\n"


def write_retrieval(report: Mapping[str, Any], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    outputs = {out_dir / RETRIEVAL_JSON: json.dumps(report, indent=2, ensure_ascii=False) + "\n",
               out_dir / RETRIEVAL_MD: render_retrieval_markdown(report)}
    for path, text in outputs.items():
        write_atomic(path, text.encode("utf-8"))
    return list(outputs)
