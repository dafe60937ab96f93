"""Inspect AI's entry point into the package (`[project.entry-points.inspect_ai]`): importing it
registers the `livesearch` task, run as `inspect eval livesearch_pipeline/livesearch -T date=D`."""

from livesearch_pipeline.evaluation.inspect_task import livesearch

__all__ = ["livesearch"]
