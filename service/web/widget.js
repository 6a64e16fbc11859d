/* personal-leaderboard: the embeddable widget (an iframe-able card).
 *
 *   /widget/leaderboard?method=bt&top=5          everyone's top N
 *   /widget/shared/{share_id}?top=5              a user's top N ("Top models for you"), read with
 *                                                the share id they made (POST
 *                                                /v1/users/{id}/share): their board's
 *                                                ranking only, revocable; never a read token
 *   optional: theme=light (default) | dark | auto (follow the reader's colour scheme);
 *   the card is opaque in its theme's colours, so it reads on any host page, with or
 *   without embed.js (the service answers 422 to another theme=);
 *
 * Framed, it posts its content's height to the host ({type: "plb-widget-size", height}),
 * which embed.js (beside the iframe on the host page) applies to the iframe, so the card
 * never needs a scrollbar; embed.js answers with the host's theme ({type:
 * "plb-widget-theme", theme: "light" | "dark"}), taken unless the address sets theme=,
 * and asks a card that loaded before it for its height ({type: "plb-widget-ask-size"}).
 * The same rules as the page (app.js, not loaded here so the card stays small): API
 * strings go in with textContent only, no inline handlers, nothing from other origins.
 */
'use strict';

const METHOD_NAMES = { bt: 'Bradley-Terry', elo: 'Elo' };
const DEFAULT_TOP = 5;
const MAX_TOP = 50;

const $ = (id) => document.getElementById(id);
const integer = new Intl.NumberFormat('en');
const isNumber = (x) => typeof x === 'number' && Number.isFinite(x);

/** Thrown with the API's {"detail": ...} message (or a description of what went wrong). */
class WidgetError extends Error {}

/** What to show, from location.pathname and the query string. */
function readRequest() {
  const params = new URLSearchParams(window.location.search);
  const parts = window.location.pathname.split('/').filter(Boolean); // ['widget', ...]
  let shareId = null;
  if (parts[1] === 'user') {
    throw new WidgetError(
      'A personal card is shown with a share id now: make one on the leaderboard page ' +
        '("Embed it") and use its address, /widget/shared/{share_id}.',
    );
  }
  if (parts[1] === 'shared') {
    if (parts.length !== 3) throw new WidgetError('The address must be /widget/shared/{share_id}.');
    try {
      shareId = decodeURIComponent(parts[2]);
    } catch {
      throw new WidgetError('The share id in the address is not valid URL encoding.');
    }
  }
  const topText = params.get('top');
  let top = DEFAULT_TOP;
  if (topText !== null) {
    top = Number.parseInt(topText, 10);
    if (!Number.isInteger(top) || top < 1) {
      throw new WidgetError(`top must be a whole number from 1 to ${MAX_TOP}, not "${topText}".`);
    }
    top = Math.min(top, MAX_TOP);
  }
  return {
    shareId,
    top,
    method: params.get('method') || 'bt',
    theme: params.get('theme') || 'light',
  };
}

/** The detail message of an error answer: a string, or FastAPI's list of errors. */
function detailMessage(body, response) {
  const detail = body && typeof body === 'object' ? body.detail : undefined;
  if (typeof detail === 'string' && detail) return detail;
  if (Array.isArray(detail)) return detail.map((d) => d.msg ?? JSON.stringify(d)).join('; ');
  if (detail !== undefined) return JSON.stringify(detail);
  return `HTTP ${response.status} ${response.statusText}`.trim();
}

async function getJson(path) {
  const headers = { Accept: 'application/json' };
  let response;
  try {
    response = await fetch(path, { headers, credentials: 'same-origin' });
  } catch (err) {
    throw new WidgetError(`The server could not be reached (${err.message}).`);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new WidgetError(detailMessage(data, response));
  if (data === null) throw new WidgetError('The server sent a non-JSON answer.');
  return data;
}

function cell(className, text) {
  const td = document.createElement('td');
  td.className = className;
  td.textContent = String(text);
  return td;
}

/** The rank as a person reads it: its range ("1–4") where the row has one. */
function rankText(m, i) {
  if (isNumber(m.rank_lower) && isNumber(m.rank_upper)) {
    return m.rank_lower === m.rank_upper ? String(m.rank_lower) : `${m.rank_lower}–${m.rank_upper}`;
  }
  return String(isNumber(m.rank) ? m.rank : i + 1);
}

function render(data, request) {
  const models = (Array.isArray(data.models) ? data.models : []).slice(0, request.top);
  const rows = models.map((m, i) => {
    const row = document.createElement('tr');
    row.append(
      cell('num rank', rankText(m, i)),
      cell('text model', m.model),
      cell('num rating', isNumber(m.rating) ? m.rating.toFixed(0) : 'n/a'),
    );
    if (isNumber(m.lower) && isNumber(m.upper)) {
      row.title = `95% interval ${m.lower.toFixed(1)} to ${m.upper.toFixed(1)}`;
    }
    return row;
  });
  $('widget-table').tBodies[0].replaceChildren(...rows);

  const method = METHOD_NAMES[data.method] ?? String(data.method ?? request.method);
  const battles = isNumber(data.n_battles) ? integer.format(data.n_battles) : null;
  if (request.shareId !== null) {
    $('widget-meta').textContent = battles
      ? `${method} · from ${battles} of your votes`
      : `${method} · personal ranking`;
  } else {
    $('widget-meta').textContent = battles ? `${method} · ${battles} votes` : method;
  }
}

const THEMES = ['light', 'dark', 'auto'];

function setTheme(theme) {
  document.body.classList.remove(...THEMES);
  document.body.classList.add(THEMES.includes(theme) ? theme : 'light');
}

/** Tell the framing page how tall the card is (embed.js sizes the iframe to it). */
function postSize() {
  if (window.parent === window) return;
  const body = document.body;
  const style = getComputedStyle(body);
  const height = body.getBoundingClientRect().height + parseFloat(style.marginTop) + parseFloat(style.marginBottom);
  window.parent.postMessage({ type: 'plb-widget-size', height: Math.ceil(height) }, '*');
}

function showError(message) {
  const box = $('widget-error');
  box.textContent = message;
  box.hidden = false;
  $('widget-meta').textContent = '';
  $('widget-table').hidden = true;
}

async function start() {
  $('widget-home').href = `${window.location.origin}/`;
  new ResizeObserver(postSize).observe(document.body);
  window.addEventListener('message', (event) => {
    // embed.js, loaded after this card's last size message, asks for it again
    if (event.source === window.parent && event.data?.type === 'plb-widget-ask-size') postSize();
  });
  let request;
  try {
    request = readRequest();
  } catch (err) {
    showError(err.message);
    return;
  }
  setTheme(request.theme);
  if (!new URLSearchParams(window.location.search).has('theme')) {
    // the host's theme, from embed.js on the framing page; only light or dark
    window.addEventListener('message', (event) => {
      const data = event.data;
      if (event.source !== window.parent || !data || data.type !== 'plb-widget-theme') return;
      if (data.theme === 'light' || data.theme === 'dark') setTheme(data.theme);
    });
  }
  if (request.shareId !== null) {
    $('widget-title').textContent = 'Top models for you'; // a ranking, not a claim of best
    $('widget-caption').textContent = 'Your leaderboard, best first';
  }
  const method = `method=${encodeURIComponent(request.method)}`;
  const path =
    request.shareId === null
      ? `/v1/leaderboard?${method}`
      : `/v1/shared/${encodeURIComponent(request.shareId)}?${method}`;
  try {
    render(await getJson(path), request);
  } catch (err) {
    showError(err instanceof WidgetError ? err.message : `Something went wrong: ${err.message}`);
  }
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
