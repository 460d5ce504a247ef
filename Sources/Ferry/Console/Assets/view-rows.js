// Rows of a resource past Row Level Security, tombstones included, paged
// through Ferry's snapshots; and one row's history as far as Ferry keeps it.
import { api, query } from './client.js';
import { h, show, table, time, cellText, short, badge, errorBox } from './dom.js';

const HISTORY = ['revision', 'last_modified', 'is_deleted'];

export async function rowsView({ main, params }, name) {
  const catalog = await api('/resources');
  const resource = catalog.resources.find((item) => item.name === name);
  if (!resource) return show(main, h('h1', null, 'No such resource'));
  const columns = resource.columns.map((column) => column.name);
  const shown = columns.filter((column) => !HISTORY.includes(column));
  // By the type the values are: a domain's base type (GET /v1's base_type), else the type.
  const valueType = (column) => column.base_type || column.type;
  const filterable = resource.columns.filter((column) => ['text', 'uuid', 'bigint', 'integer', 'smallint', 'boolean'].includes(valueType(column))
    || valueType(column).startsWith('character'));
  const current = Object.fromEntries(params.entries());
  const column = h('select', { id: 'filter-column' }, h('option', { value: '' }, '(no filter)'),
    filterable.map((item) => h('option', { value: item.name }, item.name)));
  const value = h('input', { id: 'filter-value', placeholder: 'equals' });
  const filtered = filterable.find((item) => current[item.name] !== undefined);
  if (filtered) { column.value = filtered.name; value.value = current[filtered.name]; }
  const deleted = h('select', { id: 'filter-deleted' }, ['any', 'live', 'deleted'].map((option) => h('option', { value: option }, option)));
  deleted.value = current.deleted || 'any';
  const order = h('select', { id: 'filter-order' }, h('option', { value: '' }, 'id'),
    columns.flatMap((item) => [h('option', { value: item }, item), h('option', { value: item + '.desc' }, item + ' ↓')]));
  order.value = current.order || '';
  const form = h('form', { class: 'inline', id: 'rows-filter', onsubmit: (event) => {
    event.preventDefault();
    const next = { deleted: deleted.value === 'any' ? '' : deleted.value, order: order.value };
    if (column.value && value.value !== '') next[column.value] = value.value;
    location.hash = `#/resources/${encodeURIComponent(name)}/rows${query(next)}`;
  } },
  h('label', null, 'Column', column), h('label', null, 'Value', value), h('label', null, 'Rows', deleted),
  h('label', null, 'Order', order), h('button', { type: 'submit' }, 'Filter'));
  const list = h('div', { id: 'rows-list' });
  show(main, h('h1', null, `${name}: rows`),
    h('p', { class: 'muted' }, 'Every row, whoever may read it, tombstones included; paged through a snapshot that never skips a row. ',
      h('a', { href: `#/resources/${encodeURIComponent(name)}` }, 'Columns and rules')),
    form, list);
  const load = async (page) => {
    show(list, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const data = await api(`/resources/${encodeURIComponent(name)}/rows${query(page)}`);
      show(list, rowsTable(name, shown, data.data, references(resource)), pager(data.paging, (next) => load({ ...page, paging_token: next.token, page: next.page })));
    } catch (error) {
      show(list, errorBox(error));
    }
  };
  await load(current);
}

// Which resource each referencing column points at: {column: resource}.
function references(resource) {
  return Object.fromEntries(resource.columns.filter((column) => column.references).map((column) => [column.name, column.references]));
}

// A referenced row's id as a link to that row's history (not to the clicked
// row's); a reference to ferry.users (`users`, a name no resource may have)
// links to that user's page.
function referenceLink(target, id) {
  const href = target === 'users' ? `#/users/${encodeURIComponent(id)}`
    : `#/resources/${encodeURIComponent(target)}/rows/${encodeURIComponent(id)}`;
  return h('a', { href, class: 'reference',
    dataset: { reference: target }, onclick: (event) => event.stopPropagation() }, String(id));
}

function rowsTable(name, shown, rows, refs = {}) {
  if (!rows.length) return h('p', { class: 'muted', id: 'rows-empty' }, 'No rows.');
  return table([...shown, 'revision', 'last modified', 'writer', 'state'], rows.map((item) => ({
    class: 'clickable' + (item.row.is_deleted ? ' deleted' : ''),
    dataset: { id: String(item.row.id) },
    onclick: () => { location.hash = `#/resources/${encodeURIComponent(name)}/rows/${encodeURIComponent(item.row.id)}`; },
    cells: [
      ...shown.map((column) => refs[column] && item.row[column] !== null && item.row[column] !== undefined
        ? referenceLink(refs[column], item.row[column])
        : ({ text: cellText(item.row[column]), class: 'cell', title: cellText(item.row[column]) })),
      item.row.revision, time(item.row.last_modified),
      item.writer ? h('a', { href: `#/users/${encodeURIComponent(item.writer)}`, onclick: (event) => event.stopPropagation() }, short(item.writer))
        : 'not a Ferry user',
      item.row.is_deleted ? badge('tombstone', 'bad') : badge('live', 'good'),
    ],
  })), { id: 'rows' });
}

function pager(paging, go) {
  if (!paging || paging.pages <= 1) return h('p', { class: 'muted' }, `${paging ? paging.total : 0} rows.`);
  return h('div', { class: 'pager', id: 'pager' },
    h('button', { type: 'button', class: 'secondary', disabled: paging.page <= 1, onclick: () => go({ token: paging.token, page: paging.page - 1 }) }, '← Previous'),
    `Page ${paging.page} of ${paging.pages} (${paging.total} rows in the snapshot)`,
    h('button', { type: 'button', class: 'secondary', id: 'next-page', disabled: paging.page >= paging.pages, onclick: () => go({ token: paging.token, page: paging.page + 1 }) }, 'Next →'));
}

export async function rowView({ main }, name, id) {
  let data;
  try {
    data = await api(`/resources/${encodeURIComponent(name)}/rows/${encodeURIComponent(id)}`);
  } catch (error) {
    return show(main, h('h1', null, `${name} ${id}`), errorBox(error));
  }
  const history = data.history;
  const row = history.row;
  const catalog = await api('/resources');
  const resource = catalog.resources.find((item) => item.name === name);
  const refs = resource ? references(resource) : {};
  const fieldRevisions = history.field_revisions || {};
  show(main,
    h('h1', null, `${name} `, h('code', null, String(row.id)), ' ', row.is_deleted ? badge('tombstone', 'bad') : badge('live', 'good')),
    h('p', null, h('a', { href: `#/resources/${encodeURIComponent(name)}/rows` }, `All ${name}`)),
    h('div', { class: 'panel' }, h('h2', null, 'History, as far as Ferry keeps it'),
      h('dl', { class: 'facts', id: 'history' },
        h('dt', null, 'Revision'), h('dd', null, String(row.revision)),
        h('dt', null, 'Last changed'), h('dd', null, time(row.last_modified)),
        h('dt', null, 'Last writer'), h('dd', { id: 'writer' }, history.writer
          ? [history.writer_name || '(deleted user)', ' ', h('a', { href: `#/users/${encodeURIComponent(history.writer)}` }, history.writer)]
          : 'not a Ferry user (psql, a migration or another service)'),
        h('dt', null, 'Last change\'s transaction'), h('dd', null, `${history.xid} — `,
          history.delivered ? 'below the feed\'s frontier: every device following the feed can have it'
            : 'not yet below the feed\'s frontier: an older transaction is still running'))),
    h('h2', null, 'Fields'),
    table(['Field', 'Value', 'Last changed at revision'], Object.keys(row).map((field) => [
      h('code', null, field),
      // A time for people, the stored milliseconds in its tooltip.
      field === 'last_modified' && typeof row[field] === 'number'
        ? { text: time(row[field]), class: 'mono', title: `${row[field]} ms since 1970` }
        : refs[field] && row[field] !== null ? referenceLink(refs[field], row[field])
          : { text: cellText(row[field]), class: 'mono' },
      fieldRevisions[field] !== undefined ? String(fieldRevisions[field]) : (['id', 'revision', 'last_modified'].includes(field) ? '' : '1'),
    ]), { id: 'fields' }),
    accessTable('Access granted through this row', history.grants),
    accessTable('Access revoked for this row', history.revocations),
    history.refusals.length ? [h('h2', null, 'Refused requests naming it'),
      table(['When', 'User', 'Request', 'Answer'], history.refusals.map((refusal) => [
        time(refusal.at), refusal.user_name || refusal.user_id, `${refusal.method} ${refusal.path}`, `${refusal.status} ${refusal.code || ''}`,
      ]))] : null);
}

function accessTable(title, entries) {
  if (!entries || !entries.length) return null;
  return [h('h2', null, title), table(['When', 'User', 'Transaction'], entries.map((entry) => [
    time(entry.at), h('a', { href: `#/users/${encodeURIComponent(entry.user_id)}` }, entry.user_name || entry.user_id), entry.xid,
  ]))];
}
