// Live updates without reloading: every few seconds (the page's
// data-live-ms) the script asks for the same URL again with the live
// header, gets the page's live region back as HTML and swaps it in,
// keeping keyboard focus, open <details>, what was typed into a field
// (a decision's comment) and how far a table's frame or a payload was
// scrolled where they were, and waiting while text in it is selected. Short
// polling, not server-sent events, so it works the same behind a Lambda
// Function URL (which buffers responses) as under `workhorse serve`. A
// button pauses it (and it rests while the tab is hidden). Plain browser
// JavaScript kept as text: no backtick, no dollar-brace.
export const LIVE_SCRIPT = String.raw`
function startLive() {
  var live = document.getElementById('live');
  var bar = document.getElementById('live-bar');
  if (!live || !bar) return;
  var status = document.getElementById('live-status');
  var toggle = document.getElementById('live-toggle');
  var every = Number(live.getAttribute('data-live-ms')) || 2000;
  var paused = false, timer = 0, busy = false, last = null;
  bar.hidden = false;
  function say(text) { status.textContent = text; }
  function schedule() {
    clearTimeout(timer);
    if (!paused && !document.hidden) timer = setTimeout(refresh, every);
  }
  // What can hold focus, and what scrolls on its own (a wide table's frame, a long payload or stack).
  var FOCUSABLE = 'a[href], button, summary, input, textarea, select, [tabindex]';
  var SCROLLS = '.table-wrap, pre';
  // An element without an id is found again by what it is and says (a link by its address and text), else
  // by its place among the focusable elements.
  function keyOf(el) { return el.tagName + '|' + (el.getAttribute('href') || '') + '|' + (el.textContent || '').trim(); }
  function selecting() {
    var sel = window.getSelection && window.getSelection();
    return !!(sel && !sel.isCollapsed && sel.anchorNode && live.contains(sel.anchorNode));
  }
  function swap(text) {
    if (text === last) return;
    // Text being selected (to copy a stack or a payload) would be cleared: the swap waits for the next refresh.
    if (selecting()) return;
    last = text;
    var active = document.activeElement;
    var inLive = active && active !== live && live.contains(active);
    var focusId = inLive && active.id ? active.id : '';
    var focusKey = inLive && !active.id ? keyOf(active) : '';
    var focusAt = inLive && !active.id ? Array.prototype.indexOf.call(live.querySelectorAll(FOCUSABLE), active) : -1;
    var open = [], typed = {}, scrolled = [];
    live.querySelectorAll('details[open][id]').forEach(function (d) { open.push(d.id); });
    live.querySelectorAll('input[id]:not([type=hidden]), textarea[id]').forEach(function (f) { if (f.value) typed[f.id] = f.value; });
    live.querySelectorAll(SCROLLS).forEach(function (el, i) { if (el.scrollLeft || el.scrollTop) scrolled.push([i, el.scrollLeft, el.scrollTop]); });
    live.innerHTML = text;
    open.forEach(function (id) { var d = document.getElementById(id); if (d) d.open = true; });
    Object.keys(typed).forEach(function (id) { var f = document.getElementById(id); if (f && !f.value) f.value = typed[id]; });
    drawCharts(live);
    var frames = live.querySelectorAll(SCROLLS);
    scrolled.forEach(function (s) { var el = frames[s[0]]; if (el) { el.scrollLeft = s[1]; el.scrollTop = s[2]; } });
    var again = null;
    if (focusId) again = document.getElementById(focusId);
    else if (focusKey) {
      var all = live.querySelectorAll(FOCUSABLE);
      for (var i = 0; i < all.length && !again; i++) if (keyOf(all[i]) === focusKey) again = all[i];
      if (!again && focusAt >= 0) again = all[Math.min(focusAt, all.length - 1)] || null;
    }
    if (again) again.focus({ preventScroll: true });
  }
  function refresh() {
    if (busy || paused) return;
    busy = true;
    fetch(location.href, { headers: { 'X-Workhorse-Live': '1' }, credentials: 'same-origin', cache: 'no-store' })
      .then(function (res) {
        if (res.status === 401) { paused = true; say('Signed out: reload the page to sign in again.'); return null; }
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.text();
      })
      .then(function (text) {
        if (text === null) return;
        swap(text);
        // UTC and 24-hour, as every time on the pages is written (format.ts).
        say('Live: updated ' + new Date().toISOString().slice(11, 19) + ' UTC');
      })
      .catch(function (err) { say('Live update failed (' + err.message + '); retrying.'); })
      .then(function () { busy = false; schedule(); });
  }
  toggle.addEventListener('click', function () {
    paused = !paused;
    toggle.setAttribute('aria-pressed', String(paused));
    toggle.textContent = paused ? 'Resume live updates' : 'Pause live updates';
    say(paused ? 'Live updates paused.' : 'Live');
    if (paused) clearTimeout(timer); else refresh();
  });
  document.addEventListener('visibilitychange', function () {
    if (document.hidden) clearTimeout(timer); else if (!paused) refresh();
  });
  schedule();
}
`;
