// The audit log: every console action, with who did it; searched by
// operator, action, target or request id, and paged back.
import { api, query } from './client.js';
import { h, show, table, time, cellText } from './dom.js';

export async function auditView({ main, params }) {
  const searched = params.get('search') || '';
  const before = params.get('before') || '';
  const search = h('input', { id: 'audit-search', placeholder: 'operator, action, user id, request id…', value: searched });
  const form = h('form', { class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    location.hash = `#/audit${query({ search: search.value })}`;
  } }, h('label', null, 'Search', search), h('button', { type: 'submit', id: 'audit-search-submit' }, 'Search'));
  const limit = 200;
  const data = await api(`/audit${query({ limit, search: searched, before })}`);
  const last = data.entries.length === limit ? data.entries[data.entries.length - 1].id : null;
  show(main, h('h1', null, 'Audit log'),
    h('p', { class: 'muted' }, 'Every console action that showed user data or changed anything, newest first. The owner role keeps it; the console cannot delete it.'),
    form,
    data.entries.length ? table(['When', 'Operator', 'Action', 'Target', 'Status', 'Request'], data.entries.map((entry) => ({
      dataset: { action: entry.action },
      cells: [time(entry.at), entry.operator, entry.action, target(entry.target), entry.status ?? '', h('code', null, entry.request_id || '')],
    })), { id: 'audit' }) : h('p', { class: 'muted', id: 'audit-empty' }, searched ? 'No entry matches.' : 'Nothing yet.'),
    last ? h('a', { id: 'audit-older', href: `#/audit${query({ search: searched, before: last })}` }, 'Older entries') : null);
}

// The target, with the user it names as a link to that user's page.
function target(value) {
  const user = value && typeof value.user_id === 'string' ? value.user_id : null;
  return h('span', { class: 'mono', title: cellText(value) }, cellText(value),
    user ? [' ', h('a', { href: `#/users/${encodeURIComponent(user)}`, class: 'user-link' }, 'user')] : null);
}
