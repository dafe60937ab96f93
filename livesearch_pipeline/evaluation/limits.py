"""Scoring limits, in a module light enough for the CLI's `--help` to import."""

# An answer is a value with at most a sentence of context; 2,000 characters is ten times what
# any agent's final answer needs, and bounds the matcher's (linear) work per answer. A longer
# answer scores wrong unread, with the reason "answer longer than 2000 characters".
MAX_ANSWER_CHARS = 2000
