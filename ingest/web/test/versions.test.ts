import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, del, etagOf, put } from '../src/api';
import { isStale, staleText } from '../src/versions';

// The edits the dashboard sends carry the version the page read as If-Match; a 412 (someone
// else changed the record) is an error the page shows as such, and nothing is sent again.
describe('versioned edits', () => {
  const answers: { status: number; body: unknown }[] = [];
  const sent: { method: string; path: string; headers: Record<string, string> }[] = [];

  function fake(status: number, body: unknown): void {
    answers.push({ status, body });
  }

  vi.stubGlobal('fetch', async (path: string, init: { method: string; headers: Record<string, string> }) => {
    sent.push({ method: init.method, path, headers: init.headers });
    const a = answers.shift() ?? { status: 500, body: null };
    return { ok: a.status >= 200 && a.status < 300, status: a.status, text: async () => JSON.stringify(a.body) };
  });

  afterEach(() => {
    answers.length = 0;
    sent.length = 0;
  });

  it('names a version as its strong ETag', () => {
    expect(etagOf(7)).toBe('"v7"');
    expect(etagOf(undefined)).toBeUndefined();
    expect(etagOf(0)).toBe('"v0"'); // a vertical's re-offer setting never made
    expect(etagOf(-1)).toBeUndefined();
    expect(etagOf(Number.NaN)).toBeUndefined();
  });

  it('sends If-Match with the version read, and none without one', async () => {
    fake(200, { success: true, data: { version: 4 } });
    const res = await put<{ data: { version: number } }>('/v1/buyers/by_1', { status: 'paused' }, 3);
    expect(res.data.version).toBe(4);
    expect(sent[0].method).toBe('PUT');
    expect(sent[0].headers['If-Match']).toBe('"v3"');
    fake(200, { success: true });
    await put('/v1/buyers/by_1', { status: 'active' });
    expect(sent[1].headers['If-Match']).toBeUndefined();
    fake(200, { success: true });
    await del('/v1/api-keys/key_1', 1);
    expect(sent[2].headers['If-Match']).toBe('"v1"');
  });

  it('turns a 412 into a stale error, says so plainly, and sends nothing again', async () => {
    fake(412, { type: 'about:blank', title: 'Precondition Failed', status: 412, detail: 'someone else changed this buyer since you read it', etag: '"v5"' });
    let caught: unknown = null;
    try {
      await put('/v1/buyers/by_1', { name: 'Mine' }, 4);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect(isStale(caught)).toBe(true);
    expect(sent.length).toBe(1);  // never retried over the other change
    expect(staleText('buyer')).toMatch(/^Someone else changed this buyer after you opened it, so your change was not saved\. Reload it/);
    expect(isStale(new ApiError(409, 'conflict'))).toBe(false);
    expect(isStale(new Error('x'))).toBe(false);
  });
});
