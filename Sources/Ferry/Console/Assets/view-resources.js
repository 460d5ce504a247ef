// Resources: each with its columns, references, rank and sync rules, row and
// tombstone counts, and the feed's retention (purge horizon, cursor expiry).
import { api, session } from './client.js';
import { h, show, table, time, badge, errorBox, confirmAction } from './dom.js';

export async function resourcesView({ main }) {
  const data = await api('/resources');
  const rows = data.resources.map((resource) => {
    const counts = data.counts[resource.name] || {};
    const rules = data.rules[resource.name] || {};
    const scopes = data.access_scopes.filter((scope) => scope.member === resource.name && scope.scope !== resource.name);
    return {
      dataset: { resource: resource.name },
      class: 'clickable',
      onclick: () => { location.hash = `#/resources/${encodeURIComponent(resource.name)}`; },
      cells: [
        h('a', { href: `#/resources/${encodeURIComponent(resource.name)}` }, resource.name),
        (counts.estimated ? '≈' : '') + (counts.rows ?? '—'),
        counts.tombstones ?? '—',
        [resource.ranked ? badge(`ranked in ${resource.rank_scope || 'table'}`) : null, resource.join_table ? badge('join table') : null],
        rules.row_level_security ? badge(`RLS, ${rules.policies.length} ${rules.policies.length === 1 ? 'policy' : 'policies'}`, 'good')
          : badge('no row level security', 'bad'),
        scopes.map((scope) => badge(`through ${scope.scope}.${scope.column}`)),
      ],
    };
  });
  show(main,
    h('h1', null, 'Resources'),
    h('p', { class: 'muted' }, `Schema ${data.schema}: every synced table, as /v1 serves it.`),
    table(['Resource', 'Rows', 'Tombstones', 'Shape', 'Sync rules', 'Access scopes'], rows,
      { numeric: ['Rows', 'Tombstones'], id: 'resources' }),
    retentionPanel(data.retention));
}

export async function resourceView({ main }, name) {
  const data = await api('/resources');
  const resource = data.resources.find((item) => item.name === name);
  if (!resource) return show(main, h('h1', null, 'No such resource'), h('a', { href: '#/resources' }, 'Resources'));
  const counts = data.counts[name] || {};
  const rules = data.rules[name] || { policies: [] };
  const scopes = data.access_scopes.filter((scope) => scope.member === name || scope.scope === name);
  show(main,
    h('h1', null, name),
    h('p', null, h('a', { href: `#/resources/${encodeURIComponent(name)}/rows`, id: 'browse-rows' }, 'Browse rows'),
      ' · ', `${counts.estimated ? 'about ' : ''}${counts.rows ?? '—'} rows, ${counts.tombstones ?? '—'} tombstones`,
      counts.oldest_tombstone ? `, the oldest deleted ${time(counts.oldest_tombstone)}` : ''),
    h('h2', null, 'Columns'),
    table(['Column', 'Type', 'Nullable', 'Writable', 'Default', 'References'], resource.columns.map((column) => [
      h('code', null, column.name), column.type, column.nullable ? 'yes' : 'no', column.writable ? 'yes' : 'no',
      column.has_default ? 'yes' : 'no', column.references || '',
    ]), { id: 'columns' }),
    h('p', { class: 'muted' },
      resource.ranked ? `Ranked: rows order by rank within ${resource.rank_scope || 'the table'}. ` : '',
      resource.unique_keys.length ? `Unique: ${resource.unique_keys.map((key) => key.join(' + ')).join('; ')}.` : ''),
    h('h2', null, 'Sync rules'),
    h('p', null, rules.row_level_security ? badge('row level security on', 'good') : badge('row level security off', 'bad'),
      rules.forced ? badge('forced for the owner') : null),
    rules.policies.length
      ? table(['Policy', 'Command', 'Kind', 'Roles', 'Using', 'With check'], rules.policies.map((policy) => [
        policy.name, policy.command, policy.permissive ? 'permissive' : 'restrictive', (policy.roles || []).join(', '),
        h('code', null, policy.using || ''), h('code', null, policy.with_check || ''),
      ]), { id: 'policies' })
      : h('p', { class: 'muted' }, 'No policies.'),
    h('h3', null, 'Access scopes'),
    scopes.length
      ? table(['Scope', 'Member', 'Column', 'Read through scope'], scopes.map((scope) => [
        scope.scope, scope.member, scope.column, scope.read_through_scope ? 'yes' : 'no',
      ]))
      : h('p', { class: 'muted' }, 'This resource is in no access scope: gaining or losing access to other rows does not change who reads it.'),
    retentionPanel(data.retention));
}

function retentionPanel(retention) {
  const feed = retention.feed || {};
  const message = h('div', { id: 'purge-result' });
  const admin = (session.operator || {}).role === 'admin';
  const purge = h('button', { type: 'button', class: 'danger', id: 'purge', disabled: !admin,
    title: admin ? null : 'Purging needs an admin operator',
    onclick: async () => {
      const days = h('input', { type: 'number', min: '0', max: '36500', value: String(retention.tombstone_retention_days), id: 'purge-days' });
      const ok = await confirmAction({
        title: 'Purge tombstones now?',
        text: 'Tombstones and access log entries older than the days below are deleted for good, as the periodic purge would. '
          + 'A device whose cursor is older than the purged entries gets 410 cursor_expired and must do a full sync.',
        extra: h('label', null, 'Older than (days)', days),
        action: 'Purge now',
      });
      if (!ok) return;
      show(message, h('p', { class: 'muted' }, 'Purging…'));
      try {
        const result = await api('/purge', { method: 'POST', body: { confirm: true, retention_days: Number(days.value) } });
        show(message, h('p', null, `Purged ${result.tombstones} tombstones and ${result.access_log_entries} access log entries older than ${result.retention_days} days.`));
      } catch (error) {
        show(message, errorBox(error));
      }
    } }, 'Purge tombstones now…');
  return h('div', { class: 'panel' },
    h('h2', null, 'The changes feed'),
    h('dl', { class: 'facts', id: 'retention' },
      h('dt', null, 'Frontier'), h('dd', null, `transaction ${feed.frontier} (${feed.lag_xids} behind the next, ${feed.next_xid})`),
      h('dt', null, 'Purge horizon'), h('dd', null, `transaction ${feed.purge_horizon}; cursors at or below it get 410 cursor_expired`),
      h('dt', null, 'Last purge'), h('dd', null, feed.purged_at ? time(feed.purged_at) : 'never'),
      h('dt', null, 'Retention'), h('dd', null, `tombstones kept ${retention.tombstone_retention_days} days; purged every ${retention.purge_interval_seconds} s`),
      h('dt', null, 'Cursor expiry'), h('dd', null, `a device offline longer than ${retention.tombstone_retention_days} days must do a full sync`)),
    h('p', null, purge), message);
}
