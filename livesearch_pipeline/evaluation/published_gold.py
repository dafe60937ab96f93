"""The gold a day's public site publishes, as the evaluator reads it: an outsider scores a run with
the site's downloads of D, not with the operator's snapshot.

The site (site/downloads.py) publishes per day `downloads/<D>/gold.jsonl`: one row per served
question with the snapshot's status and, where the live-answer rule shows it (`shown`), the
answer, its value (`value_json`), unit, observed period and full matching rule (`match_json`);
a withheld row carries its `hidden_reason` and nothing of the answer. Beside it,
`gold.manifest.json` (`PublishedGoldManifest`): the format, D, the sha256 of `gold.jsonl`'s bytes,
how many golds are shown and withheld, and D's snapshot manifest as frozen (its sha256 — the
board's "gold sha256" —, pool version, withdrawn questions).

`load_published_gold` reads the pair into a `GoldDay` that holds only the shown answers and names
the withheld qids: the evaluator scores the published questions only (the scoring set is D's
minus the withdrawn minus the withheld) and its summary says so. A file whose bytes do not match
its manifest, a row that is not a published gold row of D, or a shown row without its answer or
rule is refused with one `EvaluationError` naming the file and line.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from livesearch_pipeline.core.models import GoldAnswer, MatchRule, SnapshotManifest
from livesearch_pipeline.core.snapshot import sha256_bytes
from livesearch_pipeline.core.untrusted import UntrustedFileError, read_untrusted
from livesearch_pipeline.evaluation.errors import EvaluationError

PUBLISHED_FORMAT = "livesearch-published-gold-1"
PUBLISHED_GOLD_FILE = "gold.jsonl"
PUBLISHED_MANIFEST_FILE = "gold.manifest.json"
MAX_PUBLISHED_GOLD_BYTES = 512 * 1024 * 1024
MAX_PUBLISHED_MANIFEST_BYTES = 16 * 1024 * 1024


class PublishedGoldManifest(BaseModel):
    """`gold.manifest.json` beside a day's published `gold.jsonl`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str
    date: dt.date
    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of the published gold.jsonl's bytes
    shown: int = Field(ge=0)  # ok golds shown
    withheld: int = Field(ge=0)  # ok golds withheld by the live-answer rule
    snapshot: SnapshotManifest  # D's gold snapshot manifest as frozen (its sha256: the board's gold sha256)


def published_manifest_path(gold_path: Path) -> Path:
    """`gold.manifest.json` beside `gold.jsonl` (`<name>.manifest.json` beside `<name>.jsonl`)."""
    return Path(gold_path).with_name(Path(gold_path).name.removesuffix(".jsonl") + ".manifest.json")


def is_published_gold(gold_path: Path) -> bool:
    """Whether `gold_path` is a site's gold download: a published manifest of this format lies beside it."""
    manifest = published_manifest_path(gold_path)
    if not manifest.is_file():
        return False
    try:
        return json.loads(manifest.read_bytes()).get("format") == PUBLISHED_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def published_manifest(gold_bytes: bytes, date: dt.date, snapshot: SnapshotManifest, *, shown: int,
                       withheld: int) -> bytes:
    """The bytes of `gold.manifest.json` for a published `gold.jsonl` of `date` (the site writes it)."""
    manifest = PublishedGoldManifest(format=PUBLISHED_FORMAT, date=date, file=PUBLISHED_GOLD_FILE,
                                     sha256=sha256_bytes(gold_bytes), shown=shown, withheld=withheld,
                                     snapshot=snapshot)
    return manifest.model_dump_json(indent=2).encode("utf-8") + b"\n"


def _read(path: Path, max_bytes: int, what: str) -> bytes:
    try:
        return read_untrusted(path, max_bytes=max_bytes, what=what)
    except UntrustedFileError as exc:
        raise EvaluationError(str(exc)) from None


def read_published_manifest(gold_path: Path) -> PublishedGoldManifest:
    path = published_manifest_path(gold_path)
    data = _read(path, MAX_PUBLISHED_MANIFEST_BYTES, "published gold manifest")
    try:
        manifest = PublishedGoldManifest.model_validate_json(data)
    except ValidationError as exc:
        raise EvaluationError(f"{path} is not a published gold manifest: {str(exc).splitlines()[0]}") from None
    if manifest.format != PUBLISHED_FORMAT:
        raise EvaluationError(f"{path}: format {manifest.format!r}, this evaluator reads {PUBLISHED_FORMAT!r}")
    if manifest.snapshot.date != manifest.date:
        raise EvaluationError(f"{path}: a manifest of {manifest.date} holding the snapshot of {manifest.snapshot.date}")
    return manifest


def load_published_gold(gold_path: Path) -> tuple[PublishedGoldManifest, dict[str, GoldAnswer], frozenset[str]]:
    """(the manifest, the shown answers by qid — and the non-ok rows, which carry no answer —, the
    withheld qids) of a site's gold download; EvaluationError naming the file and line otherwise."""
    gold_path = Path(gold_path)
    manifest = read_published_manifest(gold_path)
    data = _read(gold_path, MAX_PUBLISHED_GOLD_BYTES, "published gold")
    if sha256_bytes(data) != manifest.sha256:
        raise EvaluationError(f"{gold_path}: its sha256 is not the one {published_manifest_path(gold_path).name} "
                              "records: download the day's gold.jsonl and gold.manifest.json again, together")
    answers: dict[str, GoldAnswer] = {}
    withheld: set[str] = set()
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{gold_path}:{number}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise EvaluationError(f"{where}: not a JSON object ({exc})") from None
        if not isinstance(row, dict) or not {"date", "qid", "status", "shown"} <= row.keys():
            raise EvaluationError(f"{where}: not a published gold row (date, qid, status, shown)")
        if row["date"] != manifest.date.isoformat():
            raise EvaluationError(f"{where}: a row of {row['date']} in the published gold of {manifest.date}")
        qid = row["qid"]
        if not isinstance(qid, str) or qid in answers or qid in withheld:
            raise EvaluationError(f"{where}: qid {qid!r} is not a string or appears twice")
        if row["status"] == "ok" and row["shown"] is not True:
            withheld.add(qid)
            continue
        try:
            match = MatchRule.model_validate_json(row["match_json"]) if row.get("match_json") else None
            if match is None:
                raise ValueError("no match_json: the published rule of a shown gold")
            value = json.loads(row["value_json"]) if row.get("value_json") is not None else None
            answers[qid] = GoldAnswer(
                qid=qid, date=manifest.date, status=row["status"], answer=row.get("answer"), value=value,
                unit=row.get("unit"), observed_period=row.get("observed_period"), match=match,
                error="withdrawn on the day (published without its error)" if row["status"] == "error" else None)
        except (ValueError, TypeError, KeyError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise EvaluationError(f"{where}: a shown gold row that cannot be read: {first}") from None
    shown = sum(1 for a in answers.values() if a.status == "ok")
    if (shown, len(withheld)) != (manifest.shown, manifest.withheld):
        raise EvaluationError(f"{gold_path}: {shown} shown and {len(withheld)} withheld gold(s), its manifest says "
                              f"{manifest.shown} and {manifest.withheld}")
    return manifest, answers, frozenset(withheld)
