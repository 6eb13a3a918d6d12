/*
 * The view's one script, served under a content-hashed name (see src/view/assets.ts) so the pages'
 * Content-Security-Policy can forbid inline code. Pages read fully without it; it only adds:
 * - live updates: while <main data-live="…/status.json"> is set, polls that JSON, updates chips,
 *   counters, summaries, durations and the time in the queue in place, and swaps in the final page
 *   once it is terminal;
 * - a passed test's steps, fetched from its run page's `/fragment` when its <details data-fragment>
 *   is first opened;
 * - a retried run's attempts as tabs;
 * - the suite page's search and status chips: they narrow the list at once and keep the filter in
 *   the URL (`?status=failed&q=…`), which the server renders the same way on a reload. The search
 *   text of every test (steps included) is fetched once, when someone first types;
 * - a full-size viewer of the screenshots (see wireViewer);
 * - a Playwright run's hooks and fixtures folded in its step table, as Playwright's report folds
 *   them (see wireFolds);
 * - a changed screenshot's comparison slider (see wireSliders).
 * Durations arrive already formatted (`durationText`): the server owns that rule.
 */
(function () {
  'use strict';

  var STATUSES = ['queued', 'running', 'passed', 'failed', 'error', 'skipped'];
  var SEGMENTS = ['passed', 'failed', 'error', 'skipped', 'running', 'queued'];
  var POLL_MS = 2000;
  var MAX_BACKOFF_MS = 30000;

  function setChip(el, status) {
    if (!el) return;
    STATUSES.forEach(function (s) {
      el.classList.remove('chip-' + s);
    });
    el.classList.add('chip-' + status);
    el.textContent = status;
  }

  function note(text) {
    var n = document.getElementById('live-note');
    if (n) n.textContent = text;
  }

  function getOk(url, options, read) {
    return fetch(url, options).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return read(r);
    });
  }

  function applyCounts(counts) {
    Object.keys(counts).forEach(function (k) {
      document.querySelectorAll('[data-count="' + k + '"], [data-chip-count="' + k + '"]').forEach(function (el) {
        el.textContent = String(counts[k]);
        var li = el.parentElement;
        if (li && li.classList.contains('counter') && k !== 'total') li.classList.toggle('zero', counts[k] === 0);
      });
    });
    var total = counts.total || 0;
    var x = 0;
    SEGMENTS.forEach(function (k) {
      var rect = document.querySelector('[data-segment="' + k + '"]');
      if (!rect) return;
      var w = total ? (counts[k] / total) * 100 : 0;
      rect.setAttribute('x', x.toFixed(2));
      rect.setAttribute('width', w.toFixed(2));
      x += w;
    });
  }

  function applyRun(r) {
    document.querySelectorAll('[data-run="' + r.id + '"]').forEach(function (el) {
      if (el.hasAttribute('data-status')) {
        el.setAttribute('data-status', r.status);
        el.toggleAttribute('data-flaky', r.flaky);
      }
      setChip(el.querySelector('[data-run-status]') || document.querySelector('[data-run-status]'), r.status);
      var sum = el.querySelector('[data-run-summary]');
      // Keep the skip reason's <code> that may follow the summary's text.
      if (sum && sum.firstChild && sum.firstChild.nodeType === Node.TEXT_NODE)
        sum.firstChild.nodeValue = r.resultSummary;
      else if (sum) sum.textContent = r.resultSummary;
      var d = el.querySelector('[data-run-duration]') || document.querySelector('[data-run-duration]');
      if (d) d.textContent = r.durationText;
    });
  }

  function apply(s) {
    setChip(document.querySelector('[data-live-status]'), s.status);
    if (s.counts) applyCounts(s.counts);
    var wait = document.querySelector('[data-queue-wait]');
    if (wait && s.queueWaitText) wait.textContent = s.queueWaitText;
    s.runs.forEach(applyRun);
    if (filters) filters.apply();
  }

  /* The suite page's filter: state from the URL, applied to the list items, written back to the URL. */
  var filters = null;

  function readFilter() {
    var params = new URLSearchParams(location.search);
    return { status: params.get('status') || 'all', q: (params.get('q') || '').trim() };
  }

  function writeFilter(f) {
    var params = new URLSearchParams(location.search);
    if (f.status === 'all') params.delete('status');
    else params.set('status', f.status);
    if (f.q) params.set('q', f.q);
    else params.delete('q');
    var query = params.toString();
    history.replaceState(null, '', location.pathname + (query ? '?' + query : ''));
  }

  function wireFilters(main) {
    var bar = main.querySelector('.filters');
    if (!bar) return null;
    var input = bar.querySelector('input[type="search"]');
    var note = bar.querySelector('#filter-note');
    var noMatch = main.querySelector('.no-match');
    var state = readFilter();
    var texts = null;
    var loading = false;

    function textOf(li) {
      var id = li.getAttribute('data-run');
      return texts && texts[id] !== undefined ? texts[id] : li.textContent.toLowerCase();
    }

    function loadTexts() {
      if (texts || loading) return;
      loading = true;
      getOk(input.getAttribute('data-search-index'), { credentials: 'same-origin' }, function (r) {
        return r.json();
      })
        .then(function (body) {
          texts = body.runs;
          applyFilter();
        })
        .catch(function () {
          loading = false;
        });
    }

    function applyFilter() {
      var q = state.q.toLowerCase();
      var shown = 0;
      var total = 0;
      main.querySelectorAll('li.test').forEach(function (li) {
        total += 1;
        var ok =
          (state.status === 'all' ||
            (state.status === 'flaky'
              ? li.hasAttribute('data-flaky')
              : li.getAttribute('data-status') === state.status)) &&
          (q === '' || textOf(li).indexOf(q) !== -1);
        li.hidden = !ok;
        if (ok) shown += 1;
      });
      main.querySelectorAll('section.group').forEach(function (g) {
        var visible = g.querySelector('li.test:not([hidden])');
        g.hidden = !visible;
        var d = g.querySelector('details.group-details');
        if (d && visible && (state.status !== 'all' || q !== '')) d.open = true;
      });
      bar.querySelectorAll('[data-filter]').forEach(function (a) {
        if (a.getAttribute('data-filter') === state.status) a.setAttribute('aria-current', 'true');
        else a.removeAttribute('aria-current');
        var params = new URLSearchParams();
        var s = a.getAttribute('data-filter');
        if (s !== 'all') params.set('status', s);
        if (state.q) params.set('q', state.q);
        a.setAttribute('href', '?' + params.toString());
      });
      var narrowed = state.status !== 'all' || q !== '';
      if (note) note.textContent = narrowed ? 'Showing ' + shown + ' of ' + total + ' tests.' : '';
      if (noMatch) noMatch.hidden = !(narrowed && shown === 0);
    }

    function choose(status) {
      state.status = status;
      applyFilter();
      writeFilter(state);
    }

    main.querySelectorAll('[data-filter]').forEach(function (a) {
      a.addEventListener('click', function (e) {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        if (a.closest('.no-match')) {
          state.q = '';
          if (input) input.value = '';
        }
        choose(a.getAttribute('data-filter'));
      });
    });

    var timer = null;
    if (input) {
      input.addEventListener('focus', loadTexts);
      input.addEventListener('input', function () {
        loadTexts();
        clearTimeout(timer);
        timer = setTimeout(function () {
          state.q = input.value.trim();
          applyFilter();
          writeFilter(state);
        }, 120);
      });
      input.addEventListener('keydown', function (e) {
        if (e.key === 'Enter') e.preventDefault();
      });
      if (state.q) loadTexts();
    }
    return { apply: applyFilter };
  }

  /*
   * A retried run's attempts as tabs (WAI-ARIA tabs with manual activation): the server renders a
   * list of links to panels that all show; this keeps one panel showing, follows the URL's
   * #attempt-N, and moves between tabs with the arrow keys, Home and End.
   */
  function wireTabs(root) {
    root.querySelectorAll('[data-tabs]').forEach(function (list) {
      var tabs = Array.prototype.slice.call(list.querySelectorAll('[data-tab]'));
      var panelOf = function (tab) {
        return document.getElementById(tab.getAttribute('data-tab'));
      };
      list.setAttribute('role', 'tablist');
      list.setAttribute('aria-label', 'Attempts');
      tabs.forEach(function (tab) {
        tab.parentElement.setAttribute('role', 'presentation');
        tab.setAttribute('role', 'tab');
        tab.setAttribute('aria-controls', tab.getAttribute('data-tab'));
        var panel = panelOf(tab);
        if (panel) {
          panel.setAttribute('role', 'tabpanel');
          panel.setAttribute('aria-labelledby', tab.id);
          panel.setAttribute('tabindex', '0');
        }
      });
      function select(chosen, focus) {
        tabs.forEach(function (tab) {
          var on = tab === chosen;
          tab.setAttribute('aria-selected', on ? 'true' : 'false');
          tab.setAttribute('tabindex', on ? '0' : '-1');
          if (on) tab.setAttribute('aria-current', 'true');
          else tab.removeAttribute('aria-current');
          var panel = panelOf(tab);
          if (panel) panel.hidden = !on;
        });
        if (focus) chosen.focus();
      }
      var fromHash = tabs.filter(function (tab) {
        return '#' + tab.getAttribute('data-tab') === location.hash;
      })[0];
      var current = tabs.filter(function (tab) {
        return tab.getAttribute('aria-current') === 'true';
      })[0];
      select(fromHash || current || tabs[tabs.length - 1], false);
      tabs.forEach(function (tab, i) {
        tab.addEventListener('click', function (e) {
          if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          select(tab, false);
          history.replaceState(null, '', tab.getAttribute('href'));
        });
        tab.addEventListener('keydown', function (e) {
          var next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
          if (next === undefined) return;
          e.preventDefault();
          var to = tabs[(next + tabs.length) % tabs.length];
          select(to, true);
          history.replaceState(null, '', to.getAttribute('href'));
        });
      });
    });
  }

  function openIds(main) {
    var ids = [];
    main.querySelectorAll('details[id][open]').forEach(function (d) {
      ids.push(d.id);
    });
    return ids;
  }

  function finish(main) {
    getOk(location.href, { cache: 'no-store', credentials: 'same-origin' }, function (r) {
      return r.text();
    })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, 'text/html');
        var next = doc.querySelector('main');
        if (!next) return;
        var wasOpen = openIds(main);
        main.innerHTML = next.innerHTML;
        main.removeAttribute('data-live');
        document.title = doc.title;
        wasOpen.forEach(function (id) {
          var d = document.getElementById(id);
          if (d) d.open = true;
        });
        wire(main);
        wireTabs(main);
        filters = wireFilters(main);
        var chip = document.querySelector('[data-live-status]');
        note('Finished: ' + (chip ? chip.textContent : ''));
      })
      .catch(function () {
        note('Finished. Reload the page to see the final result.');
      });
  }

  function poll(main) {
    var url = main.getAttribute('data-live');
    var delay = POLL_MS;
    function tick() {
      var options = { cache: 'no-store', credentials: 'same-origin', headers: { accept: 'application/json' } };
      getOk(url, options, function (r) {
        return r.json();
      })
        .then(function (s) {
          apply(s);
          delay = POLL_MS;
          if (s.terminal) finish(main);
          else setTimeout(tick, delay);
        })
        .catch(function () {
          delay = Math.min(delay * 2, MAX_BACKOFF_MS);
          note('Live updates paused; retrying.');
          setTimeout(tick, delay);
        });
    }
    setTimeout(tick, delay);
  }

  /*
   * The step table's folds. The server marks each hook or fixture row that has steps inside with
   * data-fold ("open" when the failing path goes through it, else "closed") and every step row
   * with its data-depth; the rows inside a fold are the rows after it that are deeper (an error row
   * goes with its step). Without this script every row shows.
   */
  function setFold(row, open) {
    var button = row.querySelector('button.fold');
    if (button) button.setAttribute('aria-expanded', String(open));
    row.setAttribute('data-fold', open ? 'open' : 'closed');
    var depth = Number(row.getAttribute('data-depth'));
    var closedAt = null;
    for (var r = row.nextElementSibling; r; r = r.nextElementSibling) {
      var d = r.hasAttribute('data-depth') ? Number(r.getAttribute('data-depth')) : null;
      if (d !== null && d <= depth) break;
      if (d !== null && closedAt !== null && d <= closedAt) closedAt = null;
      r.hidden = !open || closedAt !== null;
      if (open && d !== null && closedAt === null && r.getAttribute('data-fold') === 'closed') closedAt = d;
    }
  }

  function wireFolds(root) {
    root.querySelectorAll('table.steps tr[data-fold]').forEach(function (row) {
      var button = row.querySelector('button.fold');
      if (!button || row.getAttribute('data-folds-wired')) return;
      row.setAttribute('data-folds-wired', '1');
      button.hidden = false;
      button.addEventListener('click', function () {
        setFold(row, button.getAttribute('aria-expanded') !== 'true');
      });
      setFold(row, row.getAttribute('data-fold') === 'open');
    });
  }

  /*
   * A changed screenshot's comparison: the expected image under the actual one, a range input moving
   * the line between them (the actual image shows right of it). The server renders it hidden; without
   * this script the images side by side are the comparison.
   */
  function wireSliders(root) {
    root.querySelectorAll('[data-visual-slider]').forEach(function (slider) {
      var range = slider.querySelector('[data-visual-range]');
      var over = slider.querySelector('.visual-over');
      var line = slider.querySelector('.visual-slider-line');
      if (!range || !over) return;
      function update() {
        var at = Math.min(100, Math.max(0, Number(range.value) || 0));
        over.style.clipPath = 'inset(0 0 0 ' + at + '%)';
        if (line) line.style.left = at + '%';
        range.setAttribute('aria-valuetext', at + '% expected, ' + (100 - at) + '% actual');
      }
      range.addEventListener('input', update);
      update();
      slider.hidden = false;
    });
  }

  function wire(root) {
    wireFolds(root);
    wireSliders(root);
    root.querySelectorAll('details[data-fragment]').forEach(function (d) {
      d.addEventListener('toggle', function () {
        if (!d.open || d.getAttribute('data-loaded')) return;
        d.setAttribute('data-loaded', '1');
        var slot = d.querySelector('.lazy');
        var page = d.querySelector('.run-link a');
        if (!page) return;
        getOk(page.getAttribute('href') + '/fragment', { credentials: 'same-origin' }, function (r) {
          return r.text();
        })
          .then(function (h) {
            if (!slot) return;
            slot.innerHTML = h;
            wireFolds(slot);
          })
          .catch(function () {
            d.removeAttribute('data-loaded');
          });
      });
    });
  }

  /*
   * The full-size screenshot viewer. Every screenshot thumbnail is a link to the image (that is all
   * it does without this script) and carries, rendered by the server, `data-viewer` (its sequence:
   * one per run and test attempt), `data-viewer-order` (its place there: the failure's screenshot
   * first, then step order), `data-viewer-title` and `data-viewer-caption`. Selecting one opens a
   * modal <dialog> at that screenshot; Previous/Next and the arrow keys step through the sequence
   * (wrapping around), Esc closes it and focus goes back to the thumbnail. The sequence is read from
   * the page when it opens, so steps loaded in place and pages swapped in by live updates join in.
   */
  function wireViewer() {
    var dialog = null;
    var parts = {};
    var items = [];
    var at = 0;
    var opener = null;

    function el(tag, className, text) {
      var e = document.createElement(tag);
      if (className) e.className = className;
      if (text) e.textContent = text;
      return e;
    }

    function button(className, label, arrow, arrowFirst) {
      var b = el('button', className);
      b.type = 'button';
      var a = el('span', 'viewer-arrow', arrow);
      a.setAttribute('aria-hidden', 'true');
      if (arrowFirst) b.append(a, ' ' + label);
      else b.append(label + ' ', a);
      return b;
    }

    function build() {
      dialog = el('dialog', 'viewer');
      dialog.setAttribute('aria-labelledby', 'viewer-title');
      dialog.setAttribute('aria-describedby', 'viewer-caption');
      var head = el('div', 'viewer-head');
      parts.title = el('h2', 'viewer-title');
      parts.title.id = 'viewer-title';
      parts.pos = el('p', 'viewer-pos');
      parts.pos.setAttribute('aria-live', 'polite');
      parts.open = el('a', 'viewer-open', 'Open the image in a new tab');
      parts.open.target = '_blank';
      parts.open.rel = 'noopener noreferrer';
      parts.close = el('button', 'viewer-close', 'Close');
      parts.close.type = 'button';
      head.append(parts.title, parts.pos, parts.open, parts.close);
      var figure = el('figure', 'viewer-figure');
      parts.img = el('img', 'viewer-img');
      parts.img.alt = '';
      parts.caption = el('figcaption', 'viewer-caption');
      parts.caption.id = 'viewer-caption';
      figure.append(parts.img, parts.caption);
      parts.nav = el('div', 'viewer-nav');
      parts.prev = button('viewer-prev', 'Previous', '←', true);
      parts.next = button('viewer-next', 'Next', '→', false);
      parts.nav.append(parts.prev, parts.next);
      dialog.append(head, figure, parts.nav);
      document.body.append(dialog);

      parts.prev.addEventListener('click', function () {
        step(-1);
      });
      parts.next.addEventListener('click', function () {
        step(1);
      });
      parts.close.addEventListener('click', function () {
        dialog.close();
      });
      dialog.addEventListener('keydown', function (e) {
        if (e.altKey || e.ctrlKey || e.metaKey) return;
        if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
          e.preventDefault();
          step(e.key === 'ArrowLeft' ? -1 : 1);
        }
      });
      // A click on the backdrop (the dialog box itself, outside its content) closes it too.
      dialog.addEventListener('click', function (e) {
        if (e.target === dialog) dialog.close();
      });
      dialog.addEventListener('close', function () {
        if (opener && opener.isConnected) opener.focus();
        opener = null;
      });
    }

    /** The thumbnails of one sequence, one per screenshot, in the viewer's order. */
    function sequence(key) {
      var seen = {};
      var list = [];
      document.querySelectorAll('a[data-viewer]').forEach(function (a) {
        var order = a.getAttribute('data-viewer-order');
        if (a.getAttribute('data-viewer') !== key || seen[order]) return;
        seen[order] = true;
        list.push(a);
      });
      return list.sort(function (x, y) {
        return Number(x.getAttribute('data-viewer-order')) - Number(y.getAttribute('data-viewer-order'));
      });
    }

    function show(i) {
      at = (i + items.length) % items.length;
      var a = items[at];
      var href = a.getAttribute('href');
      var thumb = a.querySelector('img');
      parts.img.src = href;
      parts.img.alt = thumb ? thumb.alt : '';
      parts.open.href = href;
      parts.title.textContent = 'Screenshots of ' + a.getAttribute('data-viewer-title');
      parts.caption.textContent = a.getAttribute('data-viewer-caption');
      parts.pos.textContent = at + 1 + ' of ' + items.length;
    }

    function step(by) {
      if (items.length > 1) show(at + by);
    }

    function open(a) {
      if (!dialog || !dialog.isConnected) build();
      items = sequence(a.getAttribute('data-viewer'));
      var order = a.getAttribute('data-viewer-order');
      var i = items.findIndex(function (x) {
        return x.getAttribute('data-viewer-order') === order;
      });
      opener = a;
      parts.nav.hidden = items.length < 2;
      show(Math.max(i, 0));
      dialog.showModal();
      (items.length > 1 ? parts.next : parts.close).focus();
    }

    document.addEventListener('click', function (e) {
      var a = e.target instanceof Element ? e.target.closest('a[data-viewer]') : null;
      if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      if (typeof HTMLDialogElement !== 'function') return;
      e.preventDefault();
      open(a);
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    var main = document.querySelector('main');
    if (!main) return;
    wireViewer();
    wire(main);
    wireTabs(main);
    filters = wireFilters(main);
    if (main.hasAttribute('data-live')) poll(main);
    // When the page became interactive, in ms since navigation began (read by bench/view-render.ts).
    main.setAttribute('data-ready', String(Math.round(performance.now())));
  });
})();
