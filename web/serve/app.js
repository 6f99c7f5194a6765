// The page of `stalesgd serve`: polls /api/runs, pulls each run's new rows from
// /api/run/<id>/series?since=<cursor> (only what it has not seen), keeps them (updates binned to
// a bounded count), fills the filters, the runs table and the legend with the runs the view
// (view.js) lets through, and has charts.js draw those not hidden (docs/serve.md).
'use strict';
(function () {
  const POLL_MS = 1500;
  const MAX_BINS = 400;  // updates kept per run, however long the run: pairs merge past this
  const runs = new Map();
  const { view } = window.StaleView;
  let order = [], groups = [], polls = 0, root = '';

  function newRun(id) {
    const run = {
      id, cursor: '', generation: null, pulled: null, overview: null, updates: 0,
      evals: { wall_s: [], iteration: [], test_error: [], test_loss: [] },
      bins: [], open: null, binWidth: 1, hist: [],
      binned() { return this.open ? this.bins.concat([this.open]) : this.bins; },
    };
    return run;
  }

  function clear(run) {
    Object.assign(run, { updates: 0, bins: [], open: null, binWidth: 1, hist: [] });
    for (const k of Object.keys(run.evals)) run.evals[k] = [];
  }

  // Each bin: the last iteration and time of its updates, and the staleness summed over their
  // gradients (s) with the gradient count (w).
  function addUpdates(run, u) {
    for (let i = 0; i < u.iteration.length; i++) {
      const b = run.open || (run.open = { i: 0, t: 0, s: 0, w: 0, count: 0 });
      if (u.iteration[i] != null) b.i = u.iteration[i];
      if (u.wall_s[i] != null) b.t = u.wall_s[i];
      const k = u.n_grads[i], m = u.mean_staleness[i];
      if (k != null && m != null) { b.s += m * k; b.w += k; }
      if (++b.count >= run.binWidth) {
        run.bins.push(b);
        run.open = null;
        if (run.bins.length > MAX_BINS) merge(run);
      }
    }
    run.updates += u.iteration.length;
  }

  function merge(run) {
    const out = [];
    for (let j = 0; j + 1 < run.bins.length; j += 2) {
      const a = run.bins[j], b = run.bins[j + 1];
      out.push({ i: b.i, t: b.t, s: a.s + b.s, w: a.w + b.w, count: a.count + b.count });
    }
    if (run.bins.length % 2) run.open = run.bins[run.bins.length - 1];
    run.bins = out;
    run.binWidth *= 2;
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: 'no-store' });
    if (!r.ok) throw new Error(`${url}: ${r.status} ${(await r.text()).trim()}`);
    return r.json();
  }

  async function pull(run) {
    const path = run.id.split('/').map(encodeURIComponent).join('/');
    for (let round = 0; round < 100; round++) {
      const r = await getJSON(`/api/run/${path}/series?since=${run.cursor}`);
      const generation = r.cursor.split(',')[2];
      if (run.generation !== generation) { clear(run); run.generation = generation; }
      for (const k of Object.keys(run.evals)) run.evals[k].push(...(r.evals[k] || []));
      addUpdates(run, r.updates);
      run.hist = r.staleness_histogram || [];
      run.cursor = r.cursor;
      if (!r.more) break;
    }
  }

  const fmt = (v, digits) => (v == null || Number.isNaN(v) ? '—' : Number(v).toFixed(digits));
  const fmtS = v => (v == null ? '—' : Number(v).toPrecision(4));
  function fmtEta(s) {
    if (s == null) return '—';
    s = Math.round(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? `${h}:${String(m).padStart(2, '0')}` : `${m}`) + `:${String(r).padStart(2, '0')}`;
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  }

  // Run and race as one name: two races may each have an "async".
  const fullLabel = o => (o.race ? `${o.race} / ${o.label}` : o.label);
  // A run with no folder: still to come (pending) or never to come (missing); nothing to draw.
  const folderless = o => ['pending', 'missing'].includes(o.status);
  // A run that ended before its first update never started, whatever ended it (a missing one
  // says so itself).
  const neverStarted = o => o.started === false && o.status !== 'running' && !folderless(o);

  function row(run, showRace) {
    const o = run.overview, st = o.staleness || {};
    const p = o.predicted, spi = o.seconds_per_iteration;
    const ratio = p && p.seconds_per_iteration && spi ? spi / p.seconds_per_iteration : null;
    const g = o.gradients || {};
    const cancelled = o.cancelled_fraction == null ? '—'
      : `${g.cancelled} (${(100 * o.cancelled_fraction).toFixed(1)}%)`;
    const last = run.evals.test_error.length ? run.evals.test_error[run.evals.test_error.length - 1] : null;
    const never = neverStarted(o);
    const progress = o.progress == null || never || o.status === 'missing' ? '—'
      : `<span class="bar"><span style="width:${(100 * o.progress).toFixed(1)}%"></span></span>${(100 * o.progress).toFixed(0)}%`;
    const tr = document.createElement('tr');
    Object.assign(tr.dataset, {
      run: o.id, status: o.status, evals: run.evals.wall_s.length, updates: run.updates,
      iterations: o.iterations == null ? '' : o.iterations, started: String(o.started),
      testError: last == null ? '' : String(last), progress: o.progress == null ? '' : o.progress,
    });
    if (view.hidden.has(o.id)) tr.className = 'off';
    tr.title = o.message || run.problem || '';
    const reason = never ? 'before its first update' : o.stop_reason;
    const status = reason && reason !== o.status ? `${o.status}: ${reason}` : o.status;
    const cells = [
      [`<span class="swatch" style="background:${run.color}"></span>${esc(o.label)}`, 'name'],
      ...(showRace ? [[esc(o.race || '—'), 'race']] : []),
      [`<span class="status ${esc(o.status)}${never ? ' never' : ''}">${esc(status)}</span>`, 'state'],
      [progress, ''], [o.status === 'running' ? fmtEta(o.eta_s) : '—', 'p2'], [fmt(o.wall_s, 2), ''],
      [o.iterations == null ? '—' : o.iterations, ''], [fmt(last, 4), ''], [fmt(o.best_test_error, 4), 'p2'],
      [fmt(o.time_to_target_s, 2), ''], [fmtS(spi), ''],
      [p ? `<span title="${esc(p.method || '')}">${fmtS(p.seconds_per_iteration)}</span>` : '—', 'p2'],
      [fmt(ratio, 3), ''], [`${fmt(st.mean, 2)} / ${fmt(st.p95, 0)} / ${fmt(st.max, 0)}`, ''],
      [cancelled, 'p3'], [o.idle_fraction == null ? '—' : `${(100 * o.idle_fraction).toFixed(1)}%`, 'p3'],
    ];
    tr.innerHTML = cells.map(([c, cls]) => `<td${cls ? ` class="${cls}"` : ''}>${c}</td>`).join('');
    tr.querySelector('td.name').title = fullLabel(o);
    return tr;
  }

  // One line where the table would be: no runs yet, or none that the filters let through.
  function emptyState(all, shown) {
    const empty = document.getElementById('empty');
    let text = '';
    if (!all.length) {
      text = `No runs in ${root} yet: a run shows here once stalesgd train --out or race --out writes its first file.`;
    } else if (!shown.length) {
      const what = [view.race && `race ${view.race}`, view.rule && `rule ${view.rule}`,
        view.status && `status ${view.status}`, view.text.trim() && `"${view.text.trim()}"`].filter(Boolean);
      text = `No run of ${all.length} matches ${what.join(', ')}: change or clear the filters.`;
    }
    empty.textContent = text;
    empty.hidden = !text;
    document.getElementById('runs').hidden = !shown.length;
    document.getElementById('charts').hidden = !shown.length;
    document.body.dataset.empty = text ? (all.length ? 'filtered' : 'no-runs') : '';
  }

  function render() {
    const { matches, fillSelect, toggle } = window.StaleView;
    const all = order.map(id => runs.get(id));
    fillSelect(document.getElementById('f-race'), 'all races', all.map(r => r.overview.race), view.race);
    fillSelect(document.getElementById('f-rule'), 'all rules', all.map(r => r.overview.rule), view.rule);
    fillSelect(document.getElementById('f-status'), 'any status', all.map(r => r.overview.status), view.status);
    const shown = all.filter(r => matches(r.overview));
    document.getElementById('matched').textContent =
      window.StaleView.filtering() ? `${shown.length} of ${all.length} runs` : `${all.length} runs`;
    const showRace = all.some(r => r.overview.race);
    document.getElementById('runs').classList.toggle('with-race', showRace);
    const tbody = document.querySelector('#runs tbody');
    tbody.replaceChildren(...shown.map(run => row(run, showRace)));
    emptyState(all, shown);
    const legend = document.getElementById('legend');
    legend.replaceChildren(...shown.map(run => {
      const item = document.createElement('button');
      item.type = 'button';
      item.className = view.hidden.has(run.id) ? 'item off' : 'item';
      item.dataset.run = run.id;
      item.title = 'click: hide or show; double-click: this run alone (again: all)';
      item.innerHTML = `<span class="swatch" style="background:${run.color}"></span>${esc(fullLabel(run.overview))}`;
      const ids = shown.map(r => r.id);
      item.addEventListener('click', e => {
        if (e.detail > 1) return;  // the double click's own clicks
        toggle(run.id, false, ids);
        render();
      });
      item.addEventListener('dblclick', () => { toggle(run.id, true, ids); render(); });
      return item;
    }));
    const table = document.getElementById('table-box');
    document.body.dataset.tableOverflow = String(table.scrollWidth > table.clientWidth + 1);
    if (!window.StaleCharts.available()) return;
    const drawable = shown.filter(r => !folderless(r.overview) && !view.hidden.has(r.id));
    window.StaleCharts.draw(drawable, groups, view);
  }

  async function poll() {
    try {
      const list = await getJSON('/api/runs');
      root = list.root;
      document.getElementById('root').textContent = `${list.root} (${list.kind})`;
      const notice = document.getElementById('notice');
      notice.hidden = list.chart_library && window.StaleCharts.available();
      notice.textContent = 'The chart library (uPlot) is not fetched: run tools/setup.sh serve (npm pack uplot into data/web/uplot/), then reload.';
      groups = list.groups;
      const groupIndex = new Map(groups.map((g, i) => [g.name, i]));
      order = list.runs.map(o => o.id);
      for (const o of list.runs) {
        if (!runs.has(o.id)) runs.set(o.id, newRun(o.id));
        const run = runs.get(o.id);
        const size = (groups[groupIndex.get(o.group)] || { runs: [] }).runs.length;
        Object.assign(run, { overview: o, label: fullLabel(o), group: o.group, inBand: size > 1,
          color: window.StaleView.color(groupIndex.get(o.group) || 0) });
        const seen = JSON.stringify([o.rows, o.status]);
        if (!folderless(o) && seen !== run.pulled) {
          // One run's files going (deleted, replaced) while the page is open is that run's
          // problem, said on its row; the others go on.
          try {
            await pull(run);
            run.pulled = seen;
            run.problem = '';
          } catch (e) {
            run.problem = e.message;
          }
        }
      }
      for (const id of [...runs.keys()]) if (!order.includes(id)) runs.delete(id);
      render();
      polls++;
      document.body.dataset.polls = polls;
      const running = list.runs.filter(o => o.status === 'running').length;
      document.getElementById('state').textContent =
        `${running} running · updated ${new Date().toLocaleTimeString()}`;
    } catch (e) {
      // fetch() throws a TypeError when the server is not there; an HTTP error carries serve's
      // own line (the served folder gone, say).
      document.getElementById('state').textContent = e instanceof TypeError
        ? `cannot reach stalesgd serve (${e.message}); trying again` : e.message;
    }
    setTimeout(poll, POLL_MS);
  }

  window.StaleView.bind(render);
  window.addEventListener('resize', () => render());
  poll();
})();
