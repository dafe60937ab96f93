"""Who answers for each asset group: the owners shown on every asset (the UI's *Owners*, `dg list defs`).

Ops (`team:ops`) runs the daily loop and its infrastructure: the data service, the daily refresh,
the Parquet store and the published site. Research (`team:research`) owns what the benchmark
measures: the pool's construction, the offline web the agents search, and the evaluation.
"""

from __future__ import annotations

OWNERS_BY_GROUP: dict[str, tuple[str, ...]] = {
    "data_service": ("team:ops",),
    "daily_refresh": ("team:ops",),
    "operations": ("team:ops",),
    "publication": ("team:ops",),
    "construction": ("team:research",),
    "web": ("team:research",),
    "evaluation": ("team:research",),
}


def owners_of(group: str) -> list[str]:
    """The owners of an asset group; a group without an entry is a definition error, not an unowned asset."""
    try:
        return list(OWNERS_BY_GROUP[group])
    except KeyError:
        raise ValueError(f"asset group {group!r} has no owner: add it to OWNERS_BY_GROUP in "
                         f"livesearch_pipeline/defs/owners.py") from None
