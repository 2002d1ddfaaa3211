import { randomUUID } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID-style id: 10 chars of time, 16 of randomness (80 bits), sortable by creation time.
 * The randomness comes from randomUUID, which Node draws from a cached block of CSPRNG output
 * (randomBytes(16) per id was a synchronous getrandom round trip on every call).
 */
export function newId(prefix: string): string {
  let t = Date.now();
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  // 20 random hex digits (the UUID's fixed version and variant digits are skipped).
  const u = randomUUID();
  const hex = u.slice(0, 8) + u.slice(9, 13) + u.slice(15, 18) + u.slice(20, 23) + u.slice(24, 26);
  let rand = '';
  for (let g = 0; g < 20; g += 5) {
    let v = parseInt(hex.slice(g, g + 5), 16);
    for (let i = 0; i < 4; i++) {
      rand += ALPHABET[v & 31];
      v >>>= 5;
    }
  }
  return `${prefix}_${time}${rand}`;
}
