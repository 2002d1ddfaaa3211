// The console's page: plain HTML, CSS and JS, shipped inside the bundle (works offline).

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const head = (title: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title>
<link rel="stylesheet" href="/app.css"></head>`;

export function appPage(): string {
  return `${head('toolgate console')}<body>
<header><h1>toolgate console</h1><span id="proc"></span><span id="live" class="dot" title="live updates"></span></header>
<main>
<section><h2>Pending approvals <span id="npending" class="count"></span></h2><div id="pending"><p class="muted">Loading…</p></div></section>
<section><h2>Calls of this process</h2>
<div class="filters"><input id="f-text" placeholder="filter: tool, session, rule…"> 
<select id="f-decision"><option value="">any decision</option><option>allow</option><option>ask</option><option>deny</option></select>
<select id="f-status"><option value="">any status</option><option>ok</option><option>partial</option><option>error</option></select></div>
<table id="calls"><thead><tr><th>time</th><th>session</th><th>tool</th><th>decision</th><th>rule</th><th>ms</th><th>status</th><th>files changed</th></tr></thead><tbody></tbody></table>
<pre id="record" hidden></pre></section>
<section class="two"><div><h2>Audit chain</h2><div id="audit"></div></div>
<div><h2>Stored grants (always allow)</h2><div id="grants"></div></div></section>
</main><script src="/app.js"></script></body></html>`;
}

export function loginPage(error: string | null, next = '/'): string {
  return `${head('toolgate console — sign in')}<body><main class="login">
<h1>toolgate console</h1>
<p>This page needs the console secret. Open the URL toolgate printed on its stderr or in its notification,
or run <code>toolgate console</code> in a terminal for a new one, or paste the secret here.</p>
${error ? `<p class="error">${esc(error)}</p>` : ''}
<form method="post" action="/login"><input type="hidden" name="next" value="${esc(next)}">
<input name="secret" type="password" autocomplete="off" placeholder="secret" required> <button>Open</button></form>
</main></body></html>`;
}

export const APP_CSS = `
:root{--bg:#f7f7f5;--fg:#1d1d1f;--muted:#6b6b70;--line:#dcdcd8;--ok:#1f7a3d;--bad:#b3261e;--ask:#9a6700;--card:#fff}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;gap:1em;align-items:center;padding:.6em 1.2em;background:#1d1d1f;color:#fff}header h1{font-size:1.1em;margin:0}
#proc{color:#bbb;font-size:.9em}.dot{width:.7em;height:.7em;border-radius:50%;background:#777;margin-left:auto}.dot.on{background:#3fb950}
main{padding:1em 1.2em;max-width:1200px;margin:auto}h2{font-size:1em;margin:1.2em 0 .5em}.count{background:var(--ask);color:#fff;border-radius:1em;padding:0 .5em;font-size:.85em}
.card{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--ask);border-radius:6px;padding:.7em 1em;margin-bottom:.8em}
.card.focus{box-shadow:0 0 0 3px #f0c36d}.card h3{margin:0 0 .3em;font-size:1em}.risk-high{color:var(--bad)}.risk-medium{color:var(--ask)}
.kv{display:grid;grid-template-columns:8em 1fr;gap:.1em .8em;font-size:.92em}.kv b{color:var(--muted);font-weight:500}
pre{background:#f0f0ec;border:1px solid var(--line);border-radius:4px;padding:.5em;overflow:auto;max-height:22em;margin:.4em 0;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-all}
.add{color:var(--ok)}.del{color:var(--bad)}.hunk{color:#0550ae}
.buttons{display:flex;gap:.5em;margin-top:.5em}button{font:inherit;padding:.35em .9em;border-radius:5px;border:1px solid var(--line);background:#fff;cursor:pointer}
button.allow{background:var(--ok);color:#fff;border-color:var(--ok)}button.deny{background:var(--bad);color:#fff;border-color:var(--bad)}
table{width:100%;border-collapse:collapse;background:var(--card);font-size:.9em}th,td{text-align:left;padding:.3em .5em;border-bottom:1px solid var(--line);vertical-align:top}
tbody tr{cursor:pointer}tbody tr:hover{background:#f3f3ef}td.rule{max-width:22em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.s-ok{color:var(--ok)}.s-error{color:var(--bad)}.d-deny{color:var(--bad)}.d-ask{color:var(--ask)}.muted{color:var(--muted)}
.filters{display:flex;gap:.5em;margin-bottom:.5em}.filters input{flex:1}input,select{font:inherit;padding:.3em .5em;border:1px solid var(--line);border-radius:4px}
.two{display:grid;grid-template-columns:1fr 1fr;gap:1.5em}.good{color:var(--ok)}.error{color:var(--bad)}.login{max-width:34em}
`;

export const APP_JS = `
'use strict';
let csrf = '';
let state = null;
let openRecord = null;
const focus = (location.pathname.match(/^\\/r\\/([0-9a-f]+)$/) || [])[1];
const $ = (id) => document.getElementById(id);
// Model-chosen text (paths, args, diffs, rules) is shown as text, never markup, and its control,
// line-separator and bidi characters as escapes: a file name cannot reorder or fake what is shown.
const vis = (s) => String(s).replace(/[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]/g, (c) => '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) { if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, vis(v)); }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : document.createTextNode(vis(k)));
  return e;
}
function diffView(text) {
  const pre = el('pre', { class: 'diff' });
  for (const line of text.split('\\n')) {
    const cls = line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : line.startsWith('@@') ? 'hunk' : '';
    pre.append(el('span', { class: cls }, line + '\\n'));
  }
  return pre;
}
async function answer(id, decision) {
  const r = await fetch('/api/answer', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ id, decision }) });
  if (!r.ok) { const j = await r.json().catch(() => ({})); alert(j.message || 'the answer was not taken'); }
  load();
}
async function revoke(root, id) {
  if (!confirm('Revoke this grant? Calls it covered will be asked about again.')) return;
  await fetch('/api/revoke', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ root, id }) });
  load();
}
function renderPending() {
  const box = $('pending'); box.textContent = '';
  $('npending').textContent = state.pending.length ? String(state.pending.length) : '';
  if (!state.pending.length) { box.append(el('p', { class: 'muted' }, 'Nothing waits for an answer.')); return; }
  for (const p of state.pending) {
    const card = el('div', { class: 'card' + (p.id === focus ? ' focus' : ''), 'data-id': p.id },
      el('h3', {}, p.tool + ' ', el('span', { class: 'risk-' + p.risk }, '(' + p.risk + ' risk)'), ' — request ' + p.id, p.waiting ? '' : ' (the call stopped waiting: an answer applies to its retry)'),
      el('div', { class: 'kv' },
        el('b', {}, 'what'), el('span', {}, p.summary),
        el('b', {}, 'why asked'), el('span', {}, p.rule),
        el('b', {}, 'session'), el('span', {}, p.session_id + ' · ' + new Date(p.created_at).toLocaleTimeString()),
        el('b', {}, 'grant'), el('span', {}, p.grant.join('; '))),
      el('div', { class: 'muted' }, 'Arguments (exactly what will run):'), el('pre', { class: 'args' }, JSON.stringify(p.args, null, 2)),
      p.diff ? el('div', { class: 'muted' }, 'The change it would make:') : null, p.diff ? diffView(p.diff) : null,
      el('div', { class: 'buttons' },
        el('button', { class: 'allow', 'data-decision': 'allow_once', onclick: () => answer(p.id, 'allow_once') }, 'Allow once'),
        el('button', { 'data-decision': 'allow_session', onclick: () => answer(p.id, 'allow_session') }, 'Allow for the session'),
        el('button', { 'data-decision': 'allow_always', onclick: () => answer(p.id, 'allow_always') }, 'Always allow'),
        el('button', { class: 'deny', 'data-decision': 'deny', onclick: () => answer(p.id, 'deny') }, 'Deny')));
    box.append(card);
  }
}
function renderCalls() {
  const q = $('f-text').value.toLowerCase(), d = $('f-decision').value, s = $('f-status').value;
  const body = $('calls').tBodies[0]; body.textContent = '';
  for (const c of [...state.calls].reverse()) {
    if (d && c.decision !== d) continue;
    if (s && c.status !== s) continue;
    if (q && ![c.tool, c.session_id, c.rule, c.error_code, (c.files_changed || []).join(' ')].join(' ').toLowerCase().includes(q)) continue;
    const tr = el('tr', { onclick: () => { openRecord = openRecord === c.tool_call_id ? null : c.tool_call_id; showRecord(); } },
      el('td', {}, new Date(c.ts_start).toLocaleTimeString()), el('td', {}, c.session_id), el('td', {}, c.tool),
      el('td', { class: 'd-' + c.decision }, c.decision || '—' + (c.approval && c.approval.source ? '' : '')), el('td', { class: 'rule', title: c.rule || '' }, c.rule || ''),
      el('td', {}, c.duration_ms), el('td', { class: 's-' + c.status }, c.status + (c.error_code ? ' ' + c.error_code : '')),
      el('td', {}, (c.files_changed || []).join(', ')));
    body.append(tr);
  }
  showRecord();
}
function showRecord() {
  const rec = state.calls.find((c) => c.tool_call_id === openRecord);
  $('record').hidden = !rec; $('record').textContent = rec ? vis(JSON.stringify(rec, null, 2)) : '';
}
function renderSide() {
  const a = $('audit'); a.textContent = '';
  if (!state.audits.length) a.append(el('p', { class: 'muted' }, 'No audit file written yet by this process.'));
  for (const x of state.audits) a.append(el('p', { class: x.ok ? 'good' : 'error' }, (x.ok ? '✓ verifies: ' : '✗ broken: ') + x.file + ' (' + x.records + ' records)' + (x.ok ? (x.note ? ' — note: ' + x.note : '') : ' — line ' + x.bad_line + ': ' + x.problem)));
  const g = $('grants'); g.textContent = '';
  let n = 0;
  for (const r of state.grants) {
    if (r.warning) g.append(el('p', { class: 'error' }, r.warning));
    for (const x of r.grants) {
      n++;
      const what = x.abs ? x.abs + (x.recursive ? ' and below' : '') : x.command ? 'commands starting "' + x.command.join(' ') + '"' : x.domain || x.path || 'any arguments';
      g.append(el('p', {}, el('b', {}, x.tool), ' ' + (x.access ? '(' + x.access + ') ' : '') + what + ' ', el('span', { class: 'muted' }, x.id + ' · ' + x.created_at + ' '), el('button', { onclick: () => revoke(r.root, x.id) }, 'Revoke')));
    }
  }
  if (!n) g.append(el('p', { class: 'muted' }, 'No stored grants for this workspace.'));
}
async function load() {
  const r = await fetch('/api/state');
  if (r.status === 401) { location.reload(); return; }
  state = await r.json(); csrf = state.csrf;
  $('proc').textContent = 'process ' + state.pid;
  renderPending(); renderCalls(); renderSide();
}
for (const id of ['f-text', 'f-decision', 'f-status']) $(id).addEventListener('input', () => state && renderCalls());
const ev = new EventSource('/api/events');
ev.addEventListener('changed', () => load());
ev.onopen = () => $('live').classList.add('on');
ev.onerror = () => $('live').classList.remove('on');
load();
`;
