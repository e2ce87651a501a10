// The live timeline: what /v1/trace/live delivered, kept for HISTORY_S seconds (at most MAX_EVENTS tasks), drawn
// on a canvas in lanes (one per stream, or stream of a replayed model) grouped by context, model, tenant or device;
// filtered by tenant, context and model; idle lanes (no task in view) folded to thin rows; paused, zoomed and
// scrolled over the whole history. The view's settings live in the URL's hash (#group=model&span=2&idle=show...).
// Failed tasks have their own colour and a list below the timeline, which follows the same filters.

import { $, el, hex } from './dom.js';

const HISTORY_S = 300; // seconds of the feed kept for scrolling back
const MAX_EVENTS = 50000; // tasks kept (the oldest go first)
const MAX_ERRORS = 500; // failed tasks kept for the error list (they outlive the history)
const ERRORS_SHOWN = 100;
const SPANS = [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300]; // zoom steps, seconds in view
const STEPS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60]; // axis ticks, seconds
const LANE_H = 22;
const IDLE_H = 5;
const HEAD_H = 20;
const AXIS_H = 20;
const LABEL_W = 230;
export const COLORS = {
  kernel: '#2b6cb0', memcpy: '#2f855a', memset: '#319795', record: '#805ad5', wait: '#dd6b20',
  reset: '#718096', group: '#5a67d8', update: '#b7791f', model: '#a0aec0', failed: '#e3342f',
};
const GROUPS = { context: 'context', model: 'model', tenant: 'tenant', device: 'device' };
const ERROR = /^(\S+) \((-?\d+)\): ([\s\S]*)$/; // the trace's "ACL_ERROR_... (507000): message"

let events = []; // the complete ("X") events kept, in arrival order
let errors = []; // the failed ones, newest last
let tenant = '';
const ended = new Set(); // contexts the feed said have ended
let clock = { us: 0, at: 0 }; // the trace clock (µs) and when it was received (performance.now(), ms)
const view = { span: 10, end: null, group: 'context', tenant: '', context: '', model: '', idle: 'fold' };
let layout = { rows: [], t0: 0, scale: 1 };
let shownErrors = '';

// --- the feed ----------------------------------------------------------------------------------------------------
let socket = null;
let retry = null;

export const isOpen = () => Boolean(socket && socket.readyState === WebSocket.OPEN);

export function close() {
  if (retry) clearTimeout(retry);
  retry = null;
  if (socket) {
    socket.onclose = null;
    socket.close();
  }
  socket = null;
}

export const connecting = () => Boolean(socket || retry);

export function open(token, again) {
  close();
  const url = new URL('v1/trace/live', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('window', '60');
  // the token travels as a subprotocol, never in the URL (URLs end up in access logs)
  const bytes = Array.from(new TextEncoder().encode(token || ''), (b) => b.toString(16).padStart(2, '0')).join('');
  socket = token ? new WebSocket(url, ['vnpu', `vnpu.token.${bytes}`]) : new WebSocket(url);
  socket.onmessage = (message) => receive(JSON.parse(message.data));
  socket.onclose = () => {
    socket = null;
    if (again()) retry = setTimeout(() => { retry = null; open(token, again); }, 2000);
  };
}

function receive(payload) {
  clock = { us: payload.nowUs, at: performance.now() };
  tenant = payload.tenant || '';
  for (const c of payload.contexts || []) if (c.ended) ended.add(c.id);
  for (const e of payload.traceEvents) {
    if (e.ph !== 'X') continue;
    events.push(e);
    if (e.args && e.args.Error) errors.push(e);
  }
  const oldest = payload.nowUs - HISTORY_S * 1e6;
  let drop = Math.max(0, events.length - MAX_EVENTS);
  while (drop < events.length && events[drop].ts + events[drop].dur < oldest) drop += 1;
  if (drop) events = events.slice(drop);
  if (errors.length > MAX_ERRORS) errors = errors.slice(errors.length - MAX_ERRORS);
  $('#timeline-panel').dataset.enabled = String(payload.enabled);
}

function nowUs() {
  if (!clock.at) return 0;
  return clock.us + Math.min(1000, performance.now() - clock.at) * 1000;
}

// --- what an event belongs to ------------------------------------------------------------------------------------
const contextOf = (e) => (e.args && e.args.Context) || '-';
const modelOf = (e) => (e.args && e.args['Model Id'] !== undefined ? hex(e.args['Model Id']) : '');
const laneName = (tid) => String(tid).replace(/ of device \d+$/, ''); // the device is said beside it
const keys = (e) => ({ tenant, context: contextOf(e), model: modelOf(e), device: String(e.pid) });

function groupLabel(kind, key) {
  if (kind === 'context') return `context ${key.slice(0, 8)}${ended.has(key) ? ' (ended)' : ''}`;
  if (kind === 'model') return key ? `model ${key}` : 'not in a model';
  if (kind === 'tenant') return `tenant ${key || '-'}`;
  return `device ${key}`;
}

function shown(e) {
  const k = keys(e);
  return (!view.tenant || k.tenant === view.tenant) && (!view.context || k.context === view.context)
    && (!view.model || k.model === view.model);
}

// --- the view's settings: the controls and the URL's hash ---------------------------------------------------------
function readHash() {
  const given = new URLSearchParams(location.hash.slice(1));
  if (GROUPS[given.get('group')]) view.group = given.get('group');
  const span = Number(given.get('span'));
  if (SPANS.includes(span)) view.span = span;
  for (const key of ['tenant', 'context', 'model']) view[key] = given.get(key) || '';
  view.idle = given.get('idle') === 'show' ? 'show' : 'fold';
}

function writeHash() {
  const state = new URLSearchParams();
  if (view.group !== 'context') state.set('group', view.group);
  if (view.span !== 10) state.set('span', String(view.span));
  for (const key of ['tenant', 'context', 'model']) if (view[key]) state.set(key, view[key]);
  if (view.idle === 'show') state.set('idle', 'show');
  const hash = state.toString();
  history.replaceState(null, '', location.pathname + location.search + (hash ? `#${hash}` : ''));
}

function set(changes) {
  Object.assign(view, changes);
  writeHash();
  syncControls();
}

function syncControls() {
  $('#tl-group').value = view.group;
  $('#tl-idle').checked = view.idle === 'show';
  $('#tl-pause').textContent = view.end === null ? 'Pause' : 'Live';
  $('#tl-pause').setAttribute('aria-pressed', String(view.end !== null));
  $('#tl-zoom-in').disabled = view.span === SPANS[0];
  $('#tl-zoom-out').disabled = view.span === SPANS[SPANS.length - 1];
  $('#tl-forward').disabled = view.end === null;
}

function fillFilter(select, values, current, label) {
  const wanted = ['', ...[...values].sort()];
  if (current && !values.has(current)) wanted.push(current); // from the hash: kept until its events come
  const have = [...select.options].map((o) => o.value);
  if (have.join('\n') !== wanted.join('\n')) {
    select.replaceChildren(...wanted.map((v) => el('option', { value: v, text: v ? label(v) : 'all' })));
  }
  select.value = current;
}

function refreshFilters() {
  const seen = { tenant: new Set(), context: new Set(), model: new Set() };
  for (const e of events) {
    const k = keys(e);
    seen.tenant.add(k.tenant);
    seen.context.add(k.context);
    if (k.model) seen.model.add(k.model);
  }
  fillFilter($('#tl-tenant'), seen.tenant, view.tenant, (v) => v || '-');
  fillFilter($('#tl-context'), seen.context, view.context, (v) => groupLabel('context', v).slice(8));
  fillFilter($('#tl-model'), seen.model, view.model, (v) => v);
}

function zoom(by, anchorUs) {
  const at = SPANS.indexOf(view.span);
  const span = SPANS[Math.min(SPANS.length - 1, Math.max(0, at + by))];
  if (span === view.span) return;
  if (view.end !== null && anchorUs !== undefined) {
    // keep the time under the pointer where it is
    const fraction = (view.end - anchorUs) / (view.span * 1e6);
    scrollTo(anchorUs + fraction * span * 1e6);
  }
  set({ span });
}

function scrollTo(endUs) {
  const now = nowUs();
  const first = events.length ? events[0].ts : now;
  const end = Math.max(first + view.span * 1e6 * 0.5, endUs);
  set({ end: end >= now ? null : end });
}

function wire() {
  readHash();
  $('#tl-group').addEventListener('change', (e) => set({ group: e.target.value }));
  for (const key of ['tenant', 'context', 'model']) {
    $(`#tl-${key}`).addEventListener('change', (e) => set({ [key]: e.target.value }));
  }
  $('#tl-idle').addEventListener('change', (e) => set({ idle: e.target.checked ? 'show' : 'fold' }));
  $('#tl-pause').addEventListener('click', () => set({ end: view.end === null ? nowUs() : null }));
  $('#tl-zoom-in').addEventListener('click', () => zoom(-1));
  $('#tl-zoom-out').addEventListener('click', () => zoom(1));
  $('#tl-back').addEventListener('click', () => scrollTo((view.end ?? nowUs()) - view.span * 5e5));
  $('#tl-forward').addEventListener('click', () => scrollTo((view.end ?? nowUs()) + view.span * 5e5));
  const canvas = $('#timeline');
  canvas.addEventListener('wheel', (wheel) => {
    wheel.preventDefault();
    const x = wheel.clientX - canvas.getBoundingClientRect().left;
    if (wheel.shiftKey || Math.abs(wheel.deltaX) > Math.abs(wheel.deltaY)) {
      const delta = wheel.shiftKey ? wheel.deltaY : wheel.deltaX;
      scrollTo((view.end ?? nowUs()) + delta / layout.scale);
    } else {
      zoom(wheel.deltaY < 0 ? -1 : 1, x > LABEL_W ? layout.t0 + (x - LABEL_W) / layout.scale : undefined);
    }
  }, { passive: false });
  let drag = null;
  canvas.addEventListener('mousedown', (down) => { drag = { x: down.clientX, end: view.end ?? nowUs() }; });
  window.addEventListener('mouseup', () => { drag = null; });
  canvas.addEventListener('mousemove', (move) => {
    if (drag && move.buttons === 1 && Math.abs(move.clientX - drag.x) > 3) {
      scrollTo(drag.end - (move.clientX - drag.x) / layout.scale);
      $('#tooltip').hidden = true;
    } else {
      showTooltip(move);
    }
  });
  canvas.addEventListener('mouseleave', () => { $('#tooltip').hidden = true; });
  $('#errors').addEventListener('click', (click) => {
    const row = click.target.closest('tr[data-end]');
    if (row) scrollTo(Number(row.dataset.end) + view.span * 5e5); // the failure in the middle of the view
  });
  $('#legend').replaceChildren(...Object.entries(COLORS).map(([kind, color]) => {
    const swatch = el('span', { class: 'swatch' });
    swatch.style.background = color;
    return el('span', { 'data-kind': kind }, swatch, kind);
  }));
  syncControls();
}

// --- drawing -----------------------------------------------------------------------------------------------------
function lanesInView(t0, t1) {
  // one lane per (group, device, lane name); a lane with nothing in [t0, t1] is idle
  const lanes = new Map();
  for (const e of events) {
    if (!shown(e)) continue;
    const group = keys(e)[view.group];
    const key = `${group}\u0000${e.pid}\u0000${e.tid}`;
    if (!lanes.has(key)) lanes.set(key, { group, pid: e.pid, tid: String(e.tid), events: [], failed: 0 });
    if (e.ts + e.dur >= t0 && e.ts <= t1) {
      const lane = lanes.get(key);
      lane.events.push(e);
      if (e.args && e.args.Error) lane.failed += 1;
    }
  }
  const groups = new Map();
  for (const lane of lanes.values()) {
    if (!groups.has(lane.group)) groups.set(lane.group, { key: lane.group, label: groupLabel(view.group, lane.group), lanes: [] });
    groups.get(lane.group).lanes.push(lane);
  }
  const sorted = [...groups.values()].sort((a, b) => a.label.localeCompare(b.label));
  for (const g of sorted) g.lanes.sort((a, b) => a.pid - b.pid || a.tid.localeCompare(b.tid));
  return sorted;
}

function rowsOf(groups) {
  const rows = [];
  let y = AXIS_H;
  for (const g of groups) {
    const idle = g.lanes.filter((l) => !l.events.length).length;
    rows.push({ kind: 'head', y, h: HEAD_H, group: g, idle });
    y += HEAD_H;
    for (const lane of g.lanes) {
      const folded = !lane.events.length && view.idle === 'fold';
      const h = folded ? IDLE_H : LANE_H;
      rows.push({ kind: folded ? 'idle' : 'lane', y, h, lane });
      y += h;
    }
  }
  return { rows, height: y + 4 };
}

function tickStep(span) {
  return STEPS.find((s) => span / s <= 10) || STEPS[STEPS.length - 1];
}

function drawAxis(g, t0, t1, now, scale, width, height) {
  const step = tickStep(view.span) * 1e6;
  const digits = Math.max(0, -Math.floor(Math.log10(step / 1e6)));
  g.fillStyle = '#6b7686';
  g.strokeStyle = '#e3e8ef';
  for (let t = now - Math.floor((now - t0) / step) * step; t <= t1 + 1; t += step) {
    const x = LABEL_W + (t - t0) * scale;
    g.beginPath();
    g.moveTo(x + 0.5, AXIS_H - 4);
    g.lineTo(x + 0.5, height);
    g.stroke();
    const ago = (now - t) / 1e6;
    g.fillText(ago < step / 2e6 ? 'now' : `-${ago.toFixed(digits)} s`, Math.min(x - 12, width - 40), AXIS_H / 2);
  }
}

function drawRows(g, rows, t0, scale, plot, width) {
  let failedAt = '';
  rows.forEach((row, i) => {
    if (row.kind === 'head') {
      g.fillStyle = '#e4e9f2';
      g.fillRect(0, row.y, width, row.h);
      g.fillStyle = '#1c2430';
      const lanes = row.group.lanes.length;
      const idle = row.idle ? `, ${row.idle} idle${view.idle === 'fold' ? ' (folded)' : ''}` : '';
      const failed = row.group.lanes.reduce((n, l) => n + l.failed, 0);
      g.fillText(`▾ ${row.group.label} · ${lanes} lane(s)${idle}${failed ? ` · ${failed} failed` : ''}`, 6, row.y + row.h / 2);
      return;
    }
    if (row.kind === 'idle') {
      g.fillStyle = '#d5dbe5';
      g.fillRect(LABEL_W, row.y + 2, plot, 1);
      return;
    }
    if (i % 2 === 0) {
      g.fillStyle = '#f1f4f9';
      g.fillRect(0, row.y, width, row.h);
    }
    g.fillStyle = '#1c2430';
    const label = `  dev ${row.lane.pid} · ${laneName(row.lane.tid)}`;
    g.fillText(label.length > 34 ? `${label.slice(0, 33)}…` : label, 6, row.y + row.h / 2);
    const failed = [];
    for (const e of row.lane.events) {
      if (e.args && e.args.Error) {
        failed.push(e);
        continue;
      }
      bar(g, e, row, t0, scale, plot, COLORS[e.cat] || '#4a5568');
    }
    for (const e of failed) { // on top, a little wider, outlined: a failure never hides under its neighbours
      const [x, w] = bar(g, e, row, t0, scale, plot, COLORS.failed, 3);
      g.strokeStyle = '#7b1414';
      g.strokeRect(x - 0.5, row.y + 2.5, w + 1, row.h - 5);
      if (!failedAt) failedAt = `${Math.round(x + w / 2)},${Math.round(row.y + row.h / 2)}`;
    }
  });
  return failedAt;
}

function bar(g, e, row, t0, scale, plot, color, least = 1.5) {
  const x = LABEL_W + Math.max(0, (e.ts - t0) * scale);
  const end = LABEL_W + Math.min(plot, (e.ts + e.dur - t0) * scale);
  const w = Math.max(least, end - x);
  g.fillStyle = color;
  g.fillRect(x, row.y + 3, w, row.h - 6);
  return [x, w];
}

export function draw() {
  const canvas = $('#timeline');
  const now = nowUs();
  const t1 = view.end ?? now;
  const t0 = t1 - view.span * 1e6;
  const groups = lanesInView(t0, t1);
  const { rows, height } = rowsOf(groups);
  const width = Math.max(400, canvas.clientWidth);
  const ratio = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.height = `${height}px`;
  }
  const g = canvas.getContext('2d');
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, width, height);
  g.font = '11px ui-monospace, Menlo, Consolas, monospace';
  g.textBaseline = 'middle';
  const plot = width - LABEL_W - 8;
  const scale = plot / (view.span * 1e6);
  drawAxis(g, t0, t1, now, scale, width, height);
  const failedAt = drawRows(g, rows, t0, scale, plot, width);
  if (!rows.length) {
    g.fillStyle = '#6b7686';
    g.fillText(events.length ? 'no task of these filters' : 'no task ran in the last seconds', LABEL_W + 8, AXIS_H + LANE_H / 2);
  }
  layout = { rows, t0, scale };
  describe(canvas, groups, failedAt, now, t1);
  refreshFilters();
  renderErrors(now);
}

function describe(canvas, groups, failedAt, now, t1) {
  // what is drawn, for people (the info line) and for tests (data attributes)
  const lanes = groups.flatMap((g) => g.lanes);
  const inView = lanes.reduce((n, l) => n + l.events.length, 0);
  const idle = lanes.filter((l) => !l.events.length).length;
  const failed = lanes.reduce((n, l) => n + l.failed, 0);
  canvas.dataset.events = String(inView);
  canvas.dataset.lanes = String(lanes.length - (view.idle === 'fold' ? idle : 0));
  canvas.dataset.idle = String(idle);
  canvas.dataset.failedAt = failedAt;
  canvas.dataset.span = events.length ? ((now - events[0].ts) / 1e6).toFixed(1) : '0';
  canvas.dataset.groups = JSON.stringify(groups.map((g) => ({
    key: g.key, label: g.label,
    lanes: g.lanes.map((l) => ({ tid: l.tid, events: l.events.length, failed: l.failed })),
  })));
  const ago = (now - t1) / 1e6;
  $('#timeline-window').textContent = view.end === null
    ? `(last ${view.span} s, live)` : `(${view.span} s ending ${ago.toFixed(1)} s ago, paused)`;
  const disabled = $('#timeline-panel').dataset.enabled === 'false' ? ' — tracing is off on the daemon' : '';
  $('#timeline-info').textContent = isOpen() || events.length
    ? `${inView} task(s) on ${lanes.length} lane(s) in ${groups.length} group(s)` +
      `${idle ? `, ${idle} idle` : ''}${failed ? `, ${failed} failed` : ''} in view; ` +
      `${events.length} kept (${canvas.dataset.span} s)${disabled}`
    : 'waiting for the trace…';
}

function renderErrors(now) {
  const list = errors.filter(shown);
  const newest = list.slice(-ERRORS_SHOWN).reverse();
  const key = `${list.length}|${newest.length ? newest[0].ts : ''}|${Math.round(now / 1e6)}`;
  if (key === shownErrors) return;
  shownErrors = key;
  $('#errors-panel h2').textContent = list.length ? `Errors (${list.length})` : 'Errors';
  $('#errors-panel .empty').hidden = list.length > 0;
  $('#errors tbody').replaceChildren(...newest.map((e) => {
    const [, name, code, message] = ERROR.exec(e.args.Error) || [null, '', '', e.args.Error];
    return el('tr', { 'data-end': String(e.ts + e.dur), title: 'show it in the timeline' },
      el('td', { class: 'num', text: `-${((now - e.ts - e.dur) / 1e6).toFixed(1)} s` }),
      el('td', { class: 'mono', text: contextOf(e).slice(0, 8) }),
      el('td', { class: 'mono lane', text: `dev ${e.pid} · ${laneName(e.tid)}` }),
      el('td', { class: 'mono call', text: e.name }),
      el('td', { class: 'mono code', text: code ? `${code} ${name}` : name }),
      el('td', { class: 'message', text: message }));
  }));
}

function showTooltip(mouse) {
  const canvas = $('#timeline');
  const tip = $('#tooltip');
  const rect = canvas.getBoundingClientRect();
  const x = mouse.clientX - rect.left;
  const y = mouse.clientY - rect.top;
  const row = layout.rows.find((r) => r.kind === 'lane' && r.y <= y && y < r.y + r.h);
  let hit = null;
  if (row && x > LABEL_W) {
    const t = layout.t0 + (x - LABEL_W) / layout.scale;
    const slack = 3 / layout.scale;
    for (const e of row.lane.events) {
      if (e.ts - slack <= t && t <= e.ts + e.dur + slack && (!hit || e.dur < hit.dur)) hit = e;
    }
  }
  if (!hit) {
    tip.hidden = true;
    return;
  }
  const args = Object.entries(hit.args || {}).map(([k, v]) => `${k}: ${typeof v === 'number' && k !== 'Error' ? hex(v) : v}`);
  const state = hit.args && hit.args.Error ? 'FAILED · ' : '';
  tip.textContent = [hit.name, `${state}${hit.cat} · ${(hit.dur / 1000).toFixed(3)} ms`, ...args].join('\n');
  tip.style.left = `${Math.min(x + 12, rect.width - 300)}px`;
  tip.style.top = `${y + 14}px`;
  tip.hidden = false;
}

wire();
