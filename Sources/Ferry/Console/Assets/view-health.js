// Health: live charts from /console/api/health, the JSON twin of /metrics,
// sampled every two seconds; rates and latency from the difference of two samples.
import { api, session } from './client.js';
import { h, show, time, errorBox, confirmAction } from './dom.js';
import { Chart, format } from './charts.js';

const INTERVAL_MS = 2000;

export async function healthView({ main, onLeave }) {
  const charts = {
    requests: new Chart('chart-requests', 'Requests', ['per second'], '/s'),
    errors: new Chart('chart-errors', 'Errors', ['4xx/s', '5xx/s'], ''),
    latency: new Chart('chart-latency', 'Latency', ['p50', 'p99'], ' ms'),
    pool: new Chart('chart-pool', 'Database pool', ['in use', 'waiting'], ''),
    memcached: new Chart('chart-memcached', 'memcached', ['up', 'hit ratio'], ''),
    lag: new Chart('chart-lag', 'Feed frontier lag', ['transactions'], ''),
  };
  const facts = h('dl', { class: 'facts', id: 'health-facts' });
  const oldest = h('div', { id: 'oldest' });
  show(main, h('h1', null, 'Health'),
    h('p', { class: 'muted' }, `This instance's figures since it started, sampled every ${INTERVAL_MS / 1000} s (the console's own requests left out). Prometheus has the same at /metrics.`),
    h('div', { class: 'grid' }, Object.values(charts).map((chart) => chart.element)),
    h('div', { class: 'panel' }, h('h2', null, 'Now'), facts),
    h('div', { class: 'panel' }, h('h2', null, 'The transaction holding the feed back'), oldest),
    keysPanel());
  let previous = null;
  let stopped = false;
  const tick = async () => {
    if (stopped) return;
    try {
      const sample = await api('/health');
      if (stopped) return;
      record(charts, previous, sample);
      describe(facts, oldest, sample);
      previous = sample;
    } catch (error) {
      show(facts, h('dt', null, 'Error'), h('dd', { class: 'error' }, String(error.message || error)));
    }
    if (!stopped) timer = setTimeout(tick, INTERVAL_MS);
  };
  let timer = null;
  onLeave(() => { stopped = true; clearTimeout(timer); });
  await tick();
}

function record(charts, previous, sample) {
  const pool = sample.pool, memcached = sample.memcached;
  charts.pool.push([pool.in_use, pool.waiting]);
  charts.lag.push([sample.feed ? sample.feed.lag_xids : null]);
  if (!previous) {
    charts.memcached.push([memcached.up ? 1 : 0, null]);
    return;
  }
  const seconds = Math.max(0.001, (sample.at - previous.at) / 1000);
  const delta = (path) => path(sample) - path(previous);
  charts.requests.push([delta((s) => s.requests.total) / seconds]);
  charts.errors.push([delta((s) => s.requests.client_errors) / seconds, delta((s) => s.requests.server_errors) / seconds]);
  const buckets = sample.requests.latency.counts.map((count, index) => count - previous.requests.latency.counts[index]);
  const bounds = sample.requests.latency.bounds;
  charts.latency.push([quantile(buckets, bounds, 0.5), quantile(buckets, bounds, 0.99)]);
  const hits = delta((s) => s.memcached.hits), misses = delta((s) => s.memcached.misses);
  charts.memcached.push([memcached.up ? 1 : 0, hits + misses > 0 ? hits / (hits + misses) : null]);
}

/** The upper bound (ms) of the bucket holding quantile `q`; null with no requests. */
function quantile(counts, bounds, q) {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total <= 0) return null;
  let seen = 0;
  for (let index = 0; index < counts.length; index += 1) {
    seen += counts[index];
    if (seen >= q * total) return index < bounds.length ? bounds[index] * 1000 : bounds[bounds.length - 1] * 1000;
  }
  return null;
}

function describe(facts, oldest, sample) {
  const feed = sample.feed || {};
  // While PostgreSQL cannot be asked, the server still answers with its own figures for a
  // session it checked lately; the feed's part needs PostgreSQL.
  const postgresql = sample.postgresql || { up: true };
  show(facts,
    h('dt', null, 'Sampled'), h('dd', null, time(sample.at)),
    h('dt', null, 'PostgreSQL'), h('dd', { id: 'postgresql-state', class: postgresql.up ? null : 'error' },
      postgresql.up ? 'up' : `DOWN: ${postgresql.detail || 'it does not answer'}`),
    h('dt', null, 'Requests'), h('dd', null, `${sample.requests.total} answered, ${sample.requests.client_errors} refused (4xx), ${sample.requests.server_errors} failed (5xx)`),
    h('dt', null, 'Connections'), h('dd', null, sample.http.open_connections !== undefined ? `${sample.http.open_connections} open, ${sample.http.in_flight} requests in flight` : '—'),
    h('dt', null, 'Database pool'), h('dd', null, `${sample.pool.in_use} of ${sample.pool.size} in use, ${sample.pool.waiting} waiting; ${sample.pool.acquire_timeouts} timeouts, ${sample.pool.connect_failures} failed connects`),
    h('dt', null, 'memcached'), h('dd', { id: 'memcached-state' }, sample.memcached.up ? 'up' : 'DOWN', `: ${sample.memcached.hits} hits, ${sample.memcached.misses} misses, ${sample.memcached.errors} errors`),
    h('dt', null, 'Changes feed'), h('dd', null, sample.feed
      ? `${sample.changes_polls} polls answered; frontier ${feed.frontier}, ${feed.lag_xids} transactions behind the next (${feed.next_xid})`
      : `${sample.changes_polls} polls answered; the frontier is unknown while PostgreSQL does not answer`),
    h('dt', null, 'Purge horizon'), h('dd', null, sample.feed
      ? `${feed.purge_horizon}${feed.purged_at ? `, last purge ${time(feed.purged_at)}` : ', never purged'}` : '—'));
  if (!sample.feed) return show(oldest, h('p', { class: 'muted' }, 'Unknown while PostgreSQL does not answer.'));
  const running = feed.running_transactions || [];
  if (!running.length) return show(oldest, h('p', { class: 'muted' }, 'No transaction holds an id: nothing holds the feed\'s frontier back.'));
  const tx = running[0];
  show(oldest, h('dl', { class: 'facts', id: 'oldest-facts' },
    h('dt', null, 'Transaction'), h('dd', null, tx.xid),
    h('dt', null, 'Session'), h('dd', null, tx.pid === null ? 'a prepared transaction'
      : `pid ${tx.pid}${tx.application ? `, ${tx.application}` : ''}${tx.role ? `, role ${tx.role}` : ''}${tx.this_database === false ? ', in another database of the cluster' : ''}`),
    h('dt', null, 'Running for'), h('dd', null, tx.age_ms === null ? 'hidden (grant the owner role pg_read_all_stats)' : `${format(tx.age_ms / 1000)} s`),
    h('dt', null, 'State'), h('dd', null, tx.state || '—'),
    h('dt', null, 'Query'), h('dd', null, h('code', null, tx.query || '—'))),
  h('p', { class: 'muted' }, 'Devices receive nothing committed at or after this transaction until it ends.',
    running.length > 1 ? ` ${running.length - 1} younger ${running.length === 2 ? 'one runs' : 'ones run'} too: pids ${running.slice(1).map((item) => item.pid).join(', ')}.` : ''));
}

// Sign-in keys: an admin fetches every identity provider's JWKS now, for a key
// withdrawn at the provider (docs/SIGN-IN.md, "Withdrawing a key").
function keysPanel() {
  const message = h('div', { id: 'refetch-result' });
  const admin = (session.operator || {}).role === 'admin';
  const button = h('button', { type: 'button', class: 'danger', id: 'refetch-keys', disabled: !admin,
    title: admin ? null : 'Refetching keys needs an admin operator',
    onclick: async () => {
      const ok = await confirmAction({
        title: 'Refetch the identity providers\' keys now?',
        text: 'Every JWT provider\'s key set is fetched again now. A key the provider no longer lists is refused on this instance, '
          + 'with every token it verified, once the answer arrives. Other instances: ask each, or send each SIGHUP.',
        action: 'Refetch now',
      });
      if (!ok) return;
      show(message, h('p', { class: 'muted' }, 'Fetching…'));
      try {
        const result = await api('/jwks/refetch', { method: 'POST', body: { confirm: true } });
        const providers = result.providers || [];
        show(message, providers.length
          ? h('ul', null, providers.map((p) => h('li', null, p.status === 'fetched'
            ? `${p.issuer}: fetched, ${p.keys} keys, ${p.withdrawn} withdrawn`
            : `${p.issuer}: ${p.status}${p.reason ? ` (${p.reason})` : ''}; the keys held still serve`)))
          : h('p', { class: 'muted' }, 'No provider has a jwks_url: nothing to fetch.'));
      } catch (error) {
        show(message, errorBox(error));
      }
    } }, 'Refetch keys now…');
  return h('div', { class: 'panel' }, h('h2', null, 'Sign-in keys'), h('p', null, button), message);
}
