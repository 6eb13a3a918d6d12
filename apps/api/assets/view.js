/*
 * The view's one script, served under a content-hashed name (see src/view/assets.ts) so the pages'
 * Content-Security-Policy can forbid inline code. Pages read fully without it; it only adds:
 * - live updates: while <main data-live="…/status.json"> is set, polls that JSON, updates chips,
 *   counters, summaries and durations in place, and swaps in the final page once it is terminal;
 * - a passed test's steps, fetched when its <details data-fragment="…"> is first opened.
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
      var el = document.querySelector('[data-count="' + k + '"]');
      if (!el) return;
      el.textContent = String(counts[k]);
      var li = el.parentElement;
      if (li && k !== 'total') li.classList.toggle('zero', counts[k] === 0);
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
    s.runs.forEach(applyRun);
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

  function wire(root) {
    root.querySelectorAll('details[data-fragment]').forEach(function (d) {
      d.addEventListener('toggle', function () {
        if (!d.open || d.getAttribute('data-loaded')) return;
        d.setAttribute('data-loaded', '1');
        var slot = d.querySelector('.lazy');
        getOk(d.getAttribute('data-fragment'), { credentials: 'same-origin' }, function (r) {
          return r.text();
        })
          .then(function (h) {
            if (slot) slot.innerHTML = h;
          })
          .catch(function () {
            d.removeAttribute('data-loaded');
          });
      });
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    var main = document.querySelector('main');
    if (!main) return;
    wire(main);
    if (main.hasAttribute('data-live')) poll(main);
  });
})();
