// The console's API client: every request carries the console token (kept in
// sessionStorage, gone when the tab closes), never a user's.

const KEY = 'ferry-console-token';
const OPERATOR = 'ferry-console-operator';

export const session = {
  get token() { return sessionStorage.getItem(KEY); },
  get operator() { try { return JSON.parse(sessionStorage.getItem(OPERATOR)); } catch { return null; } },
  set(token, operator) { sessionStorage.setItem(KEY, token); sessionStorage.setItem(OPERATOR, JSON.stringify(operator)); },
  clear() { sessionStorage.removeItem(KEY); sessionStorage.removeItem(OPERATOR); },
};

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem && problem.detail ? problem.detail : `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

let onSignedOut = () => {};
export function whenSignedOut(handler) { onSignedOut = handler; }

function basic(name, password) {
  const bytes = new TextEncoder().encode(`${name}:${password}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return 'Basic ' + btoa(binary);
}

/** Calls `/console/api<path>`; resolves with the JSON answer, rejects with an ApiError. */
export async function api(path, { method = 'GET', body, credentials } = {}) {
  const headers = { Accept: 'application/json' };
  if (credentials) headers.Authorization = basic(credentials.name, credentials.password);
  else if (session.token) headers.Authorization = 'Bearer ' + session.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch('/console/api' + path, {
    method, headers, cache: 'no-store', credentials: 'omit',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401 && !credentials) { session.clear(); onSignedOut(); }
    throw new ApiError(response.status, data);
  }
  return data;
}

/** A query string from an object, leaving out empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== '') search.append(key, value);
  }
  const text = search.toString();
  return text ? '?' + text : '';
}
