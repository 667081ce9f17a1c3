// Two-factor sign-in in the dashboard (docs/two-factor.md): the QR code of an enrolment's
// otpauth:// URI, drawn here as SVG (no image service, no inline style: the page's CSP holds),
// and what the sign-in's second step sends.
import qrcode from 'qrcode-generator';

export interface TwoFactorState {
  enabled: boolean;
  required: boolean;
  recovery_codes_left: number;
}

/** The sign-in's first answer when the user has a second factor. */
export interface SecondFactorChallenge {
  second_factor: 'totp';
  challenge: string;
  expires_in: number;
}

export interface Enrolment {
  secret: string;
  otpauth_uri: string;
}

/** The QR code of `text` (byte mode, error correction M): dark[row][column]. */
export function qrModules(text: string): boolean[][] {
  const qr = qrcode(0, 'M');
  qr.addData(text, 'Byte');
  qr.make();
  const n = qr.getModuleCount();
  const out: boolean[][] = [];
  for (let r = 0; r < n; r++) {
    const row: boolean[] = [];
    for (let c = 0; c < n; c++) row.push(qr.isDark(r, c));
    out.push(row);
  }
  return out;
}

/** An SVG path drawing the dark modules as unit squares, offset by `margin` (the quiet zone):
 *  one "M x y h1v1h-1z" per dark module, runs of a row merged into one rectangle. */
export function qrPath(modules: boolean[][], margin = 4): string {
  const parts: string[] = [];
  modules.forEach((row, r) => {
    let c = 0;
    while (c < row.length) {
      if (!row[c]) {
        c++;
        continue;
      }
      const start = c;
      while (c < row.length && row[c]) c++;
      parts.push(`M${start + margin} ${r + margin}h${c - start}v1h${start - c}z`);
    }
  });
  return parts.join('');
}

const SVG = 'http://www.w3.org/2000/svg';

/** The QR code of `text` as an <svg> element, scalable, dark on light, with a 4-module quiet
 *  zone. Attributes only: the Content-Security-Policy allows no inline style. */
export function qrSvg(text: string, label: string): SVGSVGElement {
  const modules = qrModules(text);
  const size = modules.length + 8;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('class', 'qr');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('shape-rendering', 'crispEdges');
  const back = document.createElementNS(SVG, 'rect');
  back.setAttribute('width', String(size));
  back.setAttribute('height', String(size));
  back.setAttribute('fill', '#fff');
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', qrPath(modules));
  path.setAttribute('fill', '#000');
  svg.append(back, path);
  return svg;
}

/** What the user typed at the second step, as the API takes it: six digits are a code; anything
 *  else is a recovery code (the server ignores its case, spaces and dashes). */
export function secondFactorBody(challenge: string, typed: string): Record<string, string> {
  const t = typed.replace(/\s+/g, '');
  return /^\d{6}$/.test(t) ? { challenge, code: t } : { challenge, recovery_code: t };
}

/** A base32 secret in groups of four, easier to type into an app by hand. */
export function groupSecret(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

/** Whether a signed-in user must enrol before anything else. */
export const mustEnrol = (s: TwoFactorState | undefined): boolean => !!s && s.required && !s.enabled;
