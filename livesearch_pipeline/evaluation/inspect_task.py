"""LiveSearch as an Inspect AI task (DESIGN §8): `inspect eval livesearch_pipeline/livesearch -T date=D`.

Samples are D's scoring set (the served questions minus those D's gold manifest withdraws), read
from the data directory (`served/served_questions_<D>.jsonl`, `gold/gold_answers_<D>.jsonl`
checked against its manifest) exactly as `livesearch evaluate` reads them. The scorer is the
evaluator's: the final answer line of the model's last reply is matched deterministically
(`core.matching`, in the unit of the text answered), and the LLM judge is asked only where the
matcher cannot decide (a semantic rule, or several candidate numbers), when a judge model is
configured (`-T judge=<litellm model>` or LIVESEARCH_JUDGE_MODEL); without one such answers
score wrong, as in `evaluate`.

Task options (`-T name=value`):
- `date` (required): the benchmark day D.
- `lang`: `en` (the English text of every question), `zh` (the Chinese text where a question
  has one, the English text otherwise), `both` (every question in English, and once more in
  Chinese where it has a Chinese text: sample ids `<qid>` and `<qid>@zh`).
- `tools`: `plugin` (the data service over MCP at D's clock: `livesearch serve-data --clock D`
  started with Inspect's `mcp_server_stdio`), `web` (`web_search` and `fetch_page` over D's
  offline web, `data/web/<D>/`, served from this process on 127.0.0.1), or `none` (closed book).
- `services` (plugin): comma-separated services whose data and search tools are offered;
  `tool_names`: an explicit comma-separated tool list (globs allowed). By default the plugin
  offers what the plugin agent offers (data, search and the provider's calendars).
- `max_reads`, `max_searches` (web): the declared budget per question, distinct pages read and
  searches run; a read or search beyond it is refused (the model sees the tool's error) and
  counted in the sample's store (`livesearch_ledger`: searches, reads, refusals), which
  `import-inspect` turns into the run's usage; the budget goes into the task's metadata and the
  run's. Default: no limit.
- `data_dir` (default $LIVESEARCH_DATA_DIR or ./data), `seed` (the market's seed), `judge`,
  `message_limit` (default 30).

`livesearch agent import-inspect LOG --out data/runs/<D>/<agent>` turns the log of such a run
into a run directory (predictions.jsonl with `lang` and usage, predictions.meta.json,
trajectories.jsonl) and evaluates it with `evaluate`'s rules, so the Inspect agent ranks on D's
leaderboard next to the baselines (`inspect_import.py`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate, system_message, use_tools
from inspect_ai.tool import Tool, ToolError, ToolSource, mcp_server_stdio, mcp_tools, tool

from livesearch_pipeline.core.models import AnswerLanguage, GoldAnswer, Prediction, ReadBudget, ServedQuestion
from livesearch_pipeline.evaluation.published_gold import PUBLISHED_GOLD_FILE
from livesearch_pipeline.evaluation.agents.closed_book import CLOSED_BOOK_SYSTEM_PROMPT
from livesearch_pipeline.evaluation.agents.loop import extract_final_answer
from livesearch_pipeline.evaluation.agents.plugin import PLUGIN_SYSTEM_PROMPT
from livesearch_pipeline.evaluation.agents.web import WEB_SYSTEM_PROMPT
from livesearch_pipeline.evaluation.consistency import check_consistency
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.inputs import GoldDay, load_gold, load_served
from livesearch_pipeline.evaluation.scoring import score_deterministic
from livesearch_pipeline.evaluation.settlement import PendingJudgement, settle_with_judge

def _offline_tokenizers() -> None:
    """Inspect counts tokens with tiktoken (mockllm's usage, compaction), and tiktoken downloads its
    encodings on first use. litellm ships the same files (o200k_base, cl100k_base) in its package:
    point tiktoken's cache at them, unless the user chose a cache, so the task runs offline. Also
    litellm's own offline defaults, read when the judge first imports it."""
    from importlib.util import find_spec

    from livesearch_pipeline.infra.llm import LITELLM_ENV_DEFAULTS

    for name, value in LITELLM_ENV_DEFAULTS.items():
        os.environ.setdefault(name, value)
    if "TIKTOKEN_CACHE_DIR" in os.environ or "DATA_GYM_CACHE_DIR" in os.environ:
        return
    spec = find_spec("litellm")
    if spec is None or spec.origin is None:
        return
    bundled = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    if bundled.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)


_offline_tokenizers()

TASK_NAME = "livesearch"
ZH_SUFFIX = "@zh"
ToolsOption = Literal["plugin", "web", "none"]
LangOption = Literal["en", "zh", "both"]
DEFAULT_MESSAGE_LIMIT = 30


class InspectTaskError(ValueError):
    """A task option or the day's files cannot make a task; the message names which and where."""


# --------------------------------------------------------------------------- the day


@dataclass(frozen=True)
class InspectDay:
    date: dt.date
    served_path: Path
    gold_path: Path
    served: list[ServedQuestion]
    gold: GoldDay
    scoring: list[str]


def data_root(data_dir: str | Path | None) -> Path:
    if data_dir:
        return Path(data_dir).resolve()
    from livesearch_pipeline.settings import DataPaths

    return DataPaths.from_env().root


def parse_date(value: object, option: str = "date") -> dt.date:
    """An ISO date from a task option (Inspect's -T parser may already have made it a date)."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip())
    except ValueError:
        raise InspectTaskError(f"-T {option}={value!r} is not a date YYYY-MM-DD") from None


@functools.lru_cache(maxsize=8)
def load_day(root: Path, date: dt.date) -> InspectDay:
    """D's served questions, verified gold and scoring set, with the evaluator's fail-loud rules: from a
    data root (`served/`, `gold/`) or from a folder holding the site's downloads of D."""
    served_path = root / "served" / f"served_questions_{date.isoformat()}.jsonl"
    gold_path = root / "gold" / f"gold_answers_{date.isoformat()}.jsonl"
    downloaded = root / f"served_questions_{date.isoformat()}.jsonl"
    if not served_path.is_file() and downloaded.is_file() and (root / PUBLISHED_GOLD_FILE).is_file():
        # A folder of the site's downloads of D (served file, gold.jsonl, gold.manifest.json): the
        # samples are the questions whose gold the site shows (`published_gold`).
        served_path, gold_path = downloaded, root / PUBLISHED_GOLD_FILE
    if not served_path.is_file():
        served_dir = root / "served"
        days = sorted(p.name[len("served_questions_"):-len(".jsonl")] for p in served_dir.glob("served_questions_*.jsonl")) \
            if served_dir.is_dir() else []
        raise InspectTaskError(f"no served questions for {date}: {served_path} does not exist "
                               f"(days served in {root}: {', '.join(days) or 'none'}; `make run` serves one)")
    try:
        served = load_served(served_path)
        gold = load_gold(gold_path)
        scoring = check_consistency(served, gold, [], None, served_path=served_path, gold_path=gold_path,
                                    predictions_path=served_path)
    except EvaluationError as exc:
        raise InspectTaskError(str(exc)) from exc
    return InspectDay(date=date, served_path=served_path, gold_path=gold_path, served=served, gold=gold,
                      scoring=scoring)


def sample_texts(question: ServedQuestion, lang: LangOption) -> list[tuple[str, AnswerLanguage, str]]:
    """(sample id, text language, text) of the samples of one question under the `lang` option."""
    english = (question.qid, "en", question.question)
    chinese = (question.qid, "zh", question.question_zh) if question.question_zh else None
    if lang == "en":
        return [english]
    if lang == "zh":
        return [chinese or english]  # type: ignore[list-item]
    if chinese is None:
        return [english]
    return [english, (question.qid + ZH_SUFFIX, "zh", question.question_zh)]  # type: ignore[list-item]


def build_samples(day: InspectDay, lang: LangOption) -> list[Sample]:
    scoring = set(day.scoring)
    samples = []
    for question in sorted(day.served, key=lambda q: q.qid):
        if question.qid not in scoring:
            continue
        gold = day.gold.answers[question.qid]
        for sample_id, text_lang, text in sample_texts(question, lang):
            samples.append(Sample(
                id=sample_id, input=text, target=gold.answer or "",
                metadata={"qid": question.qid, "lang": text_lang, "tier": question.tier,
                          "asset_class": question.asset_class, "visibility": question.visibility,
                          "refresh_class": question.refresh_class, "entity": question.entity},
            ))
    return samples


# --------------------------------------------------------------------------- tools


def _names(option: str | Sequence[str] | None) -> list[str]:
    if option is None:
        return []
    parts = option.split(",") if isinstance(option, str) else [str(p) for p in option]
    return [p.strip() for p in parts if p.strip()]


def plugin_tool_names(date: dt.date, services: list[str], tool_names: list[str], seed: int | None) -> list[str]:
    """The tools offered: `tool_names` as given (checked against the catalog), else the plugin
    agent's choice (data, search, provider calendars), of `services` when given."""
    from fnmatch import fnmatch

    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.server import DataService
    from livesearch_pipeline.evaluation.agents.plugin import OFFERED_ROLES

    config = ServiceConfig(clock=date) if seed is None else ServiceConfig(seed=seed, clock=date)
    catalog = DataService(config=config).catalog
    known_services = sorted({t.service for t in catalog.tools})
    unknown_services = sorted(set(services) - set(known_services))
    if unknown_services:
        raise InspectTaskError(f"-T services: unknown service(s) {unknown_services}; the data service has "
                               f"{', '.join(known_services)}")
    if tool_names:
        all_names = [t.name for t in catalog.tools]
        unmatched = [n for n in tool_names if not any(fnmatch(name, n) for name in all_names)]
        if unmatched:
            raise InspectTaskError(f"-T tool_names: {unmatched} match no tool of the data service "
                                   "(`livesearch tools` lists them)")
        chosen = [name for name in all_names if any(fnmatch(name, n) for n in tool_names)]
    else:
        chosen = [t.name for t in catalog.tools if t.role in OFFERED_ROLES or t.is_provider_tool]
    if services:
        by_name = {t.name: t for t in catalog.tools}
        chosen = [name for name in chosen if by_name[name].service in services]
    if not chosen:
        raise InspectTaskError("the tool selection (-T services / -T tool_names) leaves no tool to offer")
    return chosen


def plugin_tools(date: dt.date, services: list[str], tool_names: list[str], seed: int | None,
                 root: Path) -> list[ToolSource]:
    """The data service at D's clock over MCP stdio, limited to the chosen tools."""
    args = ["-m", "livesearch_pipeline.cli", "serve-data", "--clock", date.isoformat()]
    if seed is not None:
        args += ["--seed", str(seed)]
    server = mcp_server_stdio(name="livesearch-data", command=sys.executable, args=args,
                              env={"LIVESEARCH_DATA_DIR": str(root)})
    return [mcp_tools(server, tools=plugin_tool_names(date, services, tool_names, seed))]


@functools.lru_cache(maxsize=4)
def offline_web_url(directory: Path) -> str:
    """D's offline web served from a daemon thread of this process (one per directory)."""
    import threading

    from livesearch_pipeline.web.server import base_url, make_server

    server = make_server(directory)
    threading.Thread(target=server.serve_forever, name="offline-web", daemon=True).start()
    return base_url(server)


def web_tools(date: dt.date, root: Path, budget: ReadBudget | None = None) -> list[Tool]:
    from livesearch_pipeline.web.build import corpus_directory

    directory = corpus_directory(root / "web", date)
    if not (directory / "web.sqlite").is_file():
        raise InspectTaskError(f"no offline web for {date}: {directory}/web.sqlite does not exist "
                               f"(build it with `livesearch build-web --date {date}`)")
    url = offline_web_url(directory)
    budget = budget if budget is not None else ReadBudget()
    return [web_search(url, budget.max_searches), fetch_page(url, budget.max_reads)]


def _sample_ledger(budget: ReadBudget) -> Any:
    """This sample's ledger (agents/budget.py), restored from the sample's store."""
    from inspect_ai.util import store

    from livesearch_pipeline.evaluation.agents.budget import LEDGER_STORE_KEY, Ledger

    saved = store().get(LEDGER_STORE_KEY, {})
    return Ledger(budget, trace=None, searches=int(saved.get("searches", 0)), reads=int(saved.get("page_reads", 0)),
                  refusals=int(saved.get("budget_refusals", 0)), opened=set(saved.get("opened", [])))


def _save_ledger(ledger: Any) -> None:
    from inspect_ai.util import store

    from livesearch_pipeline.evaluation.agents.budget import LEDGER_STORE_KEY

    store().set(LEDGER_STORE_KEY, {**ledger.usage_counts(), "opened": sorted(ledger.opened)})


def _web_tools_impl(searxng_url: str) -> Any:
    import httpx

    from livesearch_pipeline.evaluation.agents.web import WebTools, WebToolsConfig

    return WebTools(WebToolsConfig(searxng_url=searxng_url), httpx.AsyncClient())


async def _call_web_tool(searxng_url: str, name: str, arguments: dict[str, Any], budget: ReadBudget) -> str:
    """One call of the web agent's own tool `name` (the same search and fetch code), charged to the
    sample's budget (a search or read beyond it refused), its failures as Inspect's ToolError, which
    the model sees as the tool's error."""
    from livesearch_pipeline.evaluation.agents.loop import ToolFailure

    tools = _web_tools_impl(searxng_url)
    ledger = _sample_ledger(budget)
    try:
        return (await getattr(tools, name)(arguments, ledger)).content
    except ToolFailure as exc:
        raise ToolError(str(exc)) from exc
    finally:
        _save_ledger(ledger)
        await tools.http.aclose()


@tool
def web_search(searxng_url: str, max_searches: int | None = None) -> Tool:
    async def execute(query: str, page: int = 1) -> str:
        """Search the web. Returns result titles, URLs and snippets.

        Args:
            query: the search query
            page: result page, default 1
        """
        return await _call_web_tool(searxng_url, "web_search", {"query": query, "page": page},
                                    ReadBudget(max_searches=max_searches))

    return execute


@tool
def fetch_page(searxng_url: str, max_reads: int | None = None) -> Tool:
    async def execute(url: str, start: int = 0) -> str:
        """Fetch a web page and return its text, 8000 characters at a time; pass `start` to read further.

        Args:
            url: an http(s) URL
            start: character offset, default 0
        """
        return await _call_web_tool(searxng_url, "fetch_page", {"url": url, "start": start},
                                    ReadBudget(max_reads=max_reads))

    return execute


# --------------------------------------------------------------------------- scoring


def prediction_of(qid: str, lang: AnswerLanguage, completion: str, error: str | None = None) -> Prediction:
    """The prediction a sample's last reply makes: its final-answer line (else the whole reply)."""
    answer, _ = extract_final_answer(completion) if completion.strip() else ("", False)
    return Prediction(qid=qid, answer=answer or None, lang=lang, error=error if not answer else None)


def _judge(model: str | None, root: Path) -> Any:
    from livesearch_pipeline.evaluation.judge import judge_from_settings
    from livesearch_pipeline.infra.llm import LLMSettings

    settings = LLMSettings.from_env()
    return judge_from_settings(model or settings.judge_model, cache_dir=root / "cache" / "llm",
                               api_base=settings.api_base, api_key=settings.api_key)


def score_prediction(day: InspectDay, question: ServedQuestion, gold: GoldAnswer, prediction: Prediction,
                     judge: Any) -> tuple[Any, bool]:
    """The verdict of `evaluate` for one prediction, and whether it needed an absent judge."""
    verdict, undecided = score_deterministic(gold, prediction)
    if undecided is None or prediction.answer is None:
        return verdict, False
    if judge is None:
        return verdict, True
    pending = PendingJudgement(question, gold, prediction.answer, undecided, prediction.answer_lang)
    return settle_with_judge(pending, judge), False


@scorer(metrics=[accuracy(), stderr()])
def livesearch_matcher(date: str, data_dir: str, judge: str | None = None) -> Scorer:
    """LiveSearch's matcher: deterministic first, the LLM judge only where the rule needs it."""
    day = load_day(Path(data_dir), parse_date(date))
    questions = {q.qid: q for q in day.served}
    llm_judge = _judge(judge, Path(data_dir))

    async def score(state: TaskState, target: Target) -> Score:
        qid, lang = state.metadata["qid"], state.metadata["lang"]
        error = None
        if state.output is not None and getattr(state.output, "error", None):
            error = str(state.output.error)
        completion = state.output.completion if state.output is not None else ""
        prediction = prediction_of(qid, lang, completion, error)
        verdict, unresolved = await asyncio.to_thread(
            score_prediction, day, questions[qid], day.gold.answers[qid], prediction, llm_judge)
        return Score(
            value=CORRECT if verdict.correct else INCORRECT,
            answer=prediction.answer,
            explanation=verdict.reason,
            metadata={"qid": qid, "lang": lang, "rule": verdict.rule, "judge": verdict.judge,
                      "judge_error": verdict.error, "unresolved_without_judge": unresolved},
        )

    return score


# --------------------------------------------------------------------------- the task


def system_prompt(tools: ToolsOption, date: dt.date) -> str:
    template = {"plugin": PLUGIN_SYSTEM_PROMPT, "web": WEB_SYSTEM_PROMPT, "none": CLOSED_BOOK_SYSTEM_PROMPT}[tools]
    return template.format(today=date.isoformat())


def _choice(value: object, option: str, allowed: tuple[str, ...]) -> str:
    text = str(value).strip()
    if text not in allowed:
        raise InspectTaskError(f"-T {option}={value!r}: expected one of {', '.join(allowed)}")
    return text


@task(name=TASK_NAME)
def livesearch(
    date: str | None = None,
    lang: str = "en",
    tools: str = "plugin",
    services: str | None = None,
    tool_names: str | None = None,
    data_dir: str | None = None,
    seed: int | None = None,
    judge: str | None = None,
    message_limit: int = DEFAULT_MESSAGE_LIMIT,
    max_reads: int | None = None,
    max_searches: int | None = None,
) -> Task:
    """D's scoring set, answered with the data service (plugin), the offline web, or no tools."""
    if date is None:
        raise InspectTaskError("the task needs the benchmark day: -T date=YYYY-MM-DD")
    day_date = parse_date(date)
    lang_option: LangOption = _choice(lang, "lang", ("en", "zh", "both"))  # type: ignore[assignment]
    tools_option: ToolsOption = _choice(tools, "tools", ("plugin", "web", "none"))  # type: ignore[assignment]
    if tools_option != "plugin" and (services or tool_names):
        raise InspectTaskError(f"-T services / -T tool_names choose data-service tools; -T tools={tools_option} "
                               "offers none")
    budget = _budget(max_reads, max_searches)
    if tools_option != "web" and budget != ReadBudget():
        raise InspectTaskError(f"-T max_reads / -T max_searches budget a web agent's reads; -T tools={tools_option} "
                               "reads no web")
    root = data_root(data_dir)
    day = load_day(root, day_date)
    seed_value = int(seed) if seed is not None else None
    if tools_option == "plugin":
        offered: list[Any] = plugin_tools(day_date, _names(services), _names(tool_names), seed_value, root)
    elif tools_option == "web":
        offered = web_tools(day_date, root, budget)
    else:
        offered = []
    solver = [system_message(system_prompt(tools_option, day_date))]
    if offered:
        solver.append(use_tools(*offered))
    solver.append(generate())
    return Task(
        dataset=MemoryDataset(build_samples(day, lang_option), name=f"livesearch-{day_date.isoformat()}"),
        solver=solver,
        scorer=livesearch_matcher(date=day_date.isoformat(), data_dir=str(root), judge=judge),
        message_limit=int(message_limit),
        metadata={"livesearch_date": day_date.isoformat(), "lang": lang_option, "tools": tools_option,
                  "services": _names(services), "tool_names": _names(tool_names),
                  "served_file": str(day.served_path), "gold_file": str(day.gold_path),
                  "data_dir": str(root), "seed": seed_value,
                  "budget": budget.model_dump() if tools_option == "web" else None},
    )


def _budget(max_reads: object, max_searches: object) -> ReadBudget:
    """The web budget the options declare (-T max_reads, -T max_searches: positive integers)."""
    values: dict[str, int | None] = {}
    for option, value in (("max_reads", max_reads), ("max_searches", max_searches)):
        if value is None or value == "":
            values[option] = None
            continue
        try:
            number = int(str(value))
        except ValueError:
            number = 0
        if number < 1:
            raise InspectTaskError(f"-T {option}={value!r}: expected a positive whole number")
        values[option] = number
    return ReadBudget(**values)


def harness_version() -> str:
    from importlib.metadata import version

    return f"inspect_ai {version('inspect_ai')}"


__all__ = ["InspectTaskError", "TASK_NAME", "build_samples", "harness_version", "livesearch", "livesearch_matcher",
           "load_day"]
