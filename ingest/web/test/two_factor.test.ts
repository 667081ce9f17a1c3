import { describe, expect, it } from 'vitest';
import { groupSecret, mustEnrol, qrModules, qrPath, secondFactorBody } from '../src/two_factor';

const URI = 'otpauth://totp/leadflow:ops@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=leadflow&algorithm=SHA1&digits=6&period=30';

// The 15 format bits as ISO/IEC 18004 places them beside the top-left finder (bit i).
function formatBits(m: boolean[][]): number {
  let v = 0;
  const at = (r: number, c: number, i: number) => {
    if (m[r][c]) v |= 1 << i;
  };
  for (let i = 0; i <= 5; i++) at(i, 8, i);
  at(7, 8, 6);
  at(8, 8, 7);
  at(8, 7, 8);
  for (let i = 9; i < 15; i++) at(8, 14 - i, i);
  return v;
}

function bchRemainder(data: number): number {
  let r = data << 10;
  for (let bit = 14; bit >= 10; bit--) if (r & (1 << bit)) r ^= 0x537 << (bit - 10);
  return r;
}

function finderAt(m: boolean[][], top: number, left: number): boolean {
  for (let r = 0; r < 7; r++)
    for (let c = 0; c < 7; c++) {
      const ring = Math.max(Math.abs(r - 3), Math.abs(c - 3));
      if (m[top + r][left + c] !== (ring !== 2)) return false;
    }
  return true;
}

describe('QR code of an otpauth URI', () => {
  const m = qrModules(URI);
  const n = m.length;

  it('is a square of a QR version size', () => {
    expect(m.every((row) => row.length === n)).toBe(true);
    expect((n - 17) % 4).toBe(0);
    // 129 bytes in byte mode at level M need version 8: 49 modules.
    expect(n).toBe(49);
  });

  it('has the three finder patterns, the timing patterns and the dark module', () => {
    expect(finderAt(m, 0, 0)).toBe(true);
    expect(finderAt(m, 0, n - 7)).toBe(true);
    expect(finderAt(m, n - 7, 0)).toBe(true);
    for (let i = 8; i < n - 8; i++) {
      expect(m[6][i]).toBe(i % 2 === 0);
      expect(m[i][6]).toBe(i % 2 === 0);
    }
    expect(m[n - 8][8]).toBe(true);
  });

  it('carries valid format information for error correction level M', () => {
    const v = formatBits(m) ^ 0x5412;
    const data = v >> 10;
    expect(bchRemainder(data)).toBe(v & 0x3ff);
    expect(data >> 3).toBe(0); // level M
  });

  it('is the same for the same text and differs for another', () => {
    expect(qrModules(URI)).toEqual(m);
    expect(qrModules(URI.replace('GEZD', 'MZXW'))).not.toEqual(m);
  });
});

describe('QR path', () => {
  it('draws runs of dark modules as rectangles inside the quiet zone', () => {
    expect(qrPath([[true, true, false], [false, false, true]], 4)).toBe('M4 4h2v1h-2zM6 5h1v1h-1z');
    expect(qrPath([[false]], 4)).toBe('');
  });
  it('covers every dark module of a real code', () => {
    const m = qrModules('leadflow');
    const dark = m.flat().filter(Boolean).length;
    const widths = [...qrPath(m).matchAll(/h(\d+)v1/g)].reduce((a, x) => a + Number(x[1]), 0);
    expect(widths).toBe(dark);
  });
});

describe('second factor', () => {
  it('sends six digits as a code and anything else as a recovery code', () => {
    expect(secondFactorBody('ch', ' 123 456 ')).toEqual({ challenge: 'ch', code: '123456' });
    expect(secondFactorBody('ch', 'ABCD-EFGH-JKLM-NPQR')).toEqual({ challenge: 'ch', recovery_code: 'ABCD-EFGH-JKLM-NPQR' });
    expect(secondFactorBody('ch', '1234567')).toEqual({ challenge: 'ch', recovery_code: '1234567' });
  });
  it('groups a secret by four', () => {
    expect(groupSecret('GEZDGNBVGY3TQOJQ')).toBe('GEZD GNBV GY3T QOJQ');
    expect(groupSecret('GEZ')).toBe('GEZ');
  });
  it('sends an operator to enrolment only when required and not enrolled', () => {
    expect(mustEnrol({ enabled: false, required: true, recovery_codes_left: 0 })).toBe(true);
    expect(mustEnrol({ enabled: true, required: true, recovery_codes_left: 10 })).toBe(false);
    expect(mustEnrol({ enabled: false, required: false, recovery_codes_left: 0 })).toBe(false);
    expect(mustEnrol(undefined)).toBe(false);
  });
});
