"""The offline web: deterministic pages generated from the embedded market as of a clock, a
full-text index over them and a SearXNG-compatible server (DESIGN §7).

- `corpus`: which pages exist at a clock (visibility decides how many sources mention an
  entity and how fresh they are) and what they say, read from the data service at that clock;
- `render`: the HTML and the indexed text of a page, with the noise of a real web (stale
  pages, rounding and unit variants, third-party figures that disagree, spam);
- `index`: the SQLite FTS5 store of a corpus (pages plus a BM25 full-text index);
- `server`: `/search?q=…&format=json` and the pages at their URLs, on 127.0.0.1;
- `build`: one date's web under `<data>/web/<D>/` (index + manifest), used by the `web_corpus`
  asset and `livesearch build-web | serve-web` (`commands`).
"""
