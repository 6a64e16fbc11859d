/* personal-leaderboard: the embed helper, loaded by a host page next to the widget's iframe.
 *
 *   <iframe src="ORIGIN/widget/leaderboard?top=5" data-plb-widget ...></iframe>
 *   <script src="ORIGIN/widget/embed.js" async></script>
 *
 * For every iframe marked data-plb-widget whose address is on this script's origin, it
 *   - sets the iframe's height to the widget's content, which the widget posts as a
 *     {type: "plb-widget-size", height} message, so the card never scrolls; cards that
 *     loaded before this script (async) posted theirs to no one, so it asks each card
 *     once, {type: "plb-widget-ask-size"}, and the card posts its height again;
 *   - answers with the host's theme, {type: "plb-widget-theme", theme}, unless the
 *     address sets theme=: dark when the background behind the iframe is dark (or the
 *     page declares only a dark color-scheme), else light; with every size message
 *     (so a card asked for its size gets it too), and again when the reader's colour
 *     scheme changes. The card changes its colours in place.
 * It reads only the colours of the host page and tells the card nothing else. Without it,
 * the iframe still works at the height the snippet gives it.
 */
(() => {
  'use strict';

  const script = document.currentScript;
  const origin = script ? new URL(script.src, window.location.href).origin : null;
  if (!origin) return;
  const MIN_HEIGHT = 40;
  const MAX_HEIGHT = 2000;

  /** Relative luminance of an sRGB colour (0 black, 1 white). */
  function luminance([r, g, b]) {
    const linear = (c) => {
      const v = c / 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  }

  /** [r, g, b, alpha] of a computed colour such as "rgb(1, 2, 3)" or "rgba(1, 2, 3, 0.5)". */
  function channels(colour) {
    const match = /rgba?\(([^)]*)\)/.exec(colour);
    if (!match) return null;
    const parts = match[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return parts.length >= 3 ? [parts[0], parts[1], parts[2], parts[3] ?? 1] : null;
  }

  /** 'dark' or 'light': the first opaque background behind the element, else the page's scheme. */
  function hostTheme(element) {
    for (let node = element.parentElement; node; node = node.parentElement) {
      const colour = channels(getComputedStyle(node).backgroundColor);
      if (colour && colour[3] >= 0.5) return luminance(colour) < 0.18 ? 'dark' : 'light';
    }
    const scheme = getComputedStyle(document.documentElement).colorScheme || 'normal';
    const dark = /\bdark\b/.test(scheme);
    const light = /\blight\b/.test(scheme);
    if (dark && (!light || window.matchMedia('(prefers-color-scheme: dark)').matches)) return 'dark';
    return 'light';
  }

  function widgets() {
    return [...document.querySelectorAll('iframe[data-plb-widget]')].filter((frame) => {
      try {
        return new URL(frame.src, window.location.href).origin === origin;
      } catch {
        return false;
      }
    });
  }

  /** Tell a card the host's theme, unless its address chose one (the card checks too). */
  function sendTheme(frame) {
    if (new URL(frame.src, window.location.href).searchParams.has('theme')) return;
    frame.contentWindow?.postMessage({ type: 'plb-widget-theme', theme: hostTheme(frame) }, origin);
  }

  // A card posts its height when it loads and whenever it changes: size it, and answer
  // with the host's theme.
  window.addEventListener('message', (event) => {
    if (event.origin !== origin) return;
    const data = event.data;
    if (!data || data.type !== 'plb-widget-size' || !Number.isFinite(data.height)) return;
    const frame = widgets().find((f) => f.contentWindow === event.source);
    if (!frame) return;
    frame.style.height = `${Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(data.height)))}px`;
    sendTheme(frame);
  });

  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    for (const frame of widgets()) sendTheme(frame);
  });

  // Cards that loaded before this script (async) posted their size to no one: ask for it
  // again; the answer sizes them and brings the theme (a card still loading drops the
  // question, and posts its size once it has loaded).
  for (const frame of widgets()) {
    frame.contentWindow?.postMessage({ type: 'plb-widget-ask-size' }, origin);
  }
})();
