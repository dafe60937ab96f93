"""The offline web: deterministic pages generated from the embedded market as of a clock, a
full-text index over them and a SearXNG-compatible server (DESIGN §7).

- `corpus`: what a web is: its configuration and identity, its pages, the records they print;
- `sites`: the sites (the exchange, portals, news, statistics, spam) and the chances an entity's
  visibility gives its evidence of being on them;
- `reader`: the data service at the web's clock, and the dates of its records (when a page went up);
- `formatting`: how a site prints figures, labels, names and tables (`wording`: labels and data-set
  titles in each site's own words);
- `pages`: which pages exist for each entity and market series, and what they say;
- `bulletins`: the exchanges' daily bulletins (every instrument per session and data set,
  paginated) and their dated archives, where an obscure entity's history is;
- `digest`: portals' key statistics of a visible entity's quote (5/20/60-session figures);
- `generate`: every page of the web in a fixed order, in one process or a pool of them;
- `render`: the HTML and the indexed text of a page, with the noise of a real web (stale
  pages, rounding and unit variants, third-party figures that disagree, spam);
- `index`: the SQLite FTS5 store of a corpus (pages plus a BM25 full-text index);
- `evidence`: the pages holding each scored question's evidence; `needs`: how far back each
  entity's monthly quote history must reach; `audit`: pages that give the game away;
- `server`: `/search?q=…&format=json` and the pages at their URLs, on 127.0.0.1;
- `build`: one date's web under `<data>/web/<D>/` (index + manifest), used by the `web_corpus`
  asset and `livesearch build-web | serve-web` (`commands`).
"""
