// "See as a user": what a user may read, what the feed sends one of their
// devices from its cursor and why (on the default stream or a subscription),
// their refused requests, their tokens.
import { api, query, session } from './client.js';
import { h, show, table, time, cellText, short, badge, errorBox, confirmAction } from './dom.js';

export async function usersView({ main, params }) {
  const search = h('input', { id: 'user-search', placeholder: 'part of a name, or a user id', value: params.get('search') || '' });
  const list = h('div', { id: 'user-list' });
  const form = h('form', { class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    location.hash = `#/users${query({ search: search.value })}`;
  } }, h('label', null, 'User', search), h('button', { type: 'submit', id: 'user-search-submit' }, 'Find'));
  show(main, h('h1', null, 'See as a user'),
    h('p', { class: 'muted' }, 'Pick a user to see what they may read, what the feed sends their devices, what was refused, and their tokens.'),
    form, list);
  const data = await api(`/users${query({ search: params.get('search') || '', limit: 100 })}`);
  show(list, data.users.length ? table(['Name', 'Id', 'Created', 'Live tokens', 'State'], data.users.map((user) => ({
    class: 'clickable', dataset: { user: user.id },
    onclick: () => { location.hash = `#/users/${encodeURIComponent(user.id)}`; },
    cells: [h('a', { href: `#/users/${encodeURIComponent(user.id)}` }, user.name), h('code', null, user.id), time(user.created_at), user.live_tokens,
      user.disabled ? badge('disabled', 'bad') : badge('active', 'good')],
  })), { id: 'users', numeric: ['Live tokens'] }) : h('p', { class: 'muted' }, 'No user matches.'));
}

export async function userView({ main, params }, id) {
  const data = await api(`/users/${encodeURIComponent(id)}`);
  const name = data.user.name;
  const feed = h('div', { id: 'feed' });
  const since = h('input', { id: 'cursor', class: 'wide mono', placeholder: 'the device\'s cursor (empty: a full sync)', value: params.get('since') || '' });
  // A subscription is named by the device on each request (the server keeps no record of
  // which a device follows): the operator picks the stream and the id of its root row.
  const [shownName, shownID] = splitStream(params.get('stream'));
  const streamName = h('select', { id: 'stream-name' },
    h('option', { value: '' }, 'the default stream'),
    data.streams.map((stream) => h('option', { value: stream.name, selected: stream.name === shownName }, `${stream.name} (a row of ${stream.root})`)));
  const streamID = h('input', { id: 'stream-id', class: 'mono', placeholder: 'the root row\'s id', value: shownID });
  const cursorForm = h('form', { class: 'inline', id: 'cursor-form', onsubmit: (event) => {
    event.preventDefault();
    const stream = streamName.value ? `${streamName.value}:${streamID.value.trim()}` : '';
    location.hash = `#/users/${encodeURIComponent(id)}${query({ since: since.value.trim(), stream })}`;
  } }, h('label', null, 'Stream', streamName), h('label', null, 'Id', streamID),
  h('label', null, 'Cursor', since), h('button', { type: 'submit', id: 'cursor-submit' }, 'What would the feed send?'));
  show(main,
    h('h1', null, 'As ', h('span', { id: 'user-name' }, name), ' ', h('code', { class: 'muted' }, data.user.id)),
    userState(data.user, data.tokens),
    userSeen(data.user),
    h('h2', null, 'What they may read'),
    table(['Resource', 'Readable rows', 'Tombstones', ''], data.resources.map((resource) => ({
      dataset: { resource: resource.name },
      cells: [resource.name, resource.readable, resource.tombstones,
        h('a', { href: `#/users/${encodeURIComponent(id)}?rows=${encodeURIComponent(resource.name)}` }, 'see the rows')],
    })), { id: 'readable', numeric: ['Readable rows', 'Tombstones'] }),
    params.get('rows') ? h('div', { id: 'user-rows' }) : null,
    h('h2', null, 'What the feed sends a device'),
    h('p', { class: 'muted' }, 'Paste the cursor a device last received (its sync state, or the "cursor" of its last answer): this is GET /v1/changes as that device asks it, answered as ', name, '.'),
    h('p', { class: 'muted', id: 'subscriptions-note' }, 'Subscriptions: a device names each one on its requests (stream=<name>:<id>) and keeps them in its own store; the server keeps no other record of them. A device waiting now shows the streams it follows below. Pick a stream and the id of its row to see what that subscription would send ', name, ': a stream they may not read is answered exactly as one that does not exist.'),
    h('h3', null, 'Waiting now'),
    waitingTable(id, data.waiting || [], data.instances),
    streamsTable(data.streams),
    cursorForm, feed,
    h('h2', null, 'Refused requests'),
    refusalsTable(data.refusals),
    h('h2', null, 'Tokens'),
    tokensTable(id, data.tokens));
  if (params.get('rows')) await userRows(id, params.get('rows'), params.get('paging_token'), params.get('page'));
  if (params.has('since') || params.has('stream')) await explain(feed, id, params.get('since'), params.get('stream'));
}

// `name:id` (the id is everything after the first colon) as [name, id].
function splitStream(text) {
  if (!text) return ['', ''];
  const colon = text.indexOf(':');
  return colon < 0 ? [text, ''] : [text.slice(0, colon), text.slice(colon + 1)];
}

// The user's open long polls, event streams and waits on every instance that answered in
// time: the streams each follows, each a link to what it would send from the start, and the
// instance that holds it.
function waitingTable(id, waiting, instances) {
  const answered = instances ? instances.answered : 1;
  const parts = [`${answered} instance${answered === 1 ? '' : 's'} answered`];
  if (instances && instances.unanswered) parts.push(`${instances.unanswered} did not answer within 2 s: their waits are missing`);
  if (instances && instances.waits_left_out) parts.push(`${instances.waits_left_out} waits left out of an answer too long to send`);
  const note = h('p', { class: 'muted', id: 'waiting-instances' }, parts.join('; ') + '.');
  if (!waiting.length) return h('div', null, note, h('p', { class: 'muted', id: 'no-waiting' }, 'No device of theirs waits on any instance that answered.'));
  return h('div', null, note, table(['Request', 'Follows', 'Resources', 'Instance', 'Waiting since'], waiting.map((wait) => ({
    cells: [wait.route === 'wait' ? 'POST /v1/changes/wait' : 'GET /v1/changes (long poll or events)',
      h('span', null, wait.default_stream ? 'the default stream' : null,
        wait.streams.map((stream, index) => [(index || wait.default_stream) ? ', ' : null,
          h('a', { href: `#/users/${encodeURIComponent(id)}${query({ stream })}`, class: 'mono' }, stream)])),
      wait.resources ? wait.resources.join(', ') : 'all',
      wait.instance ? `${wait.instance.host}, pid ${wait.instance.pid}${wait.instance.this_instance ? ' (this one)' : ''}` : '',
      time(wait.since)],
  })), { id: 'waiting' }));
}

function streamsTable(streams) {
  if (!streams.length) return h('p', { class: 'muted', id: 'no-streams' }, 'The app declares no stream (ferry.sync_stream): every device follows the default stream only.');
  return table(['Stream', 'Root', 'Carries', 'Request'], streams.map((stream) => ({
    dataset: { stream: stream.name },
    cells: [stream.name, stream.root, stream.resources.join(', '), h('code', null, stream.path)],
  })), { id: 'streams' });
}

async function userRows(id, resource, token, page) {
  const box = document.getElementById('user-rows');
  try {
    const data = await api(`/users/${encodeURIComponent(id)}/rows/${encodeURIComponent(resource)}${query({ include_deleted: 'true', paging_token: token, page })}`);
    const body = data.body || {};
    const rows = body.data || [];
    const columns = rows.length ? Object.keys(rows.find((row) => !row.is_deleted) || rows[0]) : [];
    const paging = body.paging || {};
    show(box, h('h3', null, `${resource} as ${data.user.name} reads them (${data.request}: ${data.status})`),
      data.status >= 400 ? h('pre', null, JSON.stringify(body, null, 2))
        : rows.length ? table(columns, rows.map((row) => ({ class: row.is_deleted ? 'deleted' : null,
          cells: columns.map((column) => column === 'last_modified' && typeof row[column] === 'number'
            // A time for people (CONSOLE.md), the stored milliseconds in its tooltip, as the rows view shows it.
            ? { text: time(row[column]), class: 'cell', title: `${row[column]} ms since 1970` }
            : { text: cellText(row[column]), class: 'cell', title: cellText(row[column]) }) })), { id: 'user-rows-table' })
          : h('p', { class: 'muted' }, 'Nothing.'),
      paging.token && paging.page < paging.pages ? h('a', {
        href: `#/users/${encodeURIComponent(id)}${query({ rows: resource, paging_token: paging.token, page: paging.page + 1 })}`,
      }, `Next page (${paging.page + 1} of ${paging.pages})`) : null);
  } catch (error) {
    show(box, errorBox(error));
  }
}

async function explain(box, id, since, stream) {
  show(box, h('p', { class: 'muted' }, 'Asking the feed…'));
  let data;
  try {
    data = await api(`/users/${encodeURIComponent(id)}/changes${query({ since, stream })}`);
  } catch (error) {
    return show(box, errorBox(error));
  }
  const explanation = data.explanation;
  const changes = (data.body && data.body.changes) || [];
  const cursor = explanation.cursor;
  show(box,
    h('div', { class: 'panel' },
      h('h3', null, 'Why'),
      h('ul', { class: 'notes', id: 'notes' }, explanation.notes.map((note) => h('li', { class: note.kind, dataset: { kind: note.kind } }, note.text))),
      h('dl', { class: 'facts' },
        h('dt', null, 'Request'), h('dd', null, h('code', null, data.request)),
        h('dt', null, 'Answer'), h('dd', { id: 'feed-status' }, String(data.status), data.body && data.body.code ? ` ${data.body.code}` : ''),
        h('dt', null, 'Cursor'), h('dd', null, cursor.kind === 'position' ? `transaction ${cursor.xid}, after ${cursor.resource} ${cursor.id}`
          : cursor.xid ? `${cursor.kind} at transaction ${cursor.xid}` : cursor.kind),
        h('dt', null, 'Feed now'), h('dd', null, `frontier ${explanation.feed.frontier}, next transaction ${explanation.feed.next_xid}, purge horizon ${explanation.feed.purge_horizon}`),
        explanation.stream ? [h('dt', null, 'Subscription'), h('dd', { id: 'feed-stream' }, `${explanation.stream.name}:${explanation.stream.id}, `,
          explanation.stream.root_readable ? badge(explanation.stream.public ? 'readable, public' : 'readable', 'good') : badge('not readable: answered as absent', 'warn'))] : null,
        data.body && data.body.cursor ? [h('dt', null, 'Next cursor'), h('dd', null, h('a', {
          href: `#/users/${encodeURIComponent(id)}${query({ since: data.body.cursor, stream })}`, id: 'next-cursor',
        }, data.body.cursor), data.body.has_more ? ' (more follow)' : '')] : null)),
    explanation.summary.length ? table(['Resource', 'Rows', 'Deleted', 'Revoked'], explanation.summary.map((item) => ({
      dataset: { resource: item.resource },
      cells: [item.resource, item.rows, item.tombstones, item.revoked],
    })), { id: 'summary', numeric: ['Rows', 'Deleted', 'Revoked'] }) : null,
    changes.length ? table(['Resource', 'Id', 'Revision', 'State', 'Data'], changes.map((change) => ({
      class: change.data.is_deleted ? 'deleted' : null,
      dataset: { resource: change.resource, id: String(change.data.id) },
      cells: [change.resource, h('code', null, short(change.data.id)), change.data.revision ?? '',
        change.data.revoked ? badge('revoked', 'bad') : change.data.is_deleted ? badge('deleted', 'warn') : badge('changed', 'good'),
        { text: cellText(change.data), class: 'cell mono', title: cellText(change.data) }],
    })), { id: 'changes' }) : null);
}

function refusalsTable(refusals) {
  if (!refusals.length) return h('p', { class: 'muted', id: 'no-refusals' }, 'None recorded: Ferry keeps each user\'s latest 50, for 30 days.');
  return table(['When', 'Request', 'Answer', 'Problem'], refusals.map((refusal) => ({
    dataset: { code: refusal.code || '' },
    cells: [time(refusal.at), h('code', null, `${refusal.method} ${refusal.path}`),
      badge(`${refusal.status} ${refusal.code || ''}`, refusal.status >= 500 ? 'bad' : 'warn'),
      h('details', null, h('summary', null, (refusal.problem && refusal.problem.detail) || 'problem+json'),
        h('pre', null, JSON.stringify(refusal.problem, null, 2)))],
  })), { id: 'refusals' });
}

// Whether the user is disabled, with the admin's writes on the whole user:
// disable or enable, and revoke every token. Each asks first.
function userState(user, tokens) {
  const admin = (session.operator || {}).role === 'admin';
  const live = tokens.filter((token) => token.live).length;
  const write = (path, confirmation) => h('button', {
    type: 'button', class: 'danger', disabled: !admin, title: admin ? null : 'This needs an admin operator',
    id: `user-${path.replace('/', '-')}`,
    onclick: async () => {
      if (!await confirmAction(confirmation)) return;
      try {
        await api(`/users/${encodeURIComponent(user.id)}/${path}`, { method: 'POST', body: { confirm: true } });
        window.dispatchEvent(new HashChangeEvent('hashchange'));
      } catch (error) {
        document.getElementById('main').prepend(errorBox(error));
      }
    } }, confirmation.action + '…');
  return h('p', { id: 'user-state', class: 'inline' },
    user.disabled ? badge(`disabled since ${time(user.disabled_at)}`, 'bad') : badge('active', 'good'), ' ',
    user.disabled
      ? write('enable', { title: `Enable ${user.name || user.id}?`, action: 'Enable',
        text: 'They may sign in again and be found by name. The tokens revoked when they were disabled stay revoked.' })
      : write('disable', { title: `Disable ${user.name || user.id}?`, action: 'Disable',
        text: `Every request of theirs is refused at once, on every instance: their ${live} live token(s) are revoked, no new one is issued, their JWTs are refused, and nobody finds them by name. Enable undoes it.` }),
    ' ',
    write('tokens/revoke', { title: 'Revoke all of their tokens?', action: 'Revoke all tokens',
      text: `Every device of theirs (${live} live token(s)) is signed out at once, on every instance. They may sign in again.` }));
}

// A JWT user's lookup name (what others find them by) and last request (core
// 0029): a JWT user holds no Ferry token whose last use would say it.
function userSeen(user) {
  if (user.lookup_name === null && user.last_used_at === null) return '';
  return h('p', { id: 'user-seen', class: 'inline' },
    user.lookup_name !== null ? h('span', { id: 'user-lookup-name' }, 'Found by ', h('code', null, user.lookup_name), ' · ') : '',
    user.last_used_at !== null
      ? h('span', { id: 'user-last-used' }, 'Last request with a JWT ', time(user.last_used_at))
      : h('span', { id: 'user-last-used', class: 'muted' }, 'No JWT request seen'));
}

function tokensTable(userID, tokens) {
  if (!tokens.length) return h('p', { class: 'muted' }, 'No tokens.');
  const admin = (session.operator || {}).role === 'admin';
  return table(['Token', 'Issued', 'Expires', 'Last used', 'State', ''], tokens.map((token) => ({
    dataset: { token: token.id },
    cells: [h('code', null, token.id), time(token.created_at), time(token.expires_at),
      token.last_used_at ? time(token.last_used_at) : h('span', { class: 'muted' }, 'not seen'),
      token.revoked ? badge('revoked', 'bad') : token.live ? badge('live', 'good') : badge('expired', 'warn'),
      token.live ? h('button', { type: 'button', class: 'danger', disabled: !admin, title: admin ? null : 'Revoking needs an admin operator',
        dataset: { revoke: token.id },
        onclick: async () => {
          const ok = await confirmAction({ title: 'Revoke this token?', action: 'Revoke',
            text: `The device holding token ${token.id} is signed out: its requests get 401 at once on this instance, and on others within the token cache's lifetime.` });
          if (!ok) return;
          try {
            await api(`/users/${encodeURIComponent(userID)}/tokens/${encodeURIComponent(token.id)}/revoke`, { method: 'POST', body: { confirm: true } });
            window.dispatchEvent(new HashChangeEvent('hashchange'));
          } catch (error) {
            document.getElementById('main').prepend(errorBox(error));
          }
        } }, 'Revoke…') : ''],
  })), { id: 'tokens' });
}
