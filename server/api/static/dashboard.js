// The vnpu dashboard: polls the REST views (/v1/devices, /v1/devices/{id}, /v1/models/{id} and its graph) and
// shows the live timeline (timeline.js, fed by the WebSocket /v1/trace/live). Plain browser JavaScript modules, no
// build step, no library.
import { $, el, hex, size, bar } from './dom.js';
import { foldDebug } from './fold.js';
import * as timeline from './timeline.js';

const TOKEN_KEY = 'vnpu-token';
const POLL_MS = 1000;
const MAX_MODELS = 16; // model cards shown (and fetched each poll)

// --- the token -----------------------------------------------------------------------------------------------
class NeedToken extends Error {}

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

function takeTokenFromUrl() {
  const url = new URL(location.href);
  const given = url.searchParams.get('token');
  if (given) {
    sessionStorage.setItem(TOKEN_KEY, given);
    url.searchParams.delete('token');
    history.replaceState(null, '', url.pathname + url.search + url.hash);
  }
}

let polling = false;
let triedToken = false;

function showLogin() {
  polling = false;
  timeline.close();
  $('#content').hidden = true;
  $('#login').hidden = false;
  const error = $('#login-error');
  error.hidden = !triedToken;
  error.textContent = triedToken ? 'That token was refused.' : '';
  setStatus('token required', 'bad');
  $('#token-input').focus();
}

$('#login-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = $('#token-input').value.trim();
  if (!value) return;
  sessionStorage.setItem(TOKEN_KEY, value);
  $('#token-input').value = '';
  triedToken = true;
  start();
});

$('#forget-token').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  location.reload();
});

// --- REST ----------------------------------------------------------------------------------------------------
async function api(path, kind = 'json') {
  const headers = {};
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const response = await fetch(new URL(path, location.href), { headers, cache: 'no-store' });
  if (response.status === 401) throw new NeedToken('a token is required');
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      if (body.error) message = `${body.error.name}: ${body.error.message}`;
    } catch (ignored) { /* not JSON */ }
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return kind === 'json' ? response.json() : response.text();
}

// --- helpers -------------------------------------------------------------------------------------------------
function setStatus(text, kind) {
  const pill = $('#status');
  pill.textContent = text;
  pill.className = `pill ${kind || ''}`;
}

function fillTable(table, rows) {
  const body = table.querySelector('tbody');
  body.replaceChildren(...rows);
  table.parentElement.querySelector('.empty').hidden = rows.length > 0;
}

// --- the views -----------------------------------------------------------------------------------------------
function age(seconds) {
  for (const [unit, span] of [['d', 86400], ['h', 3600], ['min', 60]]) {
    if (seconds >= span) return `${(seconds / span).toFixed(seconds < 10 * span ? 1 : 0)} ${unit}`;
  }
  return `${seconds.toFixed(1)} s`;
}

function renderDevices(devices) {
  $('#devices').replaceChildren(...devices.map((d) => {
    const mem = d.memory;
    return el('div', { class: 'card', 'data-device': d.id },
      el('h3', { text: `device ${d.id}` }),
      el('div', { class: 'muted', text: `memory ${size(mem.used)} of ${size(mem.total)} (${(100 * mem.used / mem.total).toFixed(1)}%)` }),
      bar(mem.used / mem.total),
      el('div', { class: 'stats' },
        el('span', { class: 'muted', text: 'streams' }), el('span', { text: `${d.streams.used} / ${d.streams.max}` }),
        el('span', { class: 'muted', text: 'events' }), el('span', { text: `${d.events.used} / ${d.events.max}` }),
        el('span', { class: 'muted', text: 'models' }), el('span', { text: `${d.models.used} / ${d.models.max}` }),
        el('span', { class: 'muted', text: 'contexts' }), el('span', { text: String(d.contexts.length) })));
  }));
}

function renderContexts(devices) {
  // a context spans the devices: each device's view lists it with what it holds there
  const totals = new Map();
  for (const d of devices) {
    for (const c of d.contexts) {
      if (!totals.has(c.id)) {
        totals.set(c.id, { sessions: c.sessions, memory: c.memory, age: c.age, devices: [], streams: 0, events: 0, models: 0 });
      }
      const total = totals.get(c.id);
      total.streams += c.streams.length;
      total.events += c.events.length;
      total.models += c.models.length;
      if (c.streams.length || c.events.length || c.models.length) total.devices.push(d.id);
    }
  }
  const rows = [...totals].map(([id, t]) => el('tr', {},
    el('td', { class: 'mono', text: id }), el('td', { class: 'num', text: String(t.sessions) }),
    el('td', { text: t.devices.join(', ') || '-' }), el('td', { class: 'num', text: size(t.memory) }),
    el('td', { class: 'num', text: age(t.age) }), el('td', { class: 'num', text: String(t.streams) }),
    el('td', { class: 'num', text: String(t.events) }), el('td', { class: 'num', text: String(t.models) })));
  fillTable($('#contexts'), rows);
}

function renderStreams(devices) {
  const rows = [];
  for (const d of devices) {
    for (const c of d.contexts) {
      for (const s of c.streams) {
        const kind = [s.default ? 'default' : 'stream', s.capturing ? 'capturing' : null].filter(Boolean).join(', ');
        const running = s.running || (s.queued ? 'queued' : 'idle');
        const blocked = s.running && /Wait|Synchronize/.test(s.running);
        rows.push(el('tr', { class: blocked ? 'blocked' : (s.running ? 'busy' : ''), 'data-stream': s.handle },
          el('td', { text: String(d.id) }), el('td', { class: 'mono', text: c.id.slice(0, 8) }),
          el('td', { class: 'mono', text: hex(s.handle) }), el('td', { text: kind }),
          el('td', { class: 'num' }, String(s.queued), bar(Math.min(1, s.queued / 16), true)),
          el('td', { class: 'running mono', text: running })));
      }
    }
  }
  fillTable($('#streams'), rows);
}

const modelCards = new Map(); // handle -> {card, graphKey, url}

async function renderModels(devices) {
  const found = [];
  const runningOn = new Map();
  for (const d of devices) {
    for (const c of d.contexts) {
      for (const s of c.streams) {
        const match = s.running && /model (0x[0-9a-f]+)/.exec(s.running);
        if (match) runningOn.set(Number(match[1]), s.handle);
      }
      for (const m of c.models) found.push(m);
    }
  }
  const shown = found.filter((m) => m.state !== 'destroyed').slice(0, MAX_MODELS);
  const details = await Promise.all(shown.map((m) => api(`v1/models/${m.handle}`).catch((error) => {
    if (error instanceof NeedToken) throw error;
    return null; // destroyed between the two requests
  })));
  const container = $('#models');
  const keep = new Set();
  for (const model of details) {
    if (!model) continue;
    keep.add(model.handle);
    let entry = modelCards.get(model.handle);
    if (!entry) {
      const card = el('div', { class: 'model', 'data-model': model.handle },
        el('h3'),
        el('div', { class: 'body' },
          el('div', {}, el('pre', { class: 'tasks' }), el('p', { class: 'muted fold-note' }), el('table', { class: 'groups' })),
          el('div', { class: 'graph' }, el('img', { alt: `graph of model ${hex(model.handle)}` }))));
      entry = { card, graphKey: '', url: '' };
      modelCards.set(model.handle, entry);
    }
    container.append(entry.card); // keeps the order of the device views
    const stream = runningOn.get(model.handle);
    const state = stream ? `running on stream ${hex(stream)}` : model.state;
    entry.card.querySelector('h3').replaceChildren(
      `model ${hex(model.handle)}${model.name ? ` "${model.name}"` : ''}${model.kind && model.kind !== 'capture' ? ` (${model.kind})` : ''} `, el('span', { class: `state ${stream ? 'running' : model.state}`, text: state }),
      el('span', { class: 'muted', text: `  device ${model.device} · context ${model.context.slice(0, 8)} · ${model.executions} execution(s)` }));
    const tasks = entry.card.querySelector('pre.tasks');
    // runs of equal tasks fold, unless an aclmdlRIUpdate edited the model: an edited task looks like the others here
    const text = model.edits.length ? model.debug : foldDebug(model.debug);
    if (tasks.textContent !== text) tasks.textContent = text;
    const note = model.edits.length ? 'runs not folded: aclmdlRIUpdate edited this model (the graph marks which task)'
      : (text !== model.debug ? 'runs of equal tasks folded (×N); the graph folds the same way' : '');
    entry.card.querySelector('.fold-note').textContent = note;
    entry.card.querySelector('.fold-note').hidden = !note;
    const groups = entry.card.querySelector('table.groups');
    groups.replaceChildren(
      el('thead', {}, el('tr', {}, el('th', { text: 'task group' }), el('th', { text: 'kernels' }), el('th', { text: 'updates' }))),
      el('tbody', {}, ...model.groups.map((g) => el('tr', {},
        el('td', { class: 'mono', text: hex(g.handle) }), el('td', { class: 'mono', text: g.kernels.join('\n') }),
        el('td', { class: 'num', text: String(g.updates) })))));
    const graphKey = `${model.state}|${model.groups.map((g) => `${g.handle}:${g.updates}`).join(',')}`;
    if (entry.graphKey !== graphKey) {
      entry.graphKey = graphKey;
      api(`v1/models/${model.handle}/graph?format=svg`, 'text').then((svg) => {
        if (entry.url) URL.revokeObjectURL(entry.url);
        entry.url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
        entry.card.querySelector('.graph img').src = entry.url;
      }).catch(() => { entry.graphKey = ''; });
    }
  }
  for (const [handle, entry] of modelCards) {
    if (!keep.has(handle)) {
      entry.card.remove();
      if (entry.url) URL.revokeObjectURL(entry.url);
      modelCards.delete(handle);
    }
  }
  $('#models-panel .empty').hidden = keep.size > 0;
  $('#models-panel h2').textContent = found.length > MAX_MODELS ? `Models (first ${MAX_MODELS} of ${found.length})` : 'Models';
}

async function poll() {
  if (!polling) return;
  try {
    const summary = await api('v1/devices');
    const devices = await Promise.all(summary.map((d) => api(`v1/devices/${d.id}`)));
    $('#login').hidden = true;
    $('#content').hidden = false;
    $('#content').classList.remove('stale');
    $('#forget-token').hidden = !token();
    triedToken = false;
    renderDevices(devices);
    renderContexts(devices);
    renderStreams(devices);
    await renderModels(devices);
    if (!timeline.connecting()) timeline.open(token(), () => polling);
    setStatus(timeline.isOpen() ? 'live' : 'connected', 'ok');
    $('#updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    if (error instanceof NeedToken) {
      showLogin();
      return;
    }
    setStatus(`daemon unreachable: ${error.message}`, 'bad');
    $('#content').classList.add('stale'); // what is shown is the last answer: greyed until the daemon answers again
  }
  if (polling) setTimeout(poll, POLL_MS);
}

// --- start ---------------------------------------------------------------------------------------------------
function start() {
  polling = true;
  setStatus('connecting…', '');
  poll();
}

takeTokenFromUrl();
setInterval(timeline.draw, 100);
start();
