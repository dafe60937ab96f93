"""Shared infrastructure below the packages that use it: the LLM client and its cache, the serve loop of the CLI servers."""
