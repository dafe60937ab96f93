"""The run metadata of predictions made outside livesearch (`livesearch evaluate --agent`, DESIGN §4.7).

A predictions file is scored only with its run metadata (`predictions.meta.json`: agent, date,
served qid-set hash, start time), which `livesearch agent run` and `agent import-inspect` write
and a user's own harness does not. `own_run_meta` makes it from what the evaluation reads anyway:
the date of the gold snapshot, the qid-set hash of the served file, the agent name and model the
user gives. The start of a run made elsewhere cannot be known: `started_at` is the predictions
file's last modification time (UTC), `finished_at` is left unset (no wall time is reported), and
`harness` says that the metadata was written this way. `metadata_for` decides between an
existing metadata file (kept when it names the same agent and model) and a new one.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from livesearch_pipeline.core.models import PredictionRunMeta
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.inputs import gold_file_date, load_served, meta_path_beside
from livesearch_pipeline.evaluation.run_identity import checked_agent_name

OWN_HARNESS = "own predictions (run metadata written by livesearch evaluate --agent; started_at is the " \
              "predictions file's modification time)"


def _checked_name(what: str, name: str | None) -> str | None:
    return None if name is None else checked_agent_name(name, what=f"--{what}")


def own_run_meta(served_path: Path, gold_path: Path, predictions_path: Path, *, agent: str,
                 model: str | None = None) -> PredictionRunMeta:
    """Run metadata for `predictions_path`, scored against `gold_path` as served in `served_path`."""
    agent = _checked_name("agent", agent) or ""
    model = _checked_name("model", model)
    date = gold_file_date(Path(gold_path))
    if date is None:
        raise EvaluationError(f"{gold_path}: a gold snapshot is named gold_answers_<YYYY-MM-DD>.jsonl, a site's "
                              "gold download is gold.jsonl with gold.manifest.json beside it")
    try:
        modified = Path(predictions_path).stat().st_mtime
    except OSError as exc:
        raise EvaluationError(f"predictions file {predictions_path} cannot be read: {exc}") from exc
    served = load_served(Path(served_path))
    return PredictionRunMeta(
        agent=agent, model=model, date=date, served_qid_set_hash=qid_set_hash(q.qid for q in served),
        started_at=dt.datetime.fromtimestamp(modified, dt.timezone.utc), harness=OWN_HARNESS,
    )


def metadata_for(served_path: Path, gold_path: Path, predictions_path: Path, *, agent: str,
                 model: str | None = None) -> PredictionRunMeta | None:
    """The metadata `--agent` asks to write, or None when the file beside the predictions already
    names this agent (and this model, when given): the run is then scored with that file. A
    file naming another agent or model is refused (EvaluationError), never overwritten."""
    meta_path = meta_path_beside(Path(predictions_path))
    if meta_path.exists():
        try:
            existing = PredictionRunMeta.model_validate_json(meta_path.read_bytes())
        except (OSError, ValueError) as exc:
            raise EvaluationError(f"{meta_path} exists but is not valid run metadata ({exc}); "
                                  "remove it to let --agent write it") from exc
        if existing.agent != agent or (model is not None and existing.model != model):
            raise EvaluationError(
                f"{meta_path} already names agent {existing.agent!r} (model {existing.model!r}), not {agent!r}"
                f"{f' (model {model!r})' if model is not None else ''}: --agent writes run metadata only for "
                "predictions without it; drop --agent, or remove the file"
            )
        return None
    return own_run_meta(served_path, gold_path, predictions_path, agent=agent, model=model)
