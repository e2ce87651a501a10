// The vnpu dashboard: polls the REST views (/v1/devices, /v1/devices/{id}, /v1/models/{id} and its graph) and
// draws the live timeline from the WebSocket /v1/trace/live. Plain browser JavaScript, no build step, no library.
'use strict';

(() => {
  const TOKEN_KEY = 'vnpu-token';
  const POLL_MS = 1000;
  const WINDOW_S = 10;
  const MAX_MODELS = 16; // model cards shown (and fetched each poll)
  const MAX_EVENTS = 20000; // events kept for the timeline
  const LANE_H = 22;
  const AXIS_H = 20;
  const LABEL_W = 230;
  const COLORS = {
    kernel: '#2b6cb0', memcpy: '#2f855a', memset: '#319795', record: '#805ad5', wait: '#dd6b20',
    reset: '#718096', group: '#5a67d8', update: '#c53030', model: '#a0aec0',
  };

  const $ = (selector) => document.querySelector(selector);

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
    closeLive();
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
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  const hex = (n) => `0x${Number(n).toString(16)}`;

  function size(bytes) {
    const units = [['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]];
    for (const [unit, scale] of units) {
      if (bytes >= scale) return `${(bytes / scale).toPrecision(3).replace(/\.?0+$/, '')} ${unit}`;
    }
    return `${bytes} B`;
  }

  function bar(fraction, small = false) {
    const fill = el('div', { class: fraction > 0.85 ? 'fill high' : 'fill' });
    fill.style.width = `${Math.min(100, Math.max(0, fraction * 100)).toFixed(1)}%`;
    return el('div', { class: small ? 'bar small' : 'bar' }, fill);
  }

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
        if (!totals.has(c.id)) totals.set(c.id, { sessions: c.sessions, devices: [], streams: 0, events: 0, models: 0 });
        const total = totals.get(c.id);
        total.streams += c.streams.length;
        total.events += c.events.length;
        total.models += c.models.length;
        if (c.streams.length || c.events.length || c.models.length) total.devices.push(d.id);
      }
    }
    const rows = [...totals].map(([id, t]) => el('tr', {},
      el('td', { class: 'mono', text: id }), el('td', { class: 'num', text: String(t.sessions) }),
      el('td', { text: t.devices.join(', ') || '-' }), el('td', { class: 'num', text: String(t.streams) }),
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
            el('div', {}, el('pre', { class: 'tasks' }), el('table', { class: 'groups' })),
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
      if (tasks.textContent !== model.debug) tasks.textContent = model.debug;
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
      $('#forget-token').hidden = !token();
      triedToken = false;
      renderDevices(devices);
      renderContexts(devices);
      renderStreams(devices);
      await renderModels(devices);
      if (!socket && !retry) openLive();
      setStatus(liveOpen ? 'live' : 'connected', 'ok');
      $('#updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      if (error instanceof NeedToken) {
        showLogin();
        return;
      }
      setStatus(`daemon unreachable: ${error.message}`, 'bad');
    }
    if (polling) setTimeout(poll, POLL_MS);
  }

  // --- the timeline --------------------------------------------------------------------------------------------
  let socket = null;
  let liveOpen = false;
  let retry = null;
  let events = [];
  let clock = { us: 0, at: 0 }; // the trace clock (µs) and when it was received (performance.now(), ms)

  function closeLive() {
    if (retry) clearTimeout(retry);
    retry = null;
    if (socket) {
      socket.onclose = null;
      socket.close();
    }
    socket = null;
    liveOpen = false;
  }

  function openLive() {
    closeLive();
    const url = new URL('v1/trace/live', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('window', String(WINDOW_S));
    // the token travels as a subprotocol, never in the URL (URLs end up in access logs)
    const hex = Array.from(new TextEncoder().encode(token() || ''), (b) => b.toString(16).padStart(2, '0')).join('');
    socket = token() ? new WebSocket(url, ['vnpu', `vnpu.token.${hex}`]) : new WebSocket(url);
    socket.onopen = () => { liveOpen = true; };
    socket.onmessage = (message) => {
      const payload = JSON.parse(message.data);
      clock = { us: payload.nowUs, at: performance.now() };
      for (const e of payload.traceEvents) {
        if (e.ph === 'X') events.push(e);
      }
      if (events.length > MAX_EVENTS) events = events.slice(events.length - MAX_EVENTS);
      $('#timeline-panel').dataset.enabled = String(payload.enabled);
    };
    socket.onclose = () => {
      liveOpen = false;
      socket = null;
      if (polling) retry = setTimeout(openLive, 2000); // the poll shows the login if the token went bad
    };
  }

  function nowUs() {
    if (!clock.at) return 0;
    return clock.us + Math.min(1000, performance.now() - clock.at) * 1000;
  }

  let layout = { lanes: [], t0: 0, scale: 1 };

  function drawTimeline() {
    const canvas = $('#timeline');
    const t1 = nowUs();
    const t0 = t1 - WINDOW_S * 1e6;
    events = events.filter((e) => e.ts + e.dur >= t0);
    const laneOf = new Map();
    for (const e of events) {
      const key = `${e.pid}\u0000${e.tid}`;
      if (!laneOf.has(key)) laneOf.set(key, { key, pid: e.pid, tid: String(e.tid), events: [] });
      laneOf.get(key).events.push(e);
    }
    const lanes = [...laneOf.values()].sort((a, b) => a.pid - b.pid || a.tid.localeCompare(b.tid));
    const width = Math.max(400, canvas.clientWidth);
    const height = AXIS_H + Math.max(1, lanes.length) * LANE_H + 4;
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
    const scale = plot / (WINDOW_S * 1e6);
    // the time axis: a tick per second, labelled in seconds before now
    g.fillStyle = '#6b7686';
    g.strokeStyle = '#e3e8ef';
    for (let s = 0; s <= WINDOW_S; s += 1) {
      const x = LABEL_W + plot - s * 1e6 * scale;
      g.beginPath();
      g.moveTo(x + 0.5, AXIS_H - 4);
      g.lineTo(x + 0.5, height);
      g.stroke();
      g.fillText(s === 0 ? 'now' : `-${s} s`, Math.min(x - 12, width - 30), AXIS_H / 2);
    }
    lanes.forEach((lane, i) => {
      const y = AXIS_H + i * LANE_H;
      if (i % 2 === 0) {
        g.fillStyle = '#f1f4f9';
        g.fillRect(0, y, width, LANE_H);
      }
      g.fillStyle = '#1c2430';
      const label = `dev ${lane.pid} · ${lane.tid}`;
      g.fillText(label.length > 34 ? `${label.slice(0, 33)}…` : label, 6, y + LANE_H / 2);
      for (const e of lane.events) {
        const x = LABEL_W + Math.max(0, (e.ts - t0) * scale);
        const end = LABEL_W + Math.min(plot, (e.ts + e.dur - t0) * scale);
        if (end < LABEL_W) continue;
        g.fillStyle = COLORS[e.cat] || '#4a5568';
        g.fillRect(x, y + 3, Math.max(1.5, end - x), LANE_H - 6);
        if (e.args && e.args.Error) {
          g.strokeStyle = '#c53030';
          g.strokeRect(x, y + 3, Math.max(1.5, end - x), LANE_H - 6);
        }
      }
    });
    if (!lanes.length) {
      g.fillStyle = '#6b7686';
      g.fillText('no task ran in the last seconds', LABEL_W + 8, AXIS_H + LANE_H / 2);
    }
    layout = { lanes, t0, scale };
    canvas.dataset.events = String(events.length);
    canvas.dataset.lanes = String(lanes.length);
    canvas.dataset.span = events.length ? ((t1 - events.reduce((m, e) => Math.min(m, e.ts), t1)) / 1e6).toFixed(1) : '0';
    const disabled = $('#timeline-panel').dataset.enabled === 'false' ? ' — tracing is off on the daemon' : '';
    $('#timeline-info').textContent = liveOpen || events.length
      ? `${events.length} task(s) on ${lanes.length} lane(s) in the last ${WINDOW_S} s${disabled}`
      : 'waiting for the trace…';
  }

  function showTooltip(mouse) {
    const canvas = $('#timeline');
    const tip = $('#tooltip');
    const rect = canvas.getBoundingClientRect();
    const x = mouse.clientX - rect.left;
    const y = mouse.clientY - rect.top;
    const lane = layout.lanes[Math.floor((y - AXIS_H) / LANE_H)];
    let hit = null;
    if (lane && x > LABEL_W) {
      const t = layout.t0 + (x - LABEL_W) / layout.scale;
      const slack = 3 / layout.scale;
      for (const e of lane.events) {
        if (e.ts - slack <= t && t <= e.ts + e.dur + slack && (!hit || e.dur < hit.dur)) hit = e;
      }
    }
    if (!hit) {
      tip.hidden = true;
      return;
    }
    const args = Object.entries(hit.args || {}).map(([k, v]) => `${k}: ${typeof v === 'number' && k !== 'Error' ? hex(v) : v}`);
    tip.textContent = [hit.name, `${hit.cat} · ${(hit.dur / 1000).toFixed(3)} ms`, ...args].join('\n');
    tip.style.left = `${Math.min(x + 12, rect.width - 300)}px`;
    tip.style.top = `${y + 14}px`;
    tip.hidden = false;
  }

  $('#timeline').addEventListener('mousemove', showTooltip);
  $('#timeline').addEventListener('mouseleave', () => { $('#tooltip').hidden = true; });
  $('#timeline-window').textContent = `(last ${WINDOW_S} s, live)`;
  $('#legend').replaceChildren(...Object.entries(COLORS).map(([kind, color]) => {
    const swatch = el('span', { class: 'swatch' });
    swatch.style.background = color;
    return el('span', {}, swatch, kind);
  }));

  // --- start ---------------------------------------------------------------------------------------------------
  function start() {
    polling = true;
    setStatus('connecting…', '');
    poll();
  }

  takeTokenFromUrl();
  setInterval(drawTimeline, 100);
  start();
})();
