// What the reader of `stalesgd serve`'s page chose to see (docs/serve.md, "The page"): the
// filters (race, rule, status, a text match), the runs hidden from the legend, the y scale
// (log, outliers ignored), smoothing and seed bands. Kept in the page's URL, so that a view can
// be reloaded and shared; app.js applies it, charts.js draws with it.
'use strict';
window.StaleView = (function () {
  const params = new URLSearchParams(location.search);
  const view = {
    race: params.get('race') || '',
    rule: params.get('rule') || '',
    status: params.get('status') || '',
    text: params.get('q') || '',
    hidden: new Set((params.get('hide') || '').split(',').filter(Boolean)),
    log: params.get('log') === '1',
    outliers: params.get('outliers') !== '0',  // ignore them in the y range
    smooth: Math.min(0.99, Math.max(0, Number(params.get('smooth')) || 0)),
    bands: params.get('bands') !== '0',
    // "chart@fraction": a readout at that share of the chart's width, as a hover gives (a link
    // that points at a moment; the browser test's screenshot), until the mouse moves.
    hover: params.get('hover') || '',
  };

  function save() {
    const p = new URLSearchParams();
    if (view.race) p.set('race', view.race);
    if (view.rule) p.set('rule', view.rule);
    if (view.status) p.set('status', view.status);
    if (view.text) p.set('q', view.text);
    if (view.hidden.size) p.set('hide', [...view.hidden].join(','));
    if (view.log) p.set('log', '1');
    if (!view.outliers) p.set('outliers', '0');
    if (view.smooth) p.set('smooth', String(view.smooth));
    if (!view.bands) p.set('bands', '0');
    if (view.hover) p.set('hover', view.hover);
    const query = p.toString();
    history.replaceState(null, '', query ? `?${query}` : location.pathname);
  }

  // The text a run is matched against: every word typed must occur in it (any case).
  function haystack(o) {
    return [o.race, o.label, o.id, o.rule, o.k == null ? '' : `k=${o.k}`, o.delay, o.model,
      o.clock, o.status, o.stop_reason].filter(v => v != null).join(' ').toLowerCase();
  }

  function matches(o) {
    if (view.race && (o.race || '') !== view.race) return false;
    if (view.rule && (o.rule || '') !== view.rule) return false;
    if (view.status && o.status !== view.status) return false;
    const words = view.text.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return true;
    const text = haystack(o);
    return words.every(w => text.includes(w));
  }

  function filtering() {
    return Boolean(view.race || view.rule || view.status || view.text.trim());
  }

  // A select's options: "" (any) and the values the runs have, keeping the chosen one listed
  // even when no run has it any more (the filter then matches nothing, and says so).
  function fillSelect(select, anyLabel, values, chosen) {
    const all = [...new Set(values.filter(v => v != null && v !== ''))].sort();
    if (chosen && !all.includes(chosen)) all.push(chosen);
    const wanted = JSON.stringify(all);
    if (select.dataset.options !== wanted) {
      select.replaceChildren(new Option(anyLabel, ''), ...all.map(v => new Option(v, v)));
      select.dataset.options = wanted;
    }
    select.value = chosen;
    select.hidden = all.length < 2 && !chosen;
  }

  // Distinct colours for any number of groups: Tableau's ten, then hues a golden angle apart at
  // two lightnesses.
  const TABLEAU = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
    '#17becf', '#7f7f7f', '#bcbd22'];
  function color(i) {
    if (i < TABLEAU.length) return TABLEAU[i];
    const h = ((i - TABLEAU.length) * 137.508 + 20) % 360;
    const l = (i % 2 ? 0.36 : 0.5), s = 0.65;
    const f = n => {
      const k = (n + h / 30) % 12;
      const c = l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
      return Math.round(255 * c).toString(16).padStart(2, '0');
    };
    return `#${f(0)}${f(8)}${f(4)}`;
  }

  // Wires the controls to the view; `changed` redraws.
  function bind(changed) {
    const on = (id, event, apply) => document.getElementById(id).addEventListener(event, e => {
      apply(e.target);
      save();
      changed();
    });
    on('f-race', 'change', t => { view.race = t.value; });
    on('f-rule', 'change', t => { view.rule = t.value; });
    on('f-status', 'change', t => { view.status = t.value; });
    on('f-text', 'input', t => { view.text = t.value; });
    on('f-clear', 'click', () => {
      Object.assign(view, { race: '', rule: '', status: '', text: '' });
      document.getElementById('f-text').value = '';
    });
    on('bands', 'change', t => { view.bands = t.checked; });
    on('log', 'change', t => { view.log = t.checked; });
    on('outliers', 'change', t => { view.outliers = t.checked; });
    const smoothed = () => { document.getElementById('smooth-value').textContent = view.smooth.toFixed(2); };
    on('smooth', 'input', t => { view.smooth = Number(t.value); smoothed(); });
    document.getElementById('f-text').value = view.text;
    document.getElementById('bands').checked = view.bands;
    document.getElementById('log').checked = view.log;
    document.getElementById('outliers').checked = view.outliers;
    document.getElementById('smooth').value = view.smooth;
    smoothed();
  }

  // A legend click hides or shows a run; a double click shows it alone (or all again).
  function toggle(id, alone, ids) {
    if (alone) {
      const soloed = ids.every(other => other === id || view.hidden.has(other));
      view.hidden = soloed ? new Set() : new Set(ids.filter(other => other !== id));
    } else if (view.hidden.has(id)) {
      view.hidden.delete(id);
    } else {
      view.hidden.add(id);
    }
    save();
  }

  // The hover from the URL is the reader's until the mouse first moves over a chart.
  function dropHover() {
    if (!view.hover) return;
    view.hover = '';
    save();
  }

  return { view, matches, filtering, fillSelect, color, bind, toggle, dropHover };
})();
