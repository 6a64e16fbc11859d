/* personal-leaderboard: the web page at "/".
 *
 * Plain browser JavaScript, no build step and nothing from other origins. It calls the
 * JSON API of the same origin (/v1/...). Every string that comes from the API (model names
 * above all) is inserted with textContent or as an attribute value, never parsed as HTML:
 * a model may be called "<img src=x onerror=alert(1)>". No inline handlers either, so the
 * page runs under a Content-Security-Policy of default-src 'self'.
 */
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';
const METHOD_NAMES = { bt: 'Bradley-Terry', elo: 'Elo' };
const STORAGE_KEYS = { userId: 'plb.userId', token: 'plb.token', share: 'plb.share' };
// This browser session's votes, queries and prompt (sessionStorage: a reload keeps them,
// closing the tab forgets them; never the token).
const SESSION_KEY = 'plb.session';
// Height (px) of a top-5 card in the snippet, for hosts that do not run embed.js.
const WIDGET_HEIGHT = 300;
const NEAR_ZERO = 0.1; // SPEC: a user whose Spearman is <= 0.1 counts as "near zero"

const $ = (id) => document.getElementById(id);
const integer = new Intl.NumberFormat('en');
const percent = new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 0 });

/* ------------------------------------------------------------------------------------
 * The API
 * ---------------------------------------------------------------------------------- */

/** An API answer with a 4xx/5xx status (or no answer at all); message is the detail. */
class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** A readable message from an error body: {"detail": "..."} or FastAPI's list of errors. */
function detailMessage(body, response) {
  const detail = body && typeof body === 'object' ? body.detail : undefined;
  if (typeof detail === 'string' && detail) return detail;
  if (Array.isArray(detail) && detail.length) {
    // FastAPI validation errors: [{loc: ["body", "queries"], msg: "..."}, ...]
    return detail
      .map((d) => {
        const where = Array.isArray(d.loc) ? d.loc.filter((p) => p !== 'body').join('.') : '';
        return where ? `${where}: ${d.msg}` : String(d.msg ?? JSON.stringify(d));
      })
      .join('; ');
  }
  if (detail !== undefined) return JSON.stringify(detail);
  return `HTTP ${response.status} ${response.statusText}`.trim();
}

/**
 * Call the API and return the parsed JSON; throw an ApiError carrying the detail message.
 * options: {method, body (sent as JSON), token (sent as a Bearer token)}.
 */
async function api(path, { method = 'GET', body, token } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (err) {
    throw new ApiError(`the server could not be reached (${err.message})`, 0);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null; // not JSON (a proxy's error page, say): fall back to the status line
  }
  if (!response.ok) throw new ApiError(detailMessage(data, response), response.status);
  if (data === null) throw new ApiError('the server sent an empty or non-JSON answer', response.status);
  return data;
}

/* ------------------------------------------------------------------------------------
 * Small DOM helpers
 * ---------------------------------------------------------------------------------- */

/** An HTML element with a class and text (set as text, never as HTML). */
function h(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** An SVG element with attributes. */
function s(tag, attrs = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

/** Write to the aria-live status line; errors are highlighted. */
function setStatus(message, { error = false } = {}) {
  const status = $('status');
  status.classList.toggle('error', error);
  status.textContent = message;
}

const isNumber = (x) => typeof x === 'number' && Number.isFinite(x);
const fixed = (x, digits) => (isNumber(x) ? x.toFixed(digits) : 'n/a');

/** Read and write localStorage, which throws in some privacy modes and sandboxed frames. */
const storage = {
  get(key) {
    try {
      return window.localStorage.getItem(key);
    } catch {
      return null;
    }
  },
  set(key, value) {
    try {
      if (value === null) window.localStorage.removeItem(key);
      else window.localStorage.setItem(key, value);
    } catch {
      /* not available: nothing is remembered */
    }
  },
};

/** The same for sessionStorage: this tab's votes survive a reload, not the tab. */
const sessionStore = {
  get() {
    try {
      const kept = JSON.parse(window.sessionStorage.getItem(SESSION_KEY) ?? 'null');
      return kept && typeof kept === 'object' ? kept : null;
    } catch {
      return null;
    }
  },
  set(value) {
    try {
      if (value === null) window.sessionStorage.removeItem(SESSION_KEY);
      else window.sessionStorage.setItem(SESSION_KEY, JSON.stringify(value));
    } catch {
      /* not available: the votes last until the page is left */
    }
  },
};

/* ------------------------------------------------------------------------------------
 * Leaderboard tables with interval bars
 * ---------------------------------------------------------------------------------- */

/** The [low, high] of the shared axis: every interval (or rating) of the table fits. */
function axisRange(models) {
  const values = [];
  for (const m of models) {
    for (const x of [m.lower, m.upper, m.rating]) if (isNumber(x)) values.push(x);
  }
  if (!values.length) return [0, 1];
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 1e-9) {
    lo -= 1;
    hi += 1;
  }
  const pad = (hi - lo) * 0.03; // keep the extreme bars off the cell's edges
  return [lo - pad, hi + pad];
}

/** The 95% interval of one model as a bar (and its rating as a tick) on the shared axis. */
function intervalBar(model, [lo, hi]) {
  const x = (v) => ((v - lo) / (hi - lo)) * 100;
  const hasInterval = isNumber(model.lower) && isNumber(model.upper);
  const label = hasInterval
    ? `95% interval ${fixed(model.lower, 1)} to ${fixed(model.upper, 1)}`
    : `rating ${fixed(model.rating, 1)}, no interval`;
  // preserveAspectRatio="none": the 0-100 x axis stretches to the cell's width
  const bar = s('svg', {
    class: 'interval',
    viewBox: '0 0 100 14',
    preserveAspectRatio: 'none',
    role: 'img',
    'aria-label': label,
  });
  const title = s('title');
  title.textContent = label;
  bar.append(title, s('rect', { class: 'track', x: 0, y: 6.5, width: 100, height: 1 }));
  if (hasInterval) {
    const left = x(model.lower);
    bar.append(
      s('rect', {
        class: 'range',
        x: left,
        y: 3,
        width: Math.max(x(model.upper) - left, 0.6),
        height: 8,
        rx: 1,
      }),
    );
  }
  if (isNumber(model.rating)) {
    bar.append(s('rect', { class: 'point', x: x(model.rating) - 0.5, y: 1, width: 1, height: 12 }));
  }
  return bar;
}

/**
 * The rank a person reads: the range of the rank ("1–9") where the row has one, a single
 * number where the range is one place (or the row has no range).
 */
function rankText(m, i) {
  if (isNumber(m.rank_lower) && isNumber(m.rank_upper)) {
    return m.rank_lower === m.rank_upper ? String(m.rank_lower) : `${m.rank_lower}–${m.rank_upper}`;
  }
  return String(isNumber(m.rank) ? m.rank : i + 1);
}

function rankCell(m, i) {
  const cell = h('td', 'num rank', rankText(m, i));
  if (isNumber(m.rank_lower) && isNumber(m.rank_upper) && m.rank_lower !== m.rank_upper) {
    cell.title = `its rank could be anywhere from ${m.rank_lower} to ${m.rank_upper} (95% range)`;
  }
  return cell;
}

/**
 * Fill a leaderboard table (#aggregate-table, #your-table) with one row per model, best
 * first: rank, model, rating, interval bar and (when the answer has them) battle counts.
 */
function renderBoard(table, models) {
  const showBattles = models.some((m) => isNumber(m.battles));
  const range = axisRange(models);
  const rows = models.map((m, i) => {
    const row = h('tr');
    row.dataset.model = String(m.model);
    const battles = h('td', 'num battles battles-col', isNumber(m.battles) ? integer.format(m.battles) : '');
    if (isNumber(m.wins)) {
      battles.title = `${integer.format(m.wins)} wins, ${integer.format(m.losses ?? 0)} losses, ${integer.format(m.ties ?? 0)} ties`;
    }
    const interval = h('td', 'interval');
    interval.append(intervalBar(m, range));
    row.append(
      rankCell(m, i),
      h('td', 'text model', m.model),
      h('td', 'num rating', fixed(m.rating, 0)),
      interval,
      battles,
    );
    return row;
  });
  table.tBodies[0].replaceChildren(...rows);
  table.classList.toggle('no-battles', !showBattles);

  // the axis under the bars: its two ends, in rating points
  const foot = table.tFoot;
  const axis = foot.querySelector('.axis');
  axis.replaceChildren(h('span', '', range[0].toFixed(0)), h('span', '', range[1].toFixed(0)));
  axis.title = 'ends of the shared rating axis of the interval bars';
  foot.hidden = models.length === 0;
}

/* ------------------------------------------------------------------------------------
 * Everyone's leaderboard
 * ---------------------------------------------------------------------------------- */

let aggregateRequest = 0; // the latest request wins when the method is switched quickly
// Everyone's boards as shown, by method: the explanation's "everyone's N" is read off the
// Bradley-Terry one (the row's own rating, rounded as the table rounds it).
const boards = {};

/** Everyone's rating of a model as the board shows it, else the API's figure, rounded. */
function boardRating(model, fallback) {
  const row = (boards.bt ?? []).find((m) => m.model === model);
  if (row && isNumber(row.rating)) return fixed(row.rating, 0);
  return isNumber(fallback) ? fixed(fallback, 0) : null;
}

function currentMethod() {
  const checked = document.querySelector('input[name="method"]:checked');
  return checked ? checked.value : 'bt';
}

async function loadAggregate() {
  const method = currentMethod();
  const request = ++aggregateRequest;
  const table = $('aggregate-table');
  const meta = $('aggregate-meta');
  table.setAttribute('aria-busy', 'true');
  try {
    const data = await api(`/v1/leaderboard?method=${encodeURIComponent(method)}`);
    if (request !== aggregateRequest) return;
    const models = Array.isArray(data.models) ? data.models : [];
    boards[method] = models;
    renderBoard(table, models);
    meta.className = 'meta';
    const parts = [
      METHOD_NAMES[data.method] ?? String(data.method ?? method),
      `${integer.format(data.n_battles ?? 0)} battles`,
      `${models.length} models`,
    ];
    if (data.version !== undefined && data.version !== null) parts.push(`data version ${data.version}`);
    meta.textContent = parts.join(' · ');
    showProvisional(data);
  } catch (err) {
    if (request !== aggregateRequest) return;
    table.tBodies[0].replaceChildren();
    table.tFoot.hidden = true;
    $('aggregate-provisional').hidden = true;
    meta.className = 'meta error-box';
    meta.textContent = `Could not load the leaderboard: ${err.message}`;
  } finally {
    if (request === aggregateRequest) table.removeAttribute('aria-busy');
  }
}

/** List the models with too few votes to be ranked yet (not ranked, not on the axis). */
function showProvisional(data) {
  const note = $('aggregate-provisional');
  const provisional = Array.isArray(data.provisional) ? data.provisional : [];
  note.hidden = provisional.length === 0;
  if (!provisional.length) return;
  const names = provisional.map((m) => `${m.model} (${integer.format(m.battles ?? 0)})`);
  note.textContent =
    `Provisional, not ranked until they have ${integer.format(data.min_votes ?? 0)} votes: ` +
    `${names.join(', ')}`;
}

/* ------------------------------------------------------------------------------------
 * Everyone's leaderboard with the answers' style held equal (when the fit has one)
 * ---------------------------------------------------------------------------------- */

// What a unit of each style covariate is, in words, under the default scaling ("mixed").
const STYLE_UNITS = {
  length: 'per doubling of the length of an answer',
  headers: 'for headers in one answer and none in the other',
  lists: 'for list items in one answer and none in the other',
  bold: 'for bold text in one answer and none in the other',
};
// The models named under the table as those the control moved most.
const STYLE_MOVES_SHOWN = 3;

const signed = (x, digits) => (isNumber(x) && x > 0 ? `+${fixed(x, digits)}` : fixed(x, digits));

/** A style coefficient in words: "length: +12.3 points per doubling of ... (95% interval ...)". */
function coefficientWords(c, scaling, confidence) {
  const unit =
    scaling === 'mixed' && STYLE_UNITS[c.feature]
      ? STYLE_UNITS[c.feature]
      : `per unit of the ${scaling} difference in ${c.feature}`;
  const pct = percent.format(isNumber(confidence) ? confidence : 0.95);
  return (
    `${c.feature}: ${signed(c.coefficient, 1)} points ${unit} ` +
    `(${pct} interval ${signed(c.lower, 1)} to ${signed(c.upper, 1)})`
  );
}

/** The models the control moved most from the raw board of the same votes, in a line. */
function styleMoves(models, raw) {
  const moves = models
    .filter((m) => raw.has(m.model) && isNumber(m.rating) && isNumber(raw.get(m.model).rating))
    .map((m) => ({ m, before: raw.get(m.model), change: m.rating - raw.get(m.model).rating }))
    .sort((x, y) => Math.abs(y.change) - Math.abs(x.change))
    .slice(0, STYLE_MOVES_SHOWN)
    .filter((x) => Math.abs(x.change) >= 0.5);
  if (!moves.length) return 'No model moved from the raw board.';
  const words = moves.map(
    ({ m, before, change }) =>
      `${m.model} ${signed(change, 0)} points (rank ${before.rank} raw, ${m.rank} here)`,
  );
  return `Moved most from the raw board: ${joinWords(words)}.`;
}

/** Show the fit's board with the answers' style held equal, its coefficients in words and
 * each model's raw rank; hidden when the service has none (or it cannot be loaded). */
async function loadStyleBoard() {
  const box = $('style-control');
  try {
    const data = await api('/v1/leaderboard?style=control');
    const models = Array.isArray(data.models) ? data.models : [];
    const style = data.style_control && typeof data.style_control === 'object' ? data.style_control : {};
    const raw = new Map((Array.isArray(style.raw) ? style.raw : []).map((r) => [r.model, r]));
    const table = $('style-table');
    renderBoard(table, models);
    for (const row of table.tBodies[0].rows) {
      const before = raw.get(row.dataset.model);
      if (!before) continue;
      const note = h('span', 'moved', ` · raw rank ${before.rank}`);
      note.title = `rating ${fixed(before.rating, 0)} on the raw Bradley-Terry board of the same votes`;
      row.querySelector('td.model').append(note);
    }
    $('style-meta').textContent = [
      'Bradley-Terry, style held equal',
      `${integer.format(data.n_battles ?? 0)} battles`,
      `${models.length} models`,
    ].join(' · ');
    const coefficients = Array.isArray(style.coefficients) ? style.coefficients : [];
    $('style-coefficients').replaceChildren(
      ...coefficients.map((c) => h('li', '', coefficientWords(c, style.scaling, data.confidence))),
    );
    $('style-moves').textContent = styleMoves(models, raw);
    box.hidden = false;
  } catch {
    box.hidden = true; // the page stays as it is without one
  }
}

/* ------------------------------------------------------------------------------------
 * The answer in words, the next battle, and what a vote changed
 * ---------------------------------------------------------------------------------- */

// The likeliest best is named plainly when it is this many times as likely as the next.
const CLEAR_LEAD = 1.5;
// The page says "the battle below would tell them apart" only when a decisive vote on it
// is expected to remove at least this much of the uncertainty over which model is best
// (`information`, in bits, of the next-battle document: docs/SPEC.md "The next battle").
// A tenth of a bit is a tenth of what one fair coin-flip between two equally likely top
// models holds: below it (0.03 bits, say) one vote barely moves the odds, and the page
// says that no single battle will settle it yet.
const INFORMATIVE_BITS = 0.1;

const share = (p) => (p > 0 && p < 0.005 ? '<1%' : percent.format(p));

/** English ordinal of a place: 1st, 2nd, 3rd, 4th, 11th, 21st... */
function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** The models with odds, likeliest best first. */
function byOdds(models) {
  return models.filter((m) => isNumber(m.p_best)).sort((a, b) => b.p_best - a.p_best);
}

/** Whether the likeliest best model is clearly ahead of the next (or alone). */
function clearLead(ranked) {
  return ranked.length > 0 && (ranked.length === 1 || ranked[0].p_best >= CLEAR_LEAD * ranked[1].p_best);
}

/**
 * The ranking's answer in words: "For you: X (41% likely the best; Y 22%)", or, when
 * nothing separates the top models yet, that it does not (what the next battle can do is
 * said once it is known: battleVerdict).
 */
function answerInWords(models) {
  const ranked = byOdds(models);
  if (!ranked.length) return '';
  const [top, second] = ranked;
  if (clearLead(ranked)) {
    const next = second ? `; ${second.model} ${share(second.p_best)}` : '';
    return `For you: ${top.model} (${share(top.p_best)} likely the best${next})`;
  }
  const close = ranked
    .slice(0, 3)
    .map((m) => `${m.model} ${share(m.p_best)}`)
    .join(', ');
  return `Nothing separates your top models yet (likely the best: ${close}).`;
}

/** The answer in words; where queries were learnt to tell nothing (source "aggregate"),
 * the public ranking said as such rather than as a personal one. */
function showAnswer(models, source) {
  const answer = $('your-answer');
  const ranked = byOdds(models);
  answer.textContent =
    source === 'aggregate' && ranked.length
      ? "Your queries don't separate you from everyone yet, so this is the public ranking " +
        `(likely the best: ${ranked[0].model}, ${share(ranked[0].p_best)}). Vote to make it yours.`
      : answerInWords(models);
  answer.dataset.close = ranked.length && !clearLead(ranked) ? 'true' : 'false';
  answer.hidden = !answer.textContent;
}

/** What the suggested battle can do, said after "nothing separates your top models". */
function battleVerdict(pair) {
  if (!pair || $('your-answer').dataset.close !== 'true') return '';
  // the document's own verdict where it gives one, else its information against ours
  const informative =
    typeof pair.informative === 'boolean'
      ? pair.informative
      : isNumber(pair.information) && pair.information >= INFORMATIVE_BITS;
  return informative
    ? 'The battle below would tell them apart.'
    : 'No single battle will settle it yet: even the most telling one below would barely move the odds.';
}

/** What a vote did to the two models it named, and which model leads now. */
function whatChanged(vote, before, after) {
  const place = (models, name) => models.findIndex((m) => m.model === name) + 1;
  const moved = (name) => {
    const from = place(before, name);
    const to = place(after, name);
    if (!from) return `${name} is ${ordinal(to)}`;
    return from === to ? `${name} stays ${ordinal(to)}` : `${name} moves from ${ordinal(from)} to ${ordinal(to)}`;
  };
  const { model_a: a, model_b: b } = vote;
  const [winner, loser] = vote.winner === 'model_b' ? [b, a] : [a, b];
  const said = vote.winner === 'tie' ? `Your tie between ${a} and ${b}` : `Your vote for ${winner} over ${loser}`;
  const [top] = byOdds(after); // the likeliest best, as the answer names it
  const lead = top ? `; ${top.model} is now the likeliest best (${share(top.p_best)})` : '';
  return `${said}: ${moved(a)}, ${moved(b)}${lead}.`;
}

/** "up 9 points" / "down 1 point". */
function points(x) {
  const n = Math.round(Math.abs(x));
  return `${x >= 0 ? 'up' : 'down'} ${n} ${n === 1 ? 'point' : 'points'}`;
}

/** "a", "a and b", "a, b and c". */
function joinWords(items) {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * What moved one top model, in plain words and whole points. Everyone's rating is the one
 * the board beside it shows (the same row, rounded as the table rounds it), so that the
 * two never differ by a rounding.
 */
function madeOf(m, forPrompt) {
  const parts = [
    ['before looking at your queries, our prediction', m.baseline],
    [forPrompt ? 'what this prompt is about' : 'your topics', m.topic],
    ['your writing style', m.style],
    ['your votes', m.votes],
  ];
  const moves = parts
    .filter(([, value]) => isNumber(value) && Math.round(Math.abs(value)) >= 1)
    .map(([what, value]) => `${what} moved it ${points(value)}`);
  const everyone = boardRating(m.model, m.aggregate);
  const start = everyone === null ? "everyone's votes do not rate it yet" : `everyone's votes put it at ${everyone}`;
  const head = `${m.model}, rated ${fixed(m.rating, 0)}: ${start}`;
  return moves.length ? `${head}; ${joinWords(moves)}.` : `${head}, and nothing about you moved it.`;
}

/** What the queries (or the prompt) are about: topics a person would name, where they fit. */
function topicWords(topics, forPrompt) {
  const name = (t) => t.name || t.label;
  const fitting = topics.filter((t) => t.fits !== false && name(t));
  if (forPrompt) {
    return fitting.length ? `it reads as ${name(fitting[0])}.` : 'none of our topics fits it closely.';
  }
  if (!topics.length) return 'no topic is known from your queries.';
  if (!fitting.length) return 'none of our topics fits your queries closely.';
  const listed = fitting.slice(0, 3).map((t) => (isNumber(t.share) ? `${name(t)} (${share(t.share)})` : name(t)));
  return `your queries are about ${joinWords(listed)}.`;
}

/** The explanation of a ranking (topics, style, what moved the top models), or nothing. */
function showExplanation(explanation, scope) {
  const box = $('your-why');
  if (!explanation || typeof explanation !== 'object') {
    box.hidden = true;
    return;
  }
  const forPrompt = scope === 'prompt' || explanation.scope === 'prompt';
  const topics = Array.isArray(explanation.topics) ? explanation.topics : [];
  $('why-topics').textContent = `${forPrompt ? 'Why, for this prompt' : 'Why'}: ${topicWords(topics, forPrompt)}`;
  const style = (Array.isArray(explanation.style) ? explanation.style : []).filter((t) => t?.sentence || t?.label);
  const said = [...new Set(style.map((t) => t.sentence || `your queries: ${t.label}`))];
  const sentence = joinWords(said);
  $('why-style').textContent = sentence ? `${sentence[0].toUpperCase()}${sentence.slice(1)}.` : '';
  $('why-style').hidden = said.length === 0;
  const models = Array.isArray(explanation.models) ? explanation.models : [];
  $('why-models').replaceChildren(...models.map((m) => h('li', '', madeOf(m, forPrompt))));
  $('why-note').textContent = explanation.note ?? '';
  $('why-note').hidden = !explanation.note;
  box.hidden = false;
}

/*
 * This browser session: the queries and prompt last ranked, the votes given here (sent
 * with every ranking, from either entry, until "Clear my votes"), and, once a user id and
 * token are given, that user (their stored votes join). Kept in sessionStorage without
 * the token, so that a reload keeps the votes.
 */
const session = {
  queries: [],
  prompt: '',
  votes: [],
  models: [], // the ranking shown, for "what changed"
  userId: null,
  token: null,
  ranked: false, // a ranking from queries (or with votes) is shown: re-rank it on reload
};

function saveSession() {
  const { queries, prompt, votes, userId, ranked } = session;
  sessionStore.set(votes.length || ranked ? { queries, prompt, votes, userId, ranked } : null);
  showKeptVotes();
}

/** "2 votes of yours are kept in this browser session" and the button to clear them. */
function showKeptVotes() {
  const n = session.votes.length;
  $('kept-votes').hidden = n === 0;
  $('kept-votes-text').textContent =
    `${n} ${n === 1 ? 'vote' : 'votes'} of yours kept in this browser session: ` +
    'they count in every ranking here.';
}

/** The body of a ranking request: the queries, the prompt, the votes, the user. */
function rankingBody() {
  return {
    queries: session.queries,
    ...(session.prompt ? { prompt: session.prompt } : {}),
    ...(session.votes.length ? { votes: session.votes } : {}),
    ...(session.userId && session.token ? { user_id: session.userId } : {}),
  };
}

let nextBattleRequest = 0; // only the latest suggestion is shown

/** Ask for the next battle and show it with buttons that vote on it. */
async function showNextBattle(path, { body, token }) {
  const box = $('next-battle');
  const request = ++nextBattleRequest;
  box.hidden = true;
  $('answer-battle').textContent = '';
  try {
    const pair = await api(path, body ? { method: 'POST', body, token } : { token });
    if (request !== nextBattleRequest) return;
    box.dataset.modelA = pair.model_a;
    box.dataset.modelB = pair.model_b;
    $('next-battle-question').textContent =
      `Your next battle: which would you rather have answer you, ${pair.model_a} or ${pair.model_b}?`;
    $('vote-a').textContent = pair.model_a;
    $('vote-b').textContent = pair.model_b;
    $('answer-battle').textContent = battleVerdict(pair);
    box.hidden = false;
  } catch {
    box.hidden = true; // no suggestion is no error: the ranking is still shown
  }
}

/** Where the next battle is asked: POST with the ranking's body, or the user's own board. */
function suggestNext(body) {
  if (body) return showNextBattle('/v1/next-battle', { body, token: session.token });
  return showNextBattle(`/v1/users/${encodeURIComponent(session.userId)}/next-battle`, {
    token: session.token,
  });
}

let yoursRequest = 0; // the latest ranking asked for wins: an older answer is dropped

/** Thrown in place of an answer that a later request has overtaken. */
class Overtaken extends Error {}

/** The ranking of this session (queries, prompt, votes, user) from POST /v1/recommend;
 * Overtaken when another ranking was asked for meanwhile. */
async function rankSession() {
  const ticket = ++yoursRequest;
  const body = rankingBody();
  const data = await api('/v1/recommend', { method: 'POST', body, token: session.token });
  if (ticket !== yoursRequest) throw new Overtaken();
  return { body, data };
}

/** A vote on the suggested battle: the ranking again with it, and what it changed. */
async function onVote(event) {
  const box = $('next-battle');
  const winner = event.currentTarget.dataset.winner;
  const vote = { model_a: box.dataset.modelA, model_b: box.dataset.modelB, winner };
  const before = session.models;
  const buttons = [...document.querySelectorAll('#vote-buttons button')];
  for (const button of buttons) button.disabled = true;
  setStatus('Counting your vote…');
  session.votes = [...session.votes, vote];
  try {
    const { body, data } = await rankSession();
    session.models = data.models ?? [];
    session.ranked = true;
    saveSession();
    const n = session.votes.length;
    showYours(data, sourceDetail(data));
    $('your-change').textContent = whatChanged(vote, before, session.models);
    $('your-change').hidden = false;
    setStatus(`Vote counted: ${n} ${n === 1 ? 'vote' : 'votes'} so far.`);
    await suggestNext(body);
  } catch (err) {
    if (err instanceof Overtaken) return; // counted in the ranking asked for since
    session.votes = session.votes.filter((v) => v !== vote); // not counted: not kept either
    saveSession();
    setStatus(`Could not count your vote: ${err.message}`, { error: true });
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

function onClearVotes() {
  session.votes = [];
  saveSession();
  setStatus('Your votes of this session are cleared.');
  if (session.ranked && (session.queries.length || session.token)) rerank();
}

/* ------------------------------------------------------------------------------------
 * Your leaderboard: from queries, or from your own votes with a token
 * ---------------------------------------------------------------------------------- */

/** Show a ranking in #your-table with its source line and its agreement with everyone's. */
function showYours(data, detail) {
  const models = Array.isArray(data.models) ? data.models : [];
  renderBoard($('your-table'), models);
  showAnswer(models, data.source);
  showExplanation(data.explanation, data.scope);

  const source = $('your-source');
  source.replaceChildren('Source: ', h('strong', '', data.source ?? 'unknown'));
  if (detail) source.append(` · ${detail}`);
  const method = data.method ?? 'bt';
  if (currentMethod() !== method) {
    source.append(
      ` · rated with ${METHOD_NAMES[method] ?? method}: a ranking from queries or from ` +
        'votes given here is fitted that way only',
    );
  }

  const agreement = $('your-spearman');
  agreement.replaceChildren(
    `Agreement with everyone's ${METHOD_NAMES[method] ?? method} ranking: Spearman `,
    h('span', 'value', fixed(data.spearman, 2)),
  );
  agreement.title = '1: the same order as everyone; 0: unrelated; -1: reversed';
  $('your-result').hidden = false;
  return models.length;
}

/** The queries typed into #queries: one per non-blank line. */
function readQueries() {
  return $('queries')
    .value.split(/\r?\n/)
    .map((q) => q.trim())
    .filter(Boolean);
}

/** "from your 3 queries and 1 vote", and the prompt's topic for a ranking of one prompt. */
function sourceDetail(data) {
  const parts = [];
  const n = data.n_queries ?? session.queries.length;
  if (n) parts.push(`${n} ${n === 1 ? 'query' : 'queries'}`);
  const v = session.votes.length;
  if (v) parts.push(`${v} ${v === 1 ? 'vote' : 'votes'} given here`);
  if (session.userId && session.token) parts.push(`the stored votes of ${session.userId}`);
  let detail = parts.length ? `from your ${joinWords(parts)}` : '';
  if (data.scope === 'prompt') {
    const topic = data.prompt_topic?.name || data.prompt_topic?.label;
    detail += ` · for your prompt${topic ? ` (read as: ${topic})` : ''}`;
  }
  if (v && data.source !== 'blended') {
    // votes were sent: say so when the answer does not show them counted
    detail += ` · your ${v === 1 ? 'vote was' : 'votes were'} sent, but the answer is ${data.source}`;
  }
  return detail;
}

/** Rank with what the session holds, show the answer, keep it and suggest a battle. */
async function rankAndShow(status, what) {
  await fillYours('recommend-button', status, 'rank the models', async () => {
    const { body, data } = await rankSession();
    const count = showYours(data, sourceDetail(data));
    session.models = data.models ?? [];
    session.ranked = true;
    saveSession();
    $('your-change').hidden = true;
    setStatus(`Ranked ${count} models for your ${what}.`);
    suggestNext(body);
  });
}

/** Rank again with what the session holds (queries, prompt, votes, user). */
async function rerank() {
  await rankAndShow('Ranking the models again…', session.prompt ? 'prompt' : 'queries');
}

async function onRecommend(event) {
  event?.preventDefault();
  const prompt = $('prompt').value.trim();
  const typed = readQueries();
  const queries = typed.length || !prompt ? typed : [prompt];
  if (!queries.length && !session.token) {
    setStatus('Type at least one query, one per line.', { error: true });
    $('queries').focus();
    return;
  }
  session.queries = queries;
  session.prompt = prompt;
  const n = queries.length;
  const status = n
    ? `Ranking the models for your ${n} ${n === 1 ? 'query' : 'queries'}…`
    : 'Ranking the models for you…';
  await rankAndShow(status, prompt ? 'prompt' : 'queries');
}

let fillsPending = 0; // the table is busy while any ranking is on its way

/**
 * Fill "yours" by `work`, `buttonId` disabled and the table busy meanwhile: `status` first;
 * on an error the old result is cleared and the status says "Could not <failure>: why".
 */
async function fillYours(buttonId, status, failure, work) {
  const button = $(buttonId);
  button.disabled = true;
  fillsPending += 1;
  $('your-table').setAttribute('aria-busy', 'true');
  setStatus(status);
  try {
    await work();
  } catch (err) {
    if (!(err instanceof Overtaken)) {
      // (an overtaken ranking is no error: the later one shows instead)
      $('your-result').hidden = true; // a new error clears the old result
      setStatus(`Could not ${failure}: ${err.message}`, { error: true });
    }
  } finally {
    button.disabled = false;
    fillsPending -= 1;
    if (fillsPending === 0) $('your-table').removeAttribute('aria-busy');
  }
}

/**
 * A user's own board, read with their token: their stored board in the method chosen,
 * or, with votes given here (or queries ranked), the ranking with those joined.
 */
async function loadUserBoard(userId, token) {
  const status = `Loading the leaderboard of ${userId}…`;
  await fillYours('token-button', status, 'load your leaderboard', async () => {
    const user = `/v1/users/${encodeURIComponent(userId)}`;
    const ticket = ++yoursRequest;
    // the token is checked first, so that a wrong one says so whatever the session holds
    const stored = await api(`${user}/leaderboard?method=${encodeURIComponent(currentMethod())}`, {
      token,
    });
    if (ticket !== yoursRequest) throw new Overtaken();
    if (session.userId !== userId) {
      // another person's session: their votes are not this user's
      if (session.userId !== null) session.votes = [];
      session.userId = userId;
    }
    session.token = token;
    let data = stored;
    let body = null;
    if (session.votes.length || (session.ranked && session.queries.length)) {
      ({ body, data } = await rankSession());
    }
    const detail =
      body === null
        ? isNumber(data.n_battles)
          ? `from your ${integer.format(data.n_battles)} votes`
          : ''
        : sourceDetail(data);
    const count = showYours(data, detail);
    session.models = data.models ?? [];
    saveSession();
    $('your-change').hidden = true;
    showUserEmbed(userId);
    setStatus(`Your leaderboard: ${count} models.`);
    suggestNext(body);
  });
}

function onToken(event) {
  event.preventDefault();
  const userId = $('user-id').value.trim();
  const token = $('token').value.trim();
  if (!userId || !token) {
    setStatus('Enter both your user id and your token.', { error: true });
    (userId ? $('token') : $('user-id')).focus();
    return;
  }
  // remembered only when the box is ticked; unticking forgets them
  const remember = $('remember').checked;
  storage.set(STORAGE_KEYS.userId, remember ? userId : null);
  storage.set(STORAGE_KEYS.token, remember ? token : null);
  loadUserBoard(userId, token);
}

/** Credentials remembered on this device: the user's board at once. */
function restoreToken() {
  const userId = storage.get(STORAGE_KEYS.userId);
  const token = storage.get(STORAGE_KEYS.token);
  if (!userId || !token) return false;
  $('user-id').value = userId;
  $('token').value = token;
  $('remember').checked = true;
  $('token-box').open = true;
  try {
    const kept = JSON.parse(storage.get(STORAGE_KEYS.share) ?? 'null');
    if (kept?.userId === userId && kept.widgetUrl && kept.badgeUrl) ownShare = kept;
  } catch {
    storage.set(STORAGE_KEYS.share, null);
  }
  loadUserBoard(userId, token);
  return true;
}

/** This tab's session after a reload: its votes, queries and prompt, ranked again. */
function restoreSession() {
  const kept = sessionStore.get();
  if (!kept) return;
  const strings = (x) => (Array.isArray(x) ? x.filter((q) => typeof q === 'string') : []);
  session.queries = strings(kept.queries);
  session.prompt = typeof kept.prompt === 'string' ? kept.prompt : '';
  session.votes = (Array.isArray(kept.votes) ? kept.votes : []).filter(
    (v) => v && typeof v.model_a === 'string' && typeof v.model_b === 'string' && typeof v.winner === 'string',
  );
  session.userId = typeof kept.userId === 'string' ? kept.userId : null;
  session.ranked = kept.ranked === true;
  if (session.queries.length && !$('queries').value) $('queries').value = session.queries.join('\n');
  if (session.prompt && !$('prompt').value) $('prompt').value = session.prompt;
  showKeptVotes();
}

/* ------------------------------------------------------------------------------------
 * The distribution of per-user agreement
 * ---------------------------------------------------------------------------------- */

function drawHistogram(histogram, summary) {
  const chart = $('spearman-histogram');
  const title = chart.querySelector('title');
  chart.replaceChildren(title);
  const edges = Array.isArray(histogram?.edges) ? histogram.edges : [];
  const counts = Array.isArray(histogram?.counts) ? histogram.counts : [];
  if (counts.length === 0 || edges.length !== counts.length + 1) return false;

  // plot area inside the 420 x 190 viewBox
  const [left, right, top, bottom] = [34, 410, 12, 150];
  const lo = edges[0];
  const hi = edges[edges.length - 1];
  const x = (v) => left + ((v - lo) / (hi - lo)) * (right - left);
  const most = Math.max(1, ...counts);
  const y = (c) => bottom - (c / most) * (bottom - top);

  counts.forEach((count, i) => {
    const middle = (edges[i] + edges[i + 1]) / 2;
    const bar = s('rect', {
      class: middle <= NEAR_ZERO ? 'bar low' : 'bar',
      x: x(edges[i]) + 0.5,
      y: y(count),
      width: Math.max(x(edges[i + 1]) - x(edges[i]) - 1, 0.5),
      height: bottom - y(count),
    });
    const tip = s('title');
    tip.textContent = `${fixed(edges[i], 1)} to ${fixed(edges[i + 1], 1)}: ${count} users`;
    bar.append(tip);
    chart.append(bar);
  });

  chart.append(s('line', { class: 'axis-line', x1: left, x2: right, y1: bottom, y2: bottom }));
  if (lo < 0 && hi > 0) {
    chart.append(s('line', { class: 'zero-line', x1: x(0), x2: x(0), y1: top - 4, y2: bottom }));
  }
  for (const tick of [-1, -0.5, 0, 0.5, 1]) {
    if (tick < lo || tick > hi) continue;
    const label = s('text', { x: x(tick), y: bottom + 15, 'text-anchor': 'middle' });
    label.textContent = tick === 0 ? '0' : tick.toFixed(1).replace('-', '\u2212');
    chart.append(label);
  }
  const axisTitle = s('text', { x: (left + right) / 2, y: bottom + 34, 'text-anchor': 'middle' });
  axisTitle.textContent = 'Spearman: a user’s ranking against everyone’s';
  const yMax = s('text', { x: left - 6, y: top + 4, 'text-anchor': 'end' });
  yMax.textContent = String(most);
  const yZero = s('text', { x: left - 6, y: bottom, 'text-anchor': 'end' });
  yZero.textContent = '0';
  chart.append(axisTitle, yMax, yZero);

  const users = summary?.users ?? counts.reduce((a, b) => a + b, 0);
  title.textContent = `Histogram of the Spearman correlation of ${users} users' rankings with the aggregate`;
  return true;
}

/** The summary of the shrunk per-user fits, each figure with the plain fits' beside it. */
function fillSummary(summary, plain) {
  const list = $('agreement-summary');
  const both = (key, format) => {
    const shrunk = format(summary?.[key]);
    return plain ? `${shrunk} (plain ${format(plain[key])})` : shrunk;
  };
  const two = (x) => fixed(x, 2);
  const ownShare = (x) => (isNumber(x) ? percent.format(x) : 'n/a');
  const count = (x) => (isNumber(x) ? integer.format(x) : 'n/a');
  const rows = [
    ['Users', count(summary?.users)],
    ['Mean Spearman', both('mean_spearman', two)],
    ['Median Spearman', both('median_spearman', two)],
    [`Near zero or negative (≤ ${NEAR_ZERO})`, both('share_near_zero_or_negative', ownShare)],
  ];
  list.replaceChildren(...rows.flatMap(([term, value]) => [h('dt', '', term), h('dd', '', value)]));
  $('agreement-why').hidden = !plain;
}

let correlationsRequest = 0; // the latest method wins

/**
 * The agreement of per-user rankings with everyone's, measured with Bradley-Terry whatever
 * the method chosen: a user's Elo ranking starts from everyone's Elo and a few votes barely
 * move it, so its agreement with everyone's is near 1 by construction and is evidence of
 * nothing. With Elo chosen, the card says so and shows the Bradley-Terry figures.
 */
async function loadCorrelations() {
  const caption = $('histogram-caption');
  const method = 'bt';
  $('agreement-elo').hidden = currentMethod() !== 'elo';
  const request = ++correlationsRequest;
  const path = (shrinkage) =>
    `/v1/analysis/correlations?method=${encodeURIComponent(method)}&shrinkage=${shrinkage}`;
  try {
    // the plain fits (each user's votes alone, as the study fitted them) may be missing
    const [data, plain] = await Promise.all([api(path('cv')), api(path('none')).catch(() => null)]);
    if (request !== correlationsRequest) return;
    fillSummary(data.summary, plain?.summary);
    $('agreement-method').textContent = METHOD_NAMES[method] ?? method;
    if (drawHistogram(data.histogram, data.summary)) {
      caption.className = '';
      caption.replaceChildren(
        h('span', 'legend-low'),
        ` near zero or negative (≤ ${NEAR_ZERO}) · `,
        h('span', 'legend-high'),
        ' agrees with the aggregate',
      );
    } else {
      caption.textContent = 'No per-user rankings in this fit yet.';
    }
  } catch (err) {
    if (request !== correlationsRequest) return;
    caption.className = 'error-box';
    caption.textContent = `Could not load the agreement analysis: ${err.message}`;
  }
}

/* ------------------------------------------------------------------------------------
 * What is served
 * ---------------------------------------------------------------------------------- */

/** Show the notice of a simulated arena (plb serve --demo) when GET /v1/about says so. */
async function loadAbout() {
  try {
    const data = await api('/v1/about');
    $('simulated-notice').hidden = data.simulated !== true;
    if (data.style_control === true) loadStyleBoard();
  } catch {
    // an older service without /v1/about, or none reachable: the other cards say so
  }
}

/* ------------------------------------------------------------------------------------
 * Embed snippets
 * ---------------------------------------------------------------------------------- */

/** The query string for the widget/badge URLs: method only when it is not the default. */
function methodQuery(prefix) {
  const method = currentMethod();
  return method === 'bt' ? '' : `${prefix}method=${encodeURIComponent(method)}`;
}

/** The snippet of a card and a badge: the iframe, embed.js (theme and height), the image. */
function embedSnippet(widget, badge, title, alt) {
  const origin = window.location.origin;
  return (
    `<iframe src="${widget}" title="${title}" width="360" height="${WIDGET_HEIGHT}" ` +
    `style="border:0" loading="lazy" data-plb-widget></iframe>\n` +
    `<script src="${origin}/widget/embed.js" async></script>\n` +
    `<img src="${badge}" alt="${alt}" height="20">`
  );
}

function updateEmbed() {
  const origin = window.location.origin;
  const widget = `${origin}/widget/leaderboard?top=5${methodQuery('&')}`;
  const badge = `${origin}/widget/badge.svg${methodQuery('?')}`;
  $('embed-snippet').textContent = embedSnippet(widget, badge, 'LLM leaderboard', 'The best LLM');
  $('badge-preview').src = `/widget/badge.svg${methodQuery('?')}`;
  if (session.token) showUserEmbed(session.userId);
}

/*
 * Your own card and badge are read with a share id (POST /v1/users/{id}/share), never
 * with your token: it shows your board's ranking only, and you can revoke it. The server
 * keeps only its digest, so the page keeps the addresses it was given (remembered with
 * your token when the box is ticked); making another share id stops the previous one.
 */
let ownShare = null; // {userId, widgetUrl, badgeUrl} of the share id made here

function showUserEmbed(userId) {
  if (ownShare !== null && ownShare.userId !== userId) ownShare = null;
  $('embed-user').hidden = false;
  $('embed-user-snippet').hidden = ownShare === null;
  $('share-button').textContent = ownShare === null ? 'Make a share link' : 'Make a new one';
  if (ownShare === null) return;
  const origin = window.location.origin;
  const widget = `${origin}${ownShare.widgetUrl}?top=5${methodQuery('&')}`;
  const badge = `${origin}${ownShare.badgeUrl}${methodQuery('&')}`;
  $('embed-snippet-user').textContent = embedSnippet(widget, badge, 'My LLM leaderboard', 'The best LLM for me');
}

function rememberShare() {
  const keep = $('remember').checked && ownShare !== null;
  storage.set(STORAGE_KEYS.share, keep ? JSON.stringify(ownShare) : null);
}

/** Run `work` on the user shown (with their token), `buttonId` disabled meanwhile. */
async function onOwnCredentials(buttonId, failure, work) {
  if (!session.token) return;
  const button = $(buttonId);
  button.disabled = true;
  try {
    await work(session.userId, session.token, `/v1/users/${encodeURIComponent(session.userId)}`);
  } catch (err) {
    setStatus(`Could not ${failure}: ${err.message}`, { error: true });
  } finally {
    button.disabled = false;
  }
}

function onShare() {
  return onOwnCredentials('share-button', 'make a share link', async (userId, token, path) => {
    const data = await api(`${path}/share`, { method: 'POST', token });
    ownShare = { userId, widgetUrl: data.widget_url, badgeUrl: data.badge_url };
    rememberShare();
    showUserEmbed(userId);
    setStatus('Your share link is ready: it shows your ranking and nothing else. A new one, or revoking it, stops it.');
  });
}

function onRevokeShare() {
  return onOwnCredentials('revoke-share-button', 'revoke your share link', async (userId, token, path) => {
    const data = await api(`${path}/share`, { method: 'DELETE', token });
    ownShare = null;
    rememberShare();
    showUserEmbed(userId);
    setStatus(data.revoked ? 'Your share link is revoked: its card and badge show nothing now.' : 'You had no share link.');
  });
}

function onRotateToken() {
  return onOwnCredentials('rotate-token-button', 'change your token', async (userId, token, path) => {
    const data = await api(`${path}/token`, { method: 'POST', token });
    session.token = data.token;
    $('token').value = data.token;
    if ($('remember').checked) storage.set(STORAGE_KEYS.token, data.token);
    setStatus(`Your new token: ${data.token} (the old one no longer works; keep this one).`);
  });
}

/** Copy a snippet; where the clipboard API is refused, select the text for Ctrl+C. */
async function copySnippet(button) {
  const pre = $(button.dataset.copy);
  try {
    await navigator.clipboard.writeText(pre.textContent);
  } catch {
    const range = document.createRange();
    range.selectNodeContents(pre);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    setStatus('The snippet is selected: press Ctrl+C (⌘C on a Mac) to copy it.');
    return;
  }
  button.textContent = 'Copied';
  setStatus('Snippet copied to the clipboard.');
  window.setTimeout(() => {
    button.textContent = 'Copy';
  }, 2000);
}

/* ------------------------------------------------------------------------------------
 * Start
 * ---------------------------------------------------------------------------------- */

function start() {
  // both leaderboards share the header kept once in index.html's <template id="board-head">
  for (const table of document.querySelectorAll('table.board')) {
    table.tBodies[0].before($('board-head').content.cloneNode(true));
  }
  for (const radio of document.querySelectorAll('input[name="method"]')) {
    radio.addEventListener('change', () => {
      loadAggregate();
      loadCorrelations();
      updateEmbed();
      // your leaderboard too: a stored board in the method chosen; a ranking from
      // queries or votes given here again, saying that it is fitted with BT only
      if (session.token) loadUserBoard(session.userId, session.token);
      else if (session.ranked && session.queries.length) rerank();
    });
  }
  $('share-button').addEventListener('click', onShare);
  $('revoke-share-button').addEventListener('click', onRevokeShare);
  $('rotate-token-button').addEventListener('click', onRotateToken);
  $('recommend-form').addEventListener('submit', onRecommend);
  for (const button of document.querySelectorAll('#vote-buttons button')) {
    button.addEventListener('click', onVote);
  }
  $('token-form').addEventListener('submit', onToken);
  $('clear-votes').addEventListener('click', onClearVotes);
  $('remember').addEventListener('change', (event) => {
    if (!event.target.checked) {
      storage.set(STORAGE_KEYS.userId, null);
      storage.set(STORAGE_KEYS.token, null);
      storage.set(STORAGE_KEYS.share, null);
    }
  });
  for (const button of document.querySelectorAll('button.copy')) {
    button.addEventListener('click', () => copySnippet(button));
  }
  // Ctrl+Enter in the textarea submits, as in most chat boxes
  $('queries').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $('recommend-form').requestSubmit();
    }
  });
  $('badge-preview').addEventListener('error', (event) => {
    event.target.hidden = true;
  });

  updateEmbed();
  loadAbout();
  loadAggregate();
  loadCorrelations();
  restoreSession();
  if (!restoreToken() && session.ranked && session.queries.length) rerank();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
