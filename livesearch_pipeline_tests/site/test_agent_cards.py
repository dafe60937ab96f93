"""Agent cards: what an agent is, from its registry entry and its newest run's summary."""

from __future__ import annotations

from types import SimpleNamespace

from livesearch_pipeline.core.models import ReadBudget
from livesearch_pipeline.evaluation.registry import BUILTIN_AGENTS, AgentSpec
from livesearch_pipeline.site.agent_cards import agent_card

SPECS = {spec.name: spec for spec in BUILTIN_AGENTS}


def _summary(**fields):
    return SimpleNamespace(**{"model": None, "budget": None, "code_version": None, "harness": None, **fields})


def test_the_baselines_cards_say_what_they_are_and_the_references_are_marked() -> None:
    oracle = agent_card("oracle", SPECS["oracle"], _summary(code_version="0.1.0+gabc"))
    assert oracle.reference and oracle.kind == "oracle" and oracle.code_version == "0.1.0+gabc"
    assert oracle.source == "livesearch_pipeline/evaluation/agents/oracle.py" and "self-test" in oracle.what
    assert agent_card("stale", SPECS["stale"], None).reference
    navigator = agent_card("navigator-6", SPECS["navigator-6"], None)
    assert not navigator.reference and navigator.budget == "6 reads, 6 searches"
    assert navigator.code_version == "not recorded by its run" and navigator.registry["read_budget"] == 6


def test_a_registered_llm_agent_and_an_unregistered_run() -> None:
    spec = AgentSpec(name="my-web", kind="web", model="openai/m", read_budget=10, api_base="http://127.0.0.1:8000/v1",
                     api_key_env="LIVESEARCH_AGENT_MYWEB_KEY")
    card = agent_card("my-web", spec, _summary(model="openai/m", budget=ReadBudget(max_reads=10)))
    assert (card.kind, card.model, card.budget, card.reference) == ("web", "openai/m", "10 reads, unlimited searches",
                                                                    False)
    assert "api_key_env" not in card.registry  # the card never names the key's variable
    outsider = agent_card("lab~agent", None, _summary(model="lab/m", harness="inspect_ai 0.3"))
    assert outsider.kind == "unregistered" and outsider.registry is None and outsider.source is None
    assert outsider.harness == "inspect_ai 0.3" and outsider.budget == "not declared"
