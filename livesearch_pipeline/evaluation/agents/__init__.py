"""Agents that answer a day's served questions, and the runner that writes their predictions.

Baselines: `oracle` (runs the gold programs: the gold self-test), `stale` (the previous
snapshot's answers), `closed-book` (an LLM without tools). Search agents: `web` (SearXNG search
and page fetching) and `plugin` (the data service's MCP tools). See `base.run_agent`.
"""
