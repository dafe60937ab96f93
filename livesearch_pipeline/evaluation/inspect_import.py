"""An Inspect AI log of the `livesearch` task as a LiveSearch run directory, evaluated.

`livesearch agent import-inspect LOG --out data/runs/<D>/<agent>` writes, from the log's samples:
- `predictions.jsonl`: one `Prediction` per question, the final-answer line of the sample's last
  reply, the text answered (`lang`) and the sample's usage (model calls, tool calls, input and
  output tokens, cost, time);
- `predictions.meta.json`: agent, model (Inspect's model name), D, the served qid-set hash, the
  run's start and end, the `lang` option and the harness (`inspect_ai <version>`);
- `trajectories.jsonl`: one line per question, the sample's messages and tool calls;
then scores it with the evaluator (`verdicts.jsonl`, `summary.json`), so the run ranks on D's
leaderboard next to the baselines. A `-T lang=both` run holds two samples of a question with a
Chinese text; its Chinese samples (`<qid>@zh`) go to a second run directory, `<out>-zh`.

Cost: Inspect's own `total_cost` when the log records one, else litellm's price map for the
model's name (`infra.llm.token_cost_usd`), else None (a local or unknown model such as
`mockllm/model`). Every file is written atomically; a directory that already holds predictions
is refused, and nothing is written when the log is not a run of this task.

The served questions and the gold are always those of the configured data root, never a location
the log names (its metadata is the submitter's word). An import writes only a folder it may
(`writers`: not the gold, served, pool or analytics folders, no symlinked file, no other writer
holding the folder's lock: all checked before anything is written), and reads a bounded log:
MAX_LOG_BYTES uncompressed, MAX_SAMPLE_BYTES per sample, two samples per served question,
MAX_MESSAGES_PER_SAMPLE messages per sample (the error names the limit).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from livesearch_pipeline.core.models import Prediction, PredictionRunMeta, ReadBudget, TrajectoryLine, Usage
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.snapshot import write_atomic
from livesearch_pipeline.evaluation.agents.base import META_FILE, PREDICTIONS_FILE, TRAJECTORIES_FILE
from livesearch_pipeline.evaluation.agents.budget import LEDGER_STORE_KEY
from livesearch_pipeline.evaluation.agents.loop import extract_final_answer
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.inputs import evaluation_inputs
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.evaluation.registry import registered_names
from livesearch_pipeline.evaluation.run_identity import check_name_free, checked_agent_name
from livesearch_pipeline.evaluation.summary import EvaluationResult
from livesearch_pipeline.evaluation.writers import (
    ANALYTICS_DIR,
    WriterTargetError,
    check_writable,
    protected_directories,
    run_folder_writer,
)
from livesearch_pipeline.core.locks import WriterLockedError
from livesearch_pipeline.infra.llm import token_cost_usd
from livesearch_pipeline.settings import DataPaths

TASK_NAMES = ("livesearch", "livesearch_pipeline/livesearch")
ZH_SUFFIX = "@zh"


class InspectImportError(ValueError):
    """The log cannot become a run directory; the message names the log and the problem."""


@dataclass(frozen=True)
class ImportedRun:
    out_dir: Path
    predictions: int
    result: EvaluationResult


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in text.lower()).strip("-")


def default_agent_name(model: str, tools: str) -> str:
    return f"inspect-{tools}-{_slug(model)}"


def _usage(sample: Any, model: str) -> Usage:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    input_tokens = sum(u.input_tokens for u in sample.model_usage.values())
    output_tokens = sum(u.output_tokens for u in sample.model_usage.values())
    costs = [u.total_cost for u in sample.model_usage.values()]
    if costs and all(c is not None for c in costs):
        cost: float | None = float(sum(costs))
    else:
        cost = token_cost_usd(model, input_tokens, output_tokens) if sample.model_usage else None
    ledger = (sample.store or {}).get(LEDGER_STORE_KEY) or {}
    counts = {key: _count(ledger.get(key), key) for key in ("searches", "page_reads", "budget_refusals")}
    return Usage(
        model_calls=sum(1 for m in sample.messages if isinstance(m, ChatMessageAssistant)),
        tool_calls=sum(1 for m in sample.messages if isinstance(m, ChatMessageTool)),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
        wall_s=round(float(sample.total_time or 0.0), 3),
        **counts,
    )


def _count(value: object, key: str) -> int:
    """A count the sample's ledger recorded (absent: 0)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InspectImportError(f"the sample store's {LEDGER_STORE_KEY}.{key} is {value!r}, not a count")
    return value


def _budget(metadata: dict[str, Any], log_path: Path) -> ReadBudget | None:
    """The web budget the task declared (`-T max_reads`, `-T max_searches`), or None."""
    declared = metadata.get("budget")
    if declared is None:
        return None
    try:
        return ReadBudget.model_validate(declared)
    except ValueError as exc:
        raise InspectImportError(f"{log_path}: the task metadata's budget {declared!r} is not a read budget") from exc


def _tool_calls(sample: Any) -> list[dict[str, object]]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    results = {m.tool_call_id: m for m in sample.messages if isinstance(m, ChatMessageTool)}
    calls: list[dict[str, object]] = []
    for message in sample.messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        for call in message.tool_calls or []:
            result = results.get(call.id)
            entry: dict[str, object] = {"type": "tool", "tool": call.function, "arguments": call.arguments}
            if result is not None:
                entry["chars"] = len(result.text)
                if result.error is not None:
                    entry["error"] = result.error.message
            calls.append(entry)
    return calls


def _answer(sample: Any) -> str | None:
    for score in (sample.scores or {}).values():
        if score.answer is not None:
            return str(score.answer) or None
    completion = sample.output.completion if sample.output is not None else ""
    return extract_final_answer(completion)[0] or None if completion.strip() else None


def _records(sample: Any, model: str) -> tuple[Prediction, TrajectoryLine]:
    metadata = sample.metadata or {}
    qid, lang = metadata.get("qid"), metadata.get("lang", "en")
    if not qid:
        raise InspectImportError(f"sample {sample.id!r} has no qid in its metadata: not a livesearch sample; fix: "
                                 f"import a log of `inspect eval {TASK_NAMES[-1]}`")
    answer = _answer(sample)
    error = sample.error.message.splitlines()[0] if sample.error is not None else None
    if answer is None and error is None and sample.limit is not None:
        error = f"{sample.limit.type} limit of {sample.limit.limit} reached without a final answer"
    usage = _usage(sample, model)
    prediction = Prediction(qid=qid, answer=answer, lang=lang, error=error if answer is None else None, usage=usage)
    messages = [json.loads(m.model_dump_json(exclude_none=True)) for m in sample.messages]
    trajectory = TrajectoryLine(qid=qid, lang=lang, messages=messages, tool_calls=_tool_calls(sample),
                                usage=usage, error=prediction.error)
    return prediction, trajectory


def _jsonl(records: list[Any]) -> bytes:
    return b"".join((r.model_dump_json(exclude_none=True) + "\n").encode("utf-8") for r in records)


def _to_datetime(value: object) -> dt.datetime | None:
    if not value:
        return None
    parsed = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


# Bounds on what an import reads (a small compressed log may inflate to gigabytes): the log's bytes
# uncompressed, one sample's bytes, the samples (two per served question at most: its English and
# Chinese texts) and the messages of one sample.
MAX_LOG_BYTES = 256 * 1024 * 1024
MAX_SAMPLE_BYTES = 8 * 1024 * 1024
MAX_MESSAGES_PER_SAMPLE = 1000
SAMPLES_PER_QUESTION = 2


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB"


def check_log_bounds(log_path: Path) -> None:
    """InspectImportError naming the limit when the log is larger than MAX_LOG_BYTES uncompressed or
    one of its samples larger than MAX_SAMPLE_BYTES; read from the zip directory of a .eval log
    (nothing is inflated) or the size of a .json one."""
    size = log_path.stat().st_size
    if zipfile.is_zipfile(log_path):
        with zipfile.ZipFile(log_path) as archive:
            entries = archive.infolist()
        total = sum(e.file_size for e in entries)
        samples = [e for e in entries if e.filename.startswith("samples/")]
        largest = max(samples, key=lambda e: e.file_size, default=None)
        if largest is not None and largest.file_size > MAX_SAMPLE_BYTES:
            raise InspectImportError(
                f"{log_path}: sample {largest.filename} inflates to {_mib(largest.file_size)}, above the limit of "
                f"{_mib(MAX_SAMPLE_BYTES)} per sample (MAX_SAMPLE_BYTES); fix: import a log of this task's own runs")
    else:
        total = size
    if total > MAX_LOG_BYTES:
        raise InspectImportError(f"{log_path}: the log holds {_mib(total)} uncompressed, above the limit of "
                                 f"{_mib(MAX_LOG_BYTES)} (MAX_LOG_BYTES); fix: import a log of one run of one day")


def _bounded_samples(log_path: Path, limit: int):
    """The log's samples one at a time (never the whole log in memory), refusing more than `limit`
    samples or a sample with more than MAX_MESSAGES_PER_SAMPLE messages."""
    from inspect_ai.log import read_eval_log_samples

    for index, sample in enumerate(read_eval_log_samples(str(log_path), all_samples_required=False), start=1):
        if index > limit:
            raise InspectImportError(f"{log_path}: more than {limit} samples, the limit for the day's served questions "
                                     f"({SAMPLES_PER_QUESTION} per question); fix: import a log of one epoch of one day")
        if len(sample.messages) > MAX_MESSAGES_PER_SAMPLE:
            raise InspectImportError(
                f"{log_path}: sample {sample.id!r} holds {len(sample.messages)} messages, above the limit of "
                f"{MAX_MESSAGES_PER_SAMPLE} (MAX_MESSAGES_PER_SAMPLE); fix: run the task with a message limit")
        yield sample


def import_inspect_log(log_path: Path, out_dir: Path, *, data_root: Path, agent: str | None = None,
                       judge: Any = None, judge_concurrency: int = 8) -> list[ImportedRun]:
    """Write and evaluate the run directory (two for a `lang=both` run) of an Inspect log.

    The served questions and gold are those of the configured `data_root` (its gold manifest
    verified by the evaluator), never a location the log names: a log's metadata is the
    submitter's word. Each target folder is checked (`writers.check_writable`: not a protected
    folder, no symlinked file) and its writer lock held before anything is written; the log's
    size, samples and messages are bounded (`check_log_bounds`, `_bounded_samples`)."""
    from inspect_ai.log import read_eval_log

    from livesearch_pipeline.evaluation.inspect_task import InspectTaskError, harness_version, load_day, parse_date

    log_path, out_dir, data_root = Path(log_path), Path(out_dir), Path(data_root)
    if not log_path.is_file():
        raise InspectImportError(f"{log_path}: no such log file; fix: pass the .eval or .json file Inspect wrote")
    check_log_bounds(log_path)
    try:
        log = read_eval_log(str(log_path), header_only=True)
    except (OSError, ValueError) as exc:
        raise InspectImportError(f"{log_path}: not a readable Inspect log: {exc}; fix: pass the .eval or .json "
                                 "file Inspect wrote") from exc
    if log.eval.task not in TASK_NAMES:
        raise InspectImportError(f"{log_path}: a log of task {log.eval.task!r}, not of {TASK_NAMES[-1]}; fix: "
                                 f"import a log of `inspect eval {TASK_NAMES[-1]}`")
    metadata = log.eval.metadata or {}
    if "livesearch_date" not in metadata:
        raise InspectImportError(f"{log_path}: the log's task metadata has no livesearch_date; fix: import a log "
                                 f"of `inspect eval {TASK_NAMES[-1]}`, which records it")
    date = parse_date(metadata["livesearch_date"])
    try:
        day = load_day(data_root, date)
    except InspectTaskError as exc:
        raise InspectImportError(f"{log_path}: the day {date} of the data root {data_root}: {exc}; fix: set "
                                 "LIVESEARCH_DATA_DIR to the data root that served that day") from exc
    model = log.eval.model
    tools = str(metadata.get("tools", "plugin"))
    if agent is None and _slug(tools) != tools:
        raise InspectImportError(f"{log_path}: the log's metadata names its tools {tools[:80]!r}, which cannot make an "
                                 "agent name; fix: pass --agent NAME")
    try:
        name = checked_agent_name(agent or default_agent_name(model, tools), what="agent name")
        runs_root, registered = data_root / "runs", registered_names(DataPaths(data_root))
        for target, target_name in ((out_dir, name), (out_dir.with_name(out_dir.name + "-zh"), f"{name}-zh")):
            check_name_free(target, target_name, date, runs_root=runs_root, registered=registered)
    except EvaluationError as exc:
        raise InspectImportError(f"{log_path}: {exc}") from None
    zh_dir = out_dir.with_name(out_dir.name + "-zh")
    protected = protected_directories([data_root / "gold", data_root / "served", data_root / "pool",
                                       data_root / ANALYTICS_DIR, data_root / "cache", day.gold_path.parent])
    for target in (out_dir, zh_dir):
        try:
            check_writable(target, what="agent import-inspect --out", protected=protected)
        except WriterTargetError as exc:
            raise InspectImportError(str(exc)) from None
    groups: dict[Path, list[tuple[Prediction, TrajectoryLine]]] = {}
    try:
        for sample in _bounded_samples(log_path, SAMPLES_PER_QUESTION * len(day.served)):
            target = zh_dir if str(sample.id).endswith(ZH_SUFFIX) else out_dir
            groups.setdefault(target, []).append(_records(sample, model))
    except (OSError, ValueError) as exc:
        if isinstance(exc, InspectImportError):
            raise
        raise InspectImportError(f"{log_path}: not a readable Inspect log: {exc}; fix: pass the .eval or .json "
                                 "file Inspect wrote") from exc
    if not groups:
        raise InspectImportError(f"{log_path}: the log holds no samples (status {log.status}); fix: import the "
                                 "log of a run that answered questions")
    with contextlib.ExitStack() as locks:
        for target in groups:
            # The folder's writer lock, held until every file is written: an `agent run` or another
            # import writing it is refused, naming it, before anything is written.
            try:
                locks.enter_context(run_folder_writer(target, what="agent import-inspect --out", protected=protected))
            except WriterTargetError as exc:
                raise InspectImportError(str(exc)) from None
            except WriterLockedError as exc:
                raise InspectImportError(str(exc)) from None
            if (target / PREDICTIONS_FILE).exists():
                raise InspectImportError(f"{target / PREDICTIONS_FILE} exists: import into an empty --out directory")
        return [_write_run(target, records, log_path=log_path, log=log, day=day, date=date, model=model,
                           agent=name if target == out_dir else f"{name}-zh",
                           lang_option=str(metadata.get("lang", "en")), zh=target != out_dir,
                           harness=harness_version(), judge=judge, judge_concurrency=judge_concurrency)
                for target, records in groups.items()]


def _write_run(target: Path, records: list[tuple[Prediction, TrajectoryLine]], *, log_path: Path, log: Any,
               day: Any, date: dt.date, model: str, agent: str, lang_option: str, zh: bool, harness: str,
               judge: Any, judge_concurrency: int) -> ImportedRun:
    qids = [p.qid for p, _ in records]
    if len(set(qids)) != len(qids):
        raise InspectImportError(f"{log_path}: several samples answer the same question (epochs > 1?); "
                                 "import a log of one epoch")
    meta = PredictionRunMeta(
        agent=agent, model=model, date=date, served_qid_set_hash=qid_set_hash(q.qid for q in day.served),
        started_at=_to_datetime(log.stats.started_at) or dt.datetime.fromtimestamp(0, dt.timezone.utc),
        finished_at=_to_datetime(log.stats.completed_at),
        lang="zh" if zh else lang_option if lang_option != "both" else "en",  # type: ignore[arg-type]
        harness=harness,
        budget=_budget(log.eval.metadata or {}, log_path),
    )
    predictions_path = target / PREDICTIONS_FILE
    # The evaluation is computed before anything is written: a log it refuses leaves no files.
    with tempfile.TemporaryDirectory(prefix="livesearch-import-") as staging:
        staged = Path(staging)
        write_atomic(staged / PREDICTIONS_FILE, _jsonl([p for p, _ in records]))
        write_atomic(staged / META_FILE, meta.model_dump_json(indent=2).encode("utf-8") + b"\n")
        try:
            result = evaluate(day.served_path, day.gold_path, staged / PREDICTIONS_FILE, judge=judge,
                              judge_concurrency=judge_concurrency)
        except EvaluationError as exc:
            raise InspectImportError(f"{log_path}: the run cannot be evaluated: {exc}") from exc
    summary = result.summary.model_copy(update={"predictions_file": str(predictions_path)})
    result = EvaluationResult(verdicts=result.verdicts, summary=summary)
    write_atomic(target / TRAJECTORIES_FILE, _jsonl([t for _, t in records]))
    write_atomic(target / META_FILE, meta.model_dump_json(indent=2).encode("utf-8") + b"\n")
    write_atomic(predictions_path, _jsonl([p for p, _ in records]))
    write_evaluation(result, target, inputs=evaluation_inputs(day.served_path, day.gold_path, predictions_path))
    return ImportedRun(out_dir=target, predictions=len(records), result=result)
