"""The pool build job: construction stages 1–6 in order."""

import dagster as dg

build_pool_job = dg.define_asset_job(
    name="build_pool",
    selection=dg.AssetSelection.groups("construction"),
    description="Probe, cover, enumerate, verbalize and filter: writes data/pool/questions.jsonl.",
    tags={"livesearch/kind": "construction"},
)
