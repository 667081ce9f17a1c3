// The dashboard's only way to the API: same origin, the session cookie, and the session's
// CSRF token on every request that changes something. Problem bodies (RFC 9457) become ApiError,
// with the field errors the API names, so a form can show each next to its field.

export interface FieldError {
  field: string;
  code?: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: FieldError[] = [],
    /** The problem's whole body (a 409 names the record it conflicts with). */
    readonly body: Record<string, any> | null = null,
  ) {
    super(message);
  }
}

/** Reads an error answer's body (problem+json or Surface B's shape) into an ApiError. */
export function toApiError(status: number, body: unknown): ApiError {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const detail = typeof b.detail === 'string' ? b.detail : '';
  const title = typeof b.title === 'string' ? b.title : '';
  const message = detail || title || (typeof b.message === 'string' ? b.message : '') || `HTTP ${status}`;
  const fields: FieldError[] = [];
  if (Array.isArray(b.errors)) {
    for (const e of b.errors) {
      if (e && typeof e === 'object' && typeof (e as FieldError).field === 'string') {
        const fe = e as FieldError;
        fields.push({ field: fe.field, code: fe.code, message: String(fe.message ?? fe.code ?? 'invalid') });
      }
    }
  }
  return new ApiError(status, message, fields, body && typeof body === 'object' ? (b as Record<string, any>) : null);
}

let csrfToken = '';
let onSignedOut: () => void = () => {};

export function setCsrfToken(token: string): void {
  csrfToken = token;
}
/** Called when an API answer says the session is gone (401), so the app shows the sign-in. */
export function setSignedOutHandler(handler: () => void): void {
  onSignedOut = handler;
}

const unsafe = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `ifMatch`: the If-Match header of an edit (the ETag of the version the page read). */
export async function request<T>(method: string, path: string, body?: unknown, ifMatch?: string): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (ifMatch) headers['If-Match'] = ifMatch;
  if (unsafe.has(method) && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  return send<T>(method, path, headers, body === undefined ? undefined : JSON.stringify(body));
}

/** A file as an upload sends it: gzip-compressed (`Content-Encoding: gzip`), a tenth of the
 *  bytes of a list of addresses, when it is already gzip (its first bytes say so: sent as it is)
 *  or the browser can compress (CompressionStream); else as it is. The compressed copy is held
 *  in memory: the front speaks HTTP/1.1, which a browser does not stream a request body over. */
export async function uploadBody(file: Blob): Promise<{ body: Blob; encoding?: 'gzip' }> {
  const magic = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  if (magic.length === 2 && magic[0] === 0x1f && magic[1] === 0x8b) return { body: file, encoding: 'gzip' };
  if (typeof CompressionStream === 'undefined') return { body: file };
  const compressed = await new Response(file.stream().pipeThrough(new CompressionStream('gzip'))).blob();
  return { body: compressed, encoding: 'gzip' };
}

/** Sends a file (`type`: the media type of its content, "text/csv"), compressed as uploadBody
 *  says: an upload, such as a suppression list's entries (PUT /v1/suppression-lists/{id}/entries). */
export async function upload<T>(path: string, file: Blob, type: string): Promise<T> {
  const { body, encoding } = await uploadBody(file);
  const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': type };
  if (encoding) headers['Content-Encoding'] = encoding;
  if (csrfToken) headers['X-CSRF-Token'] = csrfToken;
  return send<T>('PUT', path, headers, body);
}

async function send<T>(method: string, path: string, headers: Record<string, string>, body: BodyInit | undefined): Promise<T> {
  const res = await fetch(path, { method, headers, body, credentials: 'same-origin', cache: 'no-store' });
  const text = await res.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { detail: text.slice(0, 200) };
    }
  }
  if (!res.ok) {
    if (res.status === 401 && path !== '/v1/session') onSignedOut();
    throw toApiError(res.status, parsed);
  }
  return parsed as T;
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body: unknown) => request<T>('POST', path, body);
/** With `version`, the change is made only to that version of the record (else 412). */
export const put = <T>(path: string, body: unknown, version?: number) => request<T>('PUT', path, body, etagOf(version));
export const del = <T>(path: string, version?: number) => request<T>('DELETE', path, undefined, etagOf(version));

/** The If-Match of a record read at `version` (its ETag, "v7" quoted; "v0" for a vertical's
 *  re-offer setting never made); none without one. */
export function etagOf(version: number | undefined): string | undefined {
  return Number.isInteger(version) && (version as number) >= 0 ? `"v${version}"` : undefined;
}

/** A query string from the non-empty values of `params` ("" when none). */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && String(v).trim() !== '') q.set(k, String(v).trim());
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export interface User {
  id: string;
  email: string;
  name: string;
  account: 'operator' | 'seller' | 'buyer';
  seller_id: string | null;
  buyer_id: string | null;
  /** The zone the user reads times and days in (an IANA name; the session's answer). */
  time_zone?: string;
  active?: boolean;
  created_at?: string;
  last_login_at?: string | null;
  version?: number;
}

export interface Session {
  user: User;
  csrf_token: string;
  /** The user's second factor (docs/two-factor.md). */
  two_factor?: { enabled: boolean; required: boolean; recovery_codes_left: number };
}

export interface Page<T> {
  success: boolean;
  data: T[];
  has_more?: boolean;
  next_cursor?: string | null;
}

/** What a person reads of a failure: the API's own words, and in place of the browser's bare
 *  "Failed to fetch" (a TypeError: no answer at all), that the server could not be reached. */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.status >= 500 ? `The server could not answer (HTTP ${e.status}): try again in a moment.` : e.message;
  if (e instanceof TypeError) return 'Could not reach the server: check the connection, then try again.';
  return e instanceof Error ? e.message : String(e);
}
