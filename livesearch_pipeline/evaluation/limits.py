"""Scoring limits, in a module light enough for the CLI's `--help` to import."""

# An answer is a value with at most a sentence of context; 2,000 characters is ten times what
# any agent's final answer needs, and bounds the matcher's (linear) work per answer. A longer
# answer scores wrong unread, with the reason "answer longer than 2000 characters".
MAX_ANSWER_CHARS = 2000

# What is read of a run folder's files (core.untrusted: whoever may write a run folder may plant
# a 1 GiB file). A day's verdicts take about 1 MB, its summary 20 KB; predictions carry the traces
# of web agents (a few MB a day). Each bound is far above what a run writes.
MAX_SUMMARY_BYTES = 16 * 1024 * 1024
MAX_VERDICTS_BYTES = 64 * 1024 * 1024
MAX_PREDICTIONS_BYTES = 512 * 1024 * 1024
MAX_RUN_META_BYTES = 1024 * 1024
# trajectories.jsonl is read a line at a time (the site copies the lines of shown questions): a
# line is one question's whole exchange, as large as an Inspect sample may be.
MAX_TRAJECTORIES_BYTES = 2 * 1024 * 1024 * 1024
MAX_TRAJECTORY_LINE_BYTES = 8 * 1024 * 1024
