//! The report's stylesheet and filter script, written beside the pages: no CDN, no network,
//! so the folder opens from `file://` and from a CI artifact alike.

/// `style.css`: the verdict colours are the classes `pass`, `fail`, `warn`, `known`,
/// `stale`, `na` and `harness`.
pub const STYLE: &str = r#"body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1f2328; }
h1 { font-size: 1.4em; margin: 0 0 .4em; }
h2 { font-size: 1.1em; margin: 1.4em 0 .4em; border-bottom: 1px solid #d0d7de; }
a { color: inherit; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: .6em; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
table { border-collapse: collapse; }
th, td { border: 1px solid #d0d7de; padding: 2px 6px; text-align: left; vertical-align: top; }
thead th { position: sticky; top: 0; background: #fff; }
.grid th.name { font-weight: normal; }
.grid tr.area-head th, .grid tr.area-head td { background: #eaeef2; font-weight: bold; }
.rules { color: #57606a; font-size: 11px; }
.cell { text-align: center; min-width: 4em; }
.cell a { text-decoration: none; display: block; }
.pass { background: #2da44e; color: #fff; }
.fail { background: #cf222e; color: #fff; }
.warn { background: #fff8c5; color: #24292f; }
.known { background: #bf8700; color: #fff; }
.stale { background: #8250df; color: #fff; }
.na { background: #d0d7de; color: #24292f; }
.harness { background: #24292f; color: #fff; }
.notrun { background: #fff; color: #8c959f; }
.cell.out { visibility: hidden; }
.badge { padding: 1px 8px; border-radius: 3px; }
form#filters { margin: .8em 0; display: flex; gap: 1.2em; flex-wrap: wrap; }
.legend span { margin-right: .6em; }
blockquote { margin: .3em 0 .3em 1em; padding-left: .8em; border-left: 3px solid #d0d7de; }
.side-by-side td.expected { background: #dafbe1; }
.side-by-side td.observed { background: #ffebe9; }
.side-by-side td { width: 45%; white-space: pre-wrap; word-break: break-all; }
.steps td.returned { white-space: pre-wrap; word-break: break-all; max-width: 60em; }
.steps tr.error td.result { color: #cf222e; }
"#;

/// `filter.js`: filters the grid by area, verdict and rule id (a prefix). The state comes
/// from the controls, or from the address: `index.html#verdict=fail&area=stdio` or
/// `index.html?rule=timeouts.`; changing a control writes it back to the hash.
pub const FILTER: &str = r#"(function () {
  'use strict';
  var names = ['area', 'verdict', 'rule'];
  var controls = {};
  names.forEach(function (name) { controls[name] = document.getElementById('f-' + name); });
  function fromAddress() {
    var params = new URLSearchParams(location.search);
    new URLSearchParams(location.hash.replace(/^#/, '')).forEach(function (value, key) { params.set(key, value); });
    names.forEach(function (name) { controls[name].value = params.get(name) || ''; });
  }
  function apply() {
    var area = controls.area.value, verdict = controls.verdict.value, rule = controls.rule.value.trim();
    var shown = 0;
    document.querySelectorAll('tr.scenario').forEach(function (row) {
      var rules = row.getAttribute('data-rules').split(' ');
      var show = (!area || row.getAttribute('data-area') === area) &&
        (!rule || rules.some(function (id) { return id.indexOf(rule) === 0; }));
      var any = false;
      row.querySelectorAll('td.cell').forEach(function (cell) {
        var match = !verdict || cell.getAttribute('data-verdict') === verdict;
        cell.classList.toggle('out', !match);
        any = any || match;
      });
      row.hidden = !(show && any);
      if (!row.hidden) { shown += 1; }
    });
    document.querySelectorAll('tbody.area').forEach(function (body) {
      body.hidden = !body.querySelector('tr.scenario:not([hidden])');
    });
    document.getElementById('shown').textContent = String(shown);
  }
  function toAddress() {
    var params = new URLSearchParams();
    names.forEach(function (name) { if (controls[name].value) { params.set(name, controls[name].value); } });
    history.replaceState(null, '', '#' + params.toString());
  }
  names.forEach(function (name) {
    controls[name].addEventListener('input', function () { apply(); toAddress(); });
  });
  window.addEventListener('hashchange', function () { fromAddress(); apply(); });
  fromAddress();
  apply();
})();
"#;
