// The console's shell: sign-in, navigation by the URL's fragment, and the views.
import { api, session, whenSignedOut } from './client.js';
import { h, show, errorBox } from './dom.js';
import { resourcesView, resourceView } from './view-resources.js';
import { rowsView, rowView } from './view-rows.js';
import { usersView, userView } from './view-user.js';
import { healthView } from './view-health.js';
import { auditView } from './view-audit.js';

const main = document.getElementById('main');
let leaving = () => {};

/** The current route: `#/users/<id>?since=...` gives {parts: ['users', id], params}. */
function route() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, search] = hash.split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(search || '') };
}

async function render() {
  leaving();
  leaving = () => {};
  if (!session.token) return signIn();
  showOperator();
  const { parts, params } = route();
  if (!parts.length) parts.push('resources');
  const section = parts[0];
  for (const link of document.querySelectorAll('[data-nav]')) link.classList.toggle('active', link.dataset.nav === section);
  const context = { main, params, onLeave: (handler) => { leaving = handler; } };
  show(main, h('p', { class: 'muted' }, 'Loading…'));
  try {
    if (section === 'resources' && parts.length === 1) await resourcesView(context);
    else if (section === 'resources' && parts.length === 2) await resourceView(context, parts[1]);
    else if (section === 'resources' && parts[2] === 'rows' && parts.length === 3) await rowsView(context, parts[1]);
    else if (section === 'resources' && parts[2] === 'rows' && parts.length === 4) await rowView(context, parts[1], parts[3]);
    else if (section === 'users' && parts.length === 1) await usersView(context);
    else if (section === 'users' && parts.length === 2) await userView(context, parts[1]);
    else if (section === 'health') await healthView(context);
    else if (section === 'audit') await auditView(context);
    else show(main, h('h1', null, 'Not found'), h('p', null, h('a', { href: '#/resources' }, 'Resources')));
  } catch (error) {
    if (!session.token) return signIn();
    show(main, h('h1', null, 'Something went wrong'), errorBox(error));
  }
}

function showOperator() {
  const operator = session.operator || {};
  document.getElementById('nav').hidden = false;
  show(document.getElementById('who'),
    h('span', { id: 'operator-name' }, `${operator.name || ''} (${operator.role || ''})`),
    h('button', { type: 'button', class: 'secondary', id: 'sign-out', onclick: signOut }, 'Sign out'));
}

async function signOut() {
  try { await api('/session', { method: 'DELETE' }); } catch { /* signed out either way */ }
  session.clear();
  location.hash = '#/resources';
  render();
}

function signIn() {
  document.getElementById('nav').hidden = true;
  show(document.getElementById('who'));
  const name = h('input', { id: 'signin-name', name: 'name', autocomplete: 'username', required: true });
  const password = h('input', { id: 'signin-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const message = h('div');
  const form = h('form', { id: 'signin', onsubmit: async (event) => {
    event.preventDefault();
    show(message);
    try {
      const answer = await api('/session', { method: 'POST', credentials: { name: name.value, password: password.value } });
      session.set(answer.token, answer.operator);
      render();
    } catch (error) {
      show(message, errorBox(error));
    }
  } },
  h('label', null, 'Operator', name), h('label', null, 'Password', password),
  h('button', { type: 'submit', id: 'signin-submit' }, 'Sign in'), message);
  show(main, h('div', { class: 'signin panel' }, h('h1', null, 'Sign in to the console'),
    h('p', { class: 'muted' }, 'Operators are made with ', h('code', null, 'ferry operator add NAME'), '; app users cannot sign in here.'),
    form));
  name.focus();
}

whenSignedOut(() => render());
window.addEventListener('hashchange', render);
render();
