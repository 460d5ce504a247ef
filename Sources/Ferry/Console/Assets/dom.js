// Building the page: every node is made with createElement and every value
// goes in as text (textContent / text nodes), never as HTML. The page's
// Content-Security-Policy requires Trusted Types with no policy, so assigning
// a string to any HTML sink would throw: a database value can only ever be text.

/** An element: h('td', {class: 'num'}, 'text', child, ...). */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'value') el.value = value;
    else el.setAttribute(key, value === true ? '' : named(String(value)));
  }
  append(el, children);
  return el;
}

/** Appends children: nodes as they are, anything else as text (with its invisible characters shown). */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : visible(String(child)));
  }
  return el;
}

// Characters that change how text reads without showing themselves: bidirectional
// controls (`invoice_\u202Efdp.exe` displays as "invoice_exe.pdf"), zero-width and
// other invisible format characters, and control characters other than tab and newline.
const INVISIBLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180E\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB\u{E0000}-\u{E007F}]/u;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'gu');

function codePoint(char) { return 'U+' + char.codePointAt(0).toString(16).toUpperCase().padStart(4, '0'); }

/** Text with each invisible character replaced by its code point, as in an attribute (a title). */
export function named(text) {
  return INVISIBLE.test(text) ? text.replace(INVISIBLE_ALL, (char) => `[${codePoint(char)}]`) : text;
}

/**
 * Text as nodes, each invisible character in it replaced by a marked `[U+202E]`
 * (class `invisible`), so an operator sees it is there and it reorders nothing.
 */
export function visible(text) {
  if (!INVISIBLE.test(text)) return document.createTextNode(text);
  const fragment = document.createDocumentFragment();
  let at = 0;
  for (const match of text.matchAll(INVISIBLE_ALL)) {
    if (match.index > at) fragment.append(document.createTextNode(text.slice(at, match.index)));
    const span = document.createElement('span');
    span.className = 'invisible';
    span.title = 'an invisible character: ' + codePoint(match[0]);
    span.textContent = `[${codePoint(match[0])}]`;
    fragment.append(span);
    at = match.index + match[0].length;
  }
  if (at < text.length) fragment.append(document.createTextNode(text.slice(at)));
  return fragment;
}

/** Replaces everything in `el`. */
export function show(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A table from header names and rows of cells (a cell is text, a node, or {text, class}). */
export function table(headers, rows, options = {}) {
  const head = h('tr', null, headers.map((name) => h('th', { class: numeric(name, options) ? 'num' : null }, name)));
  const body = rows.map((row) => {
    const cells = row.cells || row;
    const tr = h('tr', { class: row.class || null, dataset: row.dataset || null, onclick: row.onclick || null },
      cells.map((cell, index) => {
        if (cell && typeof cell === 'object' && !(cell instanceof Node) && 'text' in cell) {
          return h('td', { class: cell.class || null, title: cell.title || null }, cell.text);
        }
        return h('td', { class: numeric(headers[index], options) ? 'num' : null }, cell);
      }));
    return tr;
  });
  return h('div', { class: 'scroll' }, h('table', { id: options.id || null }, h('thead', null, head), h('tbody', null, body)));
}

function numeric(name, options) { return (options.numeric || []).includes(name); }

/** A time (ms since the epoch) as `2026-11-27 12:03:04Z`. */
export function time(ms) {
  if (ms === null || ms === undefined) return '—';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** A value for a table cell: JSON for objects, `null` for null. */
export function cellText(value) {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A short form of a long id. */
export function short(id) {
  const text = String(id ?? '');
  return text.length > 13 ? text.slice(0, 8) + '…' : text;
}

export function badge(text, kind) { return h('span', { class: 'badge' + (kind ? ' ' + kind : '') }, text); }

export function errorBox(error) {
  const problem = error && error.problem;
  const text = problem ? `${problem.status} ${problem.code}: ${problem.detail || problem.title || ''}` : String(error && error.message || error);
  return h('div', { class: 'error', role: 'alert' }, text);
}

/** Asks before a write, in the page's own dialog; resolves true when confirmed. */
export function confirmAction({ title, text, action, extra }) {
  const dialog = document.getElementById('confirm');
  show(document.getElementById('confirm-title'), title);
  show(document.getElementById('confirm-text'), text);
  show(document.getElementById('confirm-extra'), extra || []);
  show(document.getElementById('confirm-ok'), action);
  return new Promise((resolve) => {
    const ok = document.getElementById('confirm-ok');
    const cancel = document.getElementById('confirm-cancel');
    const done = (answer) => {
      ok.removeEventListener('click', yes);
      cancel.removeEventListener('click', no);
      dialog.removeEventListener('cancel', no);
      dialog.close();
      resolve(answer);
    };
    const yes = () => done(true);
    const no = () => done(false);
    ok.addEventListener('click', yes);
    cancel.addEventListener('click', no);
    dialog.addEventListener('cancel', no);
    dialog.showModal();
  });
}
