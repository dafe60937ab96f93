"""The site's stylesheet and its two small scripts (inline in the pages that use them).

Layout: every page fits a 390 px phone without sideways scrolling — a wide table scrolls inside
its own box (`.table-scroll`), hashes and long codes wrap (`.hash`, `code`), the history chart
scales with its container (an SVG viewBox at width 100%) — and the board fits 1,366 px.

SORT_JS sorts a `table.sortable-table` by a header cell (`th.sortable`, reachable by keyboard:
Enter or Space sorts like a click), keeping `aria-sort` on the header: the first sort of a text
column is A→Z, of a numeric one (`th.num`) highest first; sorting the same column again reverses.
A cell sorts by its `data-value` (its text when absent).

FILTER_JS filters and pages a day's question table (`table#questions`): the rows carry
`data-tier`, `data-band` and `data-family`, a select per dimension keeps the rows that match, the
agent select shows that agent's verdict column alone, and the rows that remain are shown
`PAGE_ROWS` at a time. Without JavaScript every row is shown.
"""

from __future__ import annotations

PAGE_ROWS = 100

STYLE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1b1f23; }
header { background: #12355b; color: #fff; padding: 10px 24px; display: flex; flex-wrap: wrap; gap: 4px 18px;
  align-items: baseline; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
header .brand { font-size: 1.1em; margin-right: 14px; }
main { padding: 12px 24px 40px; max-width: 1500px; box-sizing: border-box; }
table { border-collapse: collapse; margin: 8px 0 20px; font-size: 0.9em; }
.table-scroll { max-width: 100%; overflow-x: auto; margin: 8px 0 20px; }
.table-scroll > table { margin: 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; }
th.sortable { cursor: pointer; user-select: none; }
th.sortable:focus { outline: 2px solid #0969da; outline-offset: -2px; }
th.sortable::after { content: " \\2195"; color: #888; }
th[aria-sort="ascending"]::after { content: " \\2191"; color: #000; }
th[aria-sort="descending"]::after { content: " \\2193"; color: #000; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.ci { color: #57606a; font-size: 0.85em; }
.ok { color: #1a7f37; font-weight: 600; } .ko { color: #cf222e; } .muted { color: #6e7781; }
.hidden-gold { color: #6e7781; font-style: italic; }
.note { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; margin: 8px 0; }
.facts { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 8px 0 16px; }
.facts div { flex: 1 1 180px; min-width: 0; } .facts b { display: block; font-size: 0.8em; color: #57606a; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em; }
code { overflow-wrap: anywhere; }
.hash { word-break: break-all; }
pre { background: #f6f8fa; padding: 8px 12px; overflow-x: auto; max-width: 100%; box-sizing: border-box; }
.q { max-width: 620px; overflow-wrap: anywhere; }
.card { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 12px; margin: 8px 0 16px; }
.card.reference { background: #f6f8fa; }
.filters { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 8px 0; }
.filters[hidden] { display: none; }
.pager { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 6px 0; }
#history-chart { width: 100%; height: auto; max-width: 860px; display: block; }
@media (max-width: 600px) {
  header { padding: 8px 12px; gap: 4px 12px; }
  main { padding: 8px 12px 32px; }
}
"""

SORT_JS = """
document.querySelectorAll('table.sortable-table').forEach(function (table) {
  var headers = table.querySelectorAll('th.sortable');
  headers.forEach(function (th) {
    function sort() {
      var numeric = th.classList.contains('num');
      var current = th.getAttribute('aria-sort');
      var ascending = (current === 'ascending' || current === 'descending') ? current === 'descending' : !numeric;
      headers.forEach(function (other) { other.setAttribute('aria-sort', 'none'); });
      th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
      var column = Array.prototype.indexOf.call(th.parentNode.children, th);
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[column];
        return cell.hasAttribute('data-value') ? cell.getAttribute('data-value') : cell.textContent.trim();
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var nx = parseFloat(x), ny = parseFloat(y), order;
        if (!isNaN(nx) && !isNaN(ny)) { order = nx - ny; }
        else if (isNaN(nx) !== isNaN(ny)) { order = isNaN(nx) ? -1 : 1; }
        else { order = String(x).localeCompare(String(y)); }
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener('click', sort);
    th.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); sort(); }
    });
  });
});
"""

FILTER_JS = """
(function () {
  var table = document.getElementById('questions');
  if (!table) { return; }
  var size = %(rows)d, page = 0;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var selects = document.querySelectorAll('#question-filters select');
  var agentColumns = Array.prototype.slice.call(table.tHead.rows[0].cells)
    .map(function (cell, index) { return cell.hasAttribute('data-agent') ? index : -1; })
    .filter(function (index) { return index >= 0; });
  var status = document.getElementById('pager-status');
  function matching() {
    return rows.filter(function (row) {
      return Array.prototype.every.call(selects, function (select) {
        var dimension = select.getAttribute('data-dimension');
        return dimension === 'agent' || !select.value || row.getAttribute('data-' + dimension) === select.value;
      });
    });
  }
  function showAgent() {
    var chosen = document.querySelector('#question-filters select[data-dimension="agent"]');
    var wanted = chosen ? chosen.value : '';
    var all = [table.tHead.rows[0]].concat(rows);
    agentColumns.forEach(function (index) {
      var visible = !wanted || table.tHead.rows[0].cells[index].getAttribute('data-agent') === wanted;
      all.forEach(function (row) { row.cells[index].style.display = visible ? '' : 'none'; });
    });
  }
  function render() {
    var kept = matching();
    var pages = Math.max(1, Math.ceil(kept.length / size));
    page = Math.min(page, pages - 1);
    var first = page * size, last = Math.min(kept.length, first + size);
    rows.forEach(function (row) { row.style.display = 'none'; });
    kept.slice(first, last).forEach(function (row) { row.style.display = ''; });
    status.textContent = kept.length ? 'questions ' + (first + 1) + '\\u2013' + last + ' of ' + kept.length +
      ' (page ' + (page + 1) + ' of ' + pages + ')' : 'no question matches';
    document.getElementById('pager-previous').disabled = page === 0;
    document.getElementById('pager-next').disabled = page >= pages - 1;
  }
  selects.forEach(function (select) {
    select.addEventListener('change', function () { page = 0; showAgent(); render(); });
  });
  document.getElementById('pager-previous').addEventListener('click', function () { page -= 1; render(); });
  document.getElementById('pager-next').addEventListener('click', function () { page += 1; render(); });
  document.getElementById('question-filters').hidden = false;
  render();
})();
""" % {"rows": PAGE_ROWS}
