import { describe, expect, it } from 'vitest';
import { OVERLAPS, afterRotation, rotationBody, secretState } from '../src/pages/postbacks_rotate';

// A rotation's body: the overlap chosen, in seconds; the default first.
describe('postback secret rotation', () => {
  it('asks for the overlap chosen, 24 hours first', () => {
    expect(OVERLAPS[0][0]).toBe('86400');
    expect(rotationBody('86400')).toEqual({ previous_valid_for_seconds: 86400 });
    expect(rotationBody('0')).toEqual({ previous_valid_for_seconds: 0 });
    for (const [seconds] of OVERLAPS) expect(Number(seconds)).toBeLessThanOrEqual(604800);
  });

  // The list's words for a secret, and what the answer to a rotation adds, in the reader's zone.
  it('says whether the old secret still signs, and until when', () => {
    const e = { id: 'pbe_1', url: 'https://a.example/pb' };
    expect(secretState(e, 'UTC')).toBe('never rotated');
    expect(secretState({ ...e, secret_rotated_at: '2026-11-29T12:00:00.000Z', previous_secret_expires_at: null }, 'UTC')).toMatch(/^rotated .*12:00/);
    const overlapping = { ...e, secret_rotated_at: '2026-11-29T12:00:00.000Z', previous_secret_expires_at: '2026-11-30T12:00:00.000Z' };
    expect(secretState(overlapping, 'UTC')).toMatch(/^old secret valid until .*30.*12:00/);
    expect(afterRotation(overlapping, 'UTC')).toMatch(/still signs .* until .*12:00/);
    expect(afterRotation({ ...e, previous_secret_expires_at: null }, 'UTC')).toMatch(/no longer signs/);
  });
});
