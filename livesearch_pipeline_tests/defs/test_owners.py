"""Issue 42: every asset has the owners of its group: the team that answers for it."""

from __future__ import annotations

import pytest

from livesearch_pipeline.defs.owners import OWNERS_BY_GROUP, owners_of


def test_every_asset_is_owned_by_its_groups_team():
    from livesearch_pipeline.definitions import defs

    nodes = list(defs.resolve_asset_graph().asset_nodes)
    assert {n.group_name for n in nodes} == set(OWNERS_BY_GROUP)
    unowned = sorted(n.key.to_user_string() for n in nodes if not n.owners)
    assert unowned == []
    assert {n.key.to_user_string(): n.owners for n in nodes if n.owners != list(OWNERS_BY_GROUP[n.group_name])} == {}
    assert {n.key.to_user_string() for n in nodes if n.owners == ["team:ops"]} >= {
        "data_service", "served_questions", "gold_answers", "analytics_store", "public_site"}


def test_a_group_without_an_owner_is_refused_naming_the_table():
    with pytest.raises(ValueError, match="asset group 'newgroup' has no owner: add it to OWNERS_BY_GROUP"):
        owners_of("newgroup")
