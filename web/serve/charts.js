// The charts of `stalesgd serve`'s page, drawn with uPlot: test error and loss against time and
// iteration, mean staleness, seconds per iteration against the theory, the staleness histogram.
// Runs that differ only by seed (one group) may add their mean and min-max band. The reader's
// view (view.js) smooths the snapshots, sets a log y scale and keeps outliers out of the y
// range; hovering a chart lists each run's nearest point. Each chart writes how many points it
// drew per run into #drawn, and the readout its values (the browser test reads both).
'use strict';
window.StaleCharts = (function () {
  const SPECS = [
    { key: 'error-time', title: 'test error against time (s)', x: 'wall_s', y: 'test_error', band: true },
    { key: 'error-iteration', title: 'test error against iteration', x: 'iteration', y: 'test_error', band: true },
    { key: 'loss-time', title: 'test loss against time (s)', x: 'wall_s', y: 'test_loss', band: true },
    { key: 'loss-iteration', title: 'test loss against iteration', x: 'iteration', y: 'test_loss', band: true },
    { key: 'staleness', title: 'mean staleness against iteration (over a tenth of the run)', kind: 'staleness' },
    { key: 'seconds-per-iteration', title: 'seconds per iteration against time (s): measured over a tenth of the run, theory dashed', kind: 'spi' },
    { key: 'staleness-histogram', title: 'share of applied gradients by staleness', kind: 'hist' },
  ];
  const charts = new Map();  // key -> {box, plot, signature, meta, range}
  const READOUT_ROWS = 6;

  function alpha(hex, a) {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${a})`;
  }

  // A run's [xs, ys] for a chart.
  function runSeries(spec, run) {
    if (spec.kind === 'staleness' || spec.kind === 'spi') {
      // Over a window of about a tenth of the bins: smooth, yet a change of pace shows.
      const b = run.binned();
      const m = Math.max(1, Math.round(b.length / 10));
      const xs = [], ys = [];
      let s = 0, w = 0;
      b.forEach((p, k) => {
        s += p.s;
        w += p.w;
        if (k >= m) { s -= b[k - m].s; w -= b[k - m].w; }
        const base = k >= m ? b[k - m] : { i: 0, t: 0 };
        if (spec.kind === 'staleness') {
          if (w > 0) { xs.push(p.i); ys.push(s / w); }
        } else if (p.i > base.i) {
          xs.push(p.t);
          ys.push((p.t - base.t) / (p.i - base.i));
        }
      });
      return [xs, ys];
    }
    return [run.evals[spec.x], run.evals[spec.y]];
  }

  // TensorBoard's smoothing: an exponential moving average, debiased so that it starts at the
  // first point rather than at 0. `weight` 0 leaves the points as they are.
  function smooth(ys, weight) {
    if (!weight) return ys;
    let last = 0, n = 0;
    return ys.map(y => {
      if (y == null || !Number.isFinite(y)) return y;
      last = last * weight + (1 - weight) * y;
      n++;
      return last / (1 - Math.pow(weight, n));
    });
  }

  // The y range, in the log's terms on a log scale. Ignoring outliers, points beyond 3 times the
  // 10th-90th percentile spread past either percentile are left out of it (and counted), so
  // that one diverged run does not flatten the others; the 10-90 spread keeps a curve's own
  // descent, which a tighter fence would clip.
  function yRange(data, meta, log, ignoreOutliers) {
    const values = [];
    meta.forEach((m, i) => {
      if (m.skip) return;
      for (const v of data[i + 1] || []) {
        if (v != null && Number.isFinite(v) && (!log || v > 0)) values.push(log ? Math.log10(v) : v);
      }
    });
    if (!values.length) return null;
    values.sort((a, b) => a - b);
    const at = share => values[Math.floor(share * (values.length - 1))];
    let lo = values[0], hi = values[values.length - 1], clipped = 0;
    const spread = at(0.9) - at(0.1);
    if (ignoreOutliers && values.length >= 10 && spread > 0) {
      const inside = values.filter(v => v >= at(0.1) - 3 * spread && v <= at(0.9) + 3 * spread);
      clipped = values.length - inside.length;
      lo = inside[0];
      hi = inside[inside.length - 1];
    }
    const pad = hi > lo ? 0.05 * (hi - lo) : (log ? 0.1 : Math.abs(hi) * 0.05 || 0.5);
    lo -= pad;
    hi += pad;
    if (!log && values[0] >= 0) lo = Math.max(lo, 0);  // errors, losses, shares: never below 0
    return { range: log ? [10 ** lo, 10 ** hi] : [lo, hi], clipped };
  }

  // Linear interpolation of (xs, ys) (xs ascending) at x.
  function interpolate(xs, ys, x) {
    let lo = 0, hi = xs.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (xs[mid] <= x) lo = mid; else hi = mid;
    }
    if (xs[hi] === xs[lo]) return ys[lo];
    return ys[lo] + (ys[hi] - ys[lo]) * (x - xs[lo]) / (xs[hi] - xs[lo]);
  }

  // Mean, min and max of a group's runs on the union of their xs where every run has data.
  function band(seriesList) {
    const usable = seriesList.filter(([xs, ys]) => xs.length >= 2 && ys.every(v => v != null));
    if (usable.length < 2) return null;
    const lo = Math.max(...usable.map(([xs]) => xs[0]));
    const hi = Math.min(...usable.map(([xs]) => xs[xs.length - 1]));
    if (!(hi > lo)) return null;
    const grid = [...new Set(usable.flatMap(([xs]) => xs.filter(x => x >= lo && x <= hi)))]
      .sort((a, b) => a - b);
    const mean = [], min = [], max = [];
    for (const x of grid) {
      const v = usable.map(([xs, ys]) => interpolate(xs, ys, x));
      mean.push(v.reduce((a, b) => a + b, 0) / v.length);
      min.push(Math.min(...v));
      max.push(Math.max(...v));
    }
    return [grid, mean, min, max];
  }

  function histogramData(runs) {
    const shares = runs.map(run => {
      const total = run.hist.reduce((a, b) => a + b, 0);
      return total > 0 ? run.hist.map(n => n / total) : [];
    });
    const len = Math.max(0, ...shares.map(s => s.length));
    const xs = Array.from({ length: len }, (_, i) => i);
    return [xs, ...shares.map(s => xs.map(i => (i < s.length ? s[i] : s.length ? 0 : null)))];
  }

  // The uPlot data, series options, bands and what #drawn lists, for one chart.
  function build(spec, runs, groups, view) {
    const showBands = view.bands;
    const series = [{}], meta = [], bands = [];
    if (spec.kind === 'hist') {
      const data = histogramData(runs);
      runs.forEach(run => {
        series.push({ label: run.label, stroke: run.color, width: 1.5,
          paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } });
        meta.push({ run: run.id });
      });
      return { data, series, bands, meta };
    }
    const tables = [];
    runs.forEach(run => {
      const [xs, ys] = runSeries(spec, run);
      tables.push([xs, spec.kind ? ys : smooth(ys, view.smooth)]);
      const faded = showBands && spec.band && run.inBand;
      series.push({ label: run.label, stroke: faded ? alpha(run.color, 0.45) : run.color,
        width: faded ? 1 : 1.5, spanGaps: true });
      meta.push({ run: run.id });
    });
    if (spec.kind === 'spi') {
      // The theory's seconds per iteration, over the span of the run's measured curve.
      runs.forEach((run, r) => {
        const p = run.overview.predicted;
        const xs = tables[r][0];
        if (!p || p.seconds_per_iteration == null || xs.length === 0) return;
        tables.push([[xs[0], xs[xs.length - 1]], [p.seconds_per_iteration, p.seconds_per_iteration]]);
        series.push({ label: `${run.label} theory`, stroke: run.color, dash: [6, 4], width: 1,
          spanGaps: true, points: { show: false } });
        meta.push({ theory: run.id });
      });
    }
    if (showBands && spec.band) {
      for (const g of groups) {
        const members = runs.map((run, r) => [run, r]).filter(([run]) => run.group === g.name);
        if (members.length < 2) continue;
        const b = band(members.map(([, r]) => tables[r]));
        if (!b) continue;
        const color = members[0][0].color;
        tables.push([b[0], b[1]], [b[0], b[2]], [b[0], b[3]]);
        const first = series.length;
        const name = members[0][0].label.replace(/ \(seed [0-9]+\)$/, '');
        series.push({ label: `${name} mean`, stroke: color, width: 2.5, spanGaps: true,
          points: { show: false } });
        series.push({ label: `${name} min`, stroke: 'transparent', width: 0, spanGaps: true, points: { show: false } });
        series.push({ label: `${name} max`, stroke: 'transparent', width: 0, spanGaps: true, points: { show: false } });
        bands.push({ series: [first + 2, first + 1], fill: alpha(color, 0.15) });
        meta.push({ group: g.name, runs: members.map(([run]) => run.id) }, { skip: true }, { skip: true });
      }
    }
    const data = tables.length ? uPlot.join(tables) : [[]];
    return { data, series, bands, meta };
  }

  function countPoints(column) {
    let n = 0;
    for (const v of column || []) if (v != null) n++;
    return n;
  }

  // The index of the non-null value of `column` nearest to `idx`; -1 when there is none.
  function nearest(column, idx) {
    for (let d = 0; d < column.length; d++) {
      if (idx - d >= 0 && column[idx - d] != null) return idx - d;
      if (idx + d < column.length && column[idx + d] != null) return idx + d;
    }
    return -1;
  }

  const fmtValue = v => (Math.abs(v) >= 1000 || (v !== 0 && Math.abs(v) < 0.001)
    ? v.toExponential(3) : Number(v.toPrecision(4)).toString());

  // The readout at the cursor: each drawn curve's nearest point (its x and y), those nearest to
  // the cursor's height first.
  function showReadout(entry, u) {
    const box = entry.readout, idx = u.cursor.idx;
    if (idx == null || u.cursor.left == null || u.cursor.left < 0) {
      box.hidden = true;
      return;
    }
    const cursorY = u.posToVal(u.cursor.top, 'y');
    const rows = [];
    entry.meta.forEach((m, i) => {
      if (m.skip) return;
      const column = u.data[i + 1] || [];
      const j = nearest(column, idx);
      if (j < 0) return;
      const s = u.series[i + 1];
      rows.push({ id: m.run || m.theory || m.group, kind: m.run ? 'run' : m.theory ? 'theory' : 'band',
        // uPlot keeps a series' stroke as a function of the plot and the series' index.
        label: s.label, color: typeof s.stroke === 'function' ? s.stroke(u, i + 1) : s.stroke,
        x: u.data[0][j], y: column[j] });
    });
    if (!rows.length) {
      box.hidden = true;
      return;
    }
    rows.sort((a, b) => Math.abs(a.y - cursorY) - Math.abs(b.y - cursorY));
    const xName = entry.xLabel;
    box.dataset.x = u.data[0][idx];
    box.replaceChildren(...rows.slice(0, READOUT_ROWS).map(r => {
      const div = document.createElement('div');
      Object.assign(div.dataset, { run: r.id, kind: r.kind, x: r.x, value: r.y });
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = r.color;
      div.append(swatch, `${r.label}: ${fmtValue(r.y)}`);
      const at = document.createElement('span');
      at.className = 'at';
      at.textContent = ` at ${xName} ${fmtValue(r.x)}`;
      div.append(at);
      return div;
    }));
    if (rows.length > READOUT_ROWS) {
      const more = document.createElement('div');
      more.className = 'more';
      more.textContent = `and ${rows.length - READOUT_ROWS} more`;
      box.append(more);
    }
    box.hidden = false;
    // Beside the cursor, on the side with room, inside the chart's box.
    const over = u.over.getBoundingClientRect(), frame = entry.box.getBoundingClientRect();
    const x = over.left - frame.left + u.cursor.left, y = over.top - frame.top + u.cursor.top;
    const right = frame.width - x >= x;
    const left = right ? x + 14 : x - 14 - box.offsetWidth;
    box.style.left = `${Math.max(0, Math.min(left, frame.width - box.offsetWidth))}px`;
    const top = y < frame.height / 2 ? y + 14 : y - 14 - box.offsetHeight;
    box.style.top = `${Math.max(0, Math.min(top, frame.height - box.offsetHeight))}px`;
  }

  function chartBox(root, spec) {
    const box = document.createElement('div');
    box.className = 'chart';
    box.dataset.chart = spec.key;
    box.innerHTML = `<h2>${spec.title} <span class="clipped"></span></h2><div class="plot"></div><div class="readout" hidden></div>`;
    root.appendChild(box);
    const entry = { box, plot: null, signature: '', meta: [], range: null,
      readout: box.querySelector('.readout'), clipped: box.querySelector('.clipped'),
      xLabel: spec.kind === 'hist' ? 'staleness' : (spec.x === 'wall_s' || spec.kind === 'spi' ? 'time (s)' : 'iteration') };
    // A reader's own hover replaces the one a link asked for.
    box.addEventListener('mousemove', () => window.StaleView.dropHover());
    charts.set(spec.key, entry);
    return entry;
  }

  // A readout where the URL's "chart@fraction" asks for it.
  function applyHover(hover) {
    const [key, fraction] = hover.split('@');
    const entry = charts.get(key);
    if (!entry || !entry.plot || !Number.isFinite(Number(fraction))) return;
    const u = entry.plot;
    u.setCursor({ left: Number(fraction) * u.over.clientWidth, top: u.over.clientHeight / 2 });
  }

  function draw(runs, groups, view) {
    const root = document.getElementById('charts');
    const drawn = [];
    for (const spec of SPECS) {
      const entry = charts.get(spec.key) || chartBox(root, spec);
      const { data, series, bands, meta } = build(spec, runs, groups, view);
      if (view.log) {
        for (let i = 1; i < data.length; i++) data[i] = data[i].map(v => (v != null && v > 0 ? v : null));
      }
      const yr = yRange(data, meta, view.log, view.outliers && spec.kind !== 'hist');
      entry.range = yr && yr.range;
      entry.meta = meta;
      entry.clipped.textContent = yr && yr.clipped
        ? `(${yr.clipped} point${yr.clipped > 1 ? 's' : ''} off the y range: outliers ignored)` : '';
      entry.box.dataset.clipped = yr ? yr.clipped : 0;
      entry.box.dataset.scale = view.log ? 'log' : 'linear';
      const width = Math.max(300, entry.box.clientWidth - 12);
      const signature = JSON.stringify([series.map(s => [s.label, s.stroke]), bands, width, view.log]);
      if (!entry.plot || signature !== entry.signature) {
        if (entry.plot) entry.plot.destroy();
        const opts = {
          width, height: 240, legend: { show: false }, bands,
          scales: {
            x: { time: false },
            y: { distr: view.log ? 3 : 1, log: 10,
              range: (u, min, max) => entry.range || (min < max ? [min, max] : [0, 1]) },
          },
          axes: [{ label: entry.xLabel }, { size: 60 }],
          hooks: { setCursor: [u => showReadout(entry, u)] },
          series,
        };
        entry.plot = new uPlot(opts, data, entry.box.querySelector('.plot'));
        entry.signature = signature;
      } else {
        entry.plot.setData(data);
      }
      let total = 0;
      meta.forEach((m, i) => {
        if (m.skip) return;
        const points = countPoints(data[i + 1]);
        total += points;
        drawn.push({ chart: spec.key, ...m, points });
      });
      entry.box.dataset.points = total;
    }
    if (view.hover) applyHover(view.hover);
    const list = document.getElementById('drawn');
    list.innerHTML = '';
    for (const d of drawn) {
      const li = document.createElement('li');
      li.dataset.chart = d.chart;
      if (d.run) li.dataset.run = d.run;
      if (d.theory) li.dataset.theory = d.theory;
      if (d.group) { li.dataset.group = d.group; li.dataset.runs = d.runs.join(' '); }
      li.dataset.points = d.points;
      list.appendChild(li);
    }
  }

  return { draw, available: () => typeof uPlot !== 'undefined' };
})();
