import { describe, expect, it } from 'vitest';
import { ApiError, uploadBody } from '../src/api';
import { SuppressionList, ownerOf, uploadError, uploadSummary } from '../src/pages/suppression';

const list: SuppressionList = {
  list_id: 'sup_1',
  name: 'Customers',
  buyer_id: 'by_1',
  entries: 3,
  created_at: '2026-11-29T10:00:00Z',
  updated_at: '2026-11-29T10:00:00Z',
  uploaded_at: '2026-11-29T10:00:00Z',
};

// What the page says of a list and of an upload.
describe('suppression lists', () => {
  it('names a buyer’s list by its buyer, the operator’s as everyone’s', () => {
    expect(ownerOf(list, new Map([['by_1', 'Acme Auto']]))).toBe('Acme Auto');
    expect(ownerOf(list, new Map())).toBe('by_1');
    expect(ownerOf({ ...list, buyer_id: null }, new Map())).toBe('Everyone (refused at intake)');
  });
  it('says how many entries an upload left and how many lines repeated', () => {
    expect(uploadSummary({ ...list, upload: { read: 4, repeats: 1 } })).toBe('“Customers” now holds 3 entries, 1 repeated line kept once.');
    expect(uploadSummary({ ...list, entries: 1, upload: { read: 1, repeats: 0 } })).toBe('“Customers” now holds 1 entry.');
  });
  it('passes on the lines the API names, and says what is too large', () => {
    expect(uploadError(new ApiError(422, 'line 3 holds no e-mail, phone or SHA-256; nothing was replaced'))).toContain('line 3');
    expect(uploadError(new ApiError(413, 'Content-Length exceeds the body limit.'))).toContain('1 GiB');
  });
});

// What an upload sends: gzip, whether the file came compressed or the browser compressed it.
describe('upload bodies', () => {
  const csv = 'email,reason\nada@example.com,asked\n2025550100,asked\n'.repeat(200);
  const gzip = (b: Blob) => new Response(b.stream().pipeThrough(new CompressionStream('gzip'))).blob();
  const gunzip = (b: Blob) => new Response(b.stream().pipeThrough(new DecompressionStream('gzip'))).text();
  it('compresses a clear file, and the bytes inflate to the file', async () => {
    const { body, encoding } = await uploadBody(new Blob([csv], { type: 'text/csv' }));
    expect(encoding).toBe('gzip');
    expect(body.size).toBeLessThan(csv.length / 10);
    expect(await gunzip(body)).toBe(csv);
  });
  it('sends a file that is gzip already as it is', async () => {
    const file = await gzip(new Blob([csv]));
    const { body, encoding } = await uploadBody(file);
    expect(encoding).toBe('gzip');
    expect(body).toBe(file);
  });
  it('sends a file as it is where the browser cannot compress', async () => {
    const saved = globalThis.CompressionStream;
    // @ts-expect-error: a browser without CompressionStream
    delete globalThis.CompressionStream;
    try {
      const file = new Blob([csv]);
      const { body, encoding } = await uploadBody(file);
      expect(encoding).toBeUndefined();
      expect(body).toBe(file);
    } finally {
      globalThis.CompressionStream = saved;
    }
  });
});
