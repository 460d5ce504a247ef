// The audit log: every console action, with who did it.
import { api } from './client.js';
import { h, show, table, time, cellText } from './dom.js';

export async function auditView({ main }) {
  const data = await api('/audit?limit=200');
  show(main, h('h1', null, 'Audit log'),
    h('p', { class: 'muted' }, 'Every console action that showed user data or changed anything, newest first. The owner role keeps it; the console cannot delete it.'),
    data.entries.length ? table(['When', 'Operator', 'Action', 'Target', 'Status', 'Request'], data.entries.map((entry) => ({
      dataset: { action: entry.action },
      cells: [time(entry.at), entry.operator, entry.action, { text: cellText(entry.target), class: 'mono' }, entry.status ?? '', h('code', null, entry.request_id || '')],
    })), { id: 'audit' }) : h('p', { class: 'muted' }, 'Nothing yet.'));
}
