// The charts of `stalesgd serve`'s page, drawn with uPlot: test error and loss against time and
// iteration, mean staleness, seconds per iteration against the theory, the staleness histogram.
// Runs that differ only by seed (one group) may add their mean and min-max band. Each chart
// writes how many points it drew per run into #drawn (the browser test reads it).
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
  const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
    '#17becf', '#7f7f7f', '#bcbd22'];
  const charts = new Map();  // key -> {plot, signature, width}

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
  function build(spec, runs, groups, showBands) {
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
      tables.push([xs, ys]);
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
        series.push({ label: `${g.name} mean`, stroke: color, width: 2.5, spanGaps: true,
          points: { show: false } });
        series.push({ label: `${g.name} min`, stroke: 'transparent', width: 0, spanGaps: true, points: { show: false } });
        series.push({ label: `${g.name} max`, stroke: 'transparent', width: 0, spanGaps: true, points: { show: false } });
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

  function draw(runs, groups, showBands) {
    const root = document.getElementById('charts');
    const drawn = [];
    for (const spec of SPECS) {
      let entry = charts.get(spec.key);
      if (!entry) {
        const box = document.createElement('div');
        box.className = 'chart';
        box.dataset.chart = spec.key;
        box.innerHTML = `<h2>${spec.title}</h2><div class="plot"></div>`;
        root.appendChild(box);
        entry = { box, plot: null, signature: '' };
        charts.set(spec.key, entry);
      }
      const { data, series, bands, meta } = build(spec, runs, groups, showBands);
      const width = Math.max(300, entry.box.clientWidth - 12);
      const signature = JSON.stringify([series.map(s => [s.label, s.stroke]), bands, width]);
      if (!entry.plot || signature !== entry.signature) {
        if (entry.plot) entry.plot.destroy();
        const opts = {
          width, height: 240, legend: { show: false }, bands,
          scales: { x: { time: false } },
          axes: [{ label: spec.kind === 'hist' ? 'staleness' : (spec.x === 'wall_s' || spec.kind === 'spi' ? 'time (s)' : 'iteration') },
                 { size: 60 }],
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

  return { draw, palette: PALETTE, available: () => typeof uPlot !== 'undefined' };
})();
