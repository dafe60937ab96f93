"""Dagster wiring, one folder per domain (assets, partitions, resources, checks, schedules).

Loaded by `dg.load_from_defs_folder` from `livesearch_pipeline/definitions.py`; nothing else
imports this package.
"""
