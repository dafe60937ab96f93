"""Operations: alerts to a webhook, the freshness of `gold_answers`, Celery jobs, the Parquet store.

Loaded by `dg.load_from_defs_folder` like every other folder under `defs/`. Nothing here edits
the refresh or evaluation definitions: assets are referenced by `AssetKey`.
"""
