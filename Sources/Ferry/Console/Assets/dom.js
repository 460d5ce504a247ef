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
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children: nodes as they are, anything else as a text node. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
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
