import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Every picture a browser test takes (kept by CI as artifacts; not committed). */
export const SCREENSHOTS = path.join(__dirname, 'screenshots');
/**
 * The picture of each console page the guides show (named as the page's path): written by the
 * browser test that photographs the page, every run, so a changed page shows in `git diff`.
 */
export const PAGE_SCREENSHOTS = path.join(__dirname, '..', '..', 'docs', 'screenshots');

const CONSOLE = path.join(__dirname, '..', '..', 'packages', 'console');
/** What the pages are drawn from; the API types are left out (types only, nothing drawn). */
const SOURCES = ['src', 'index.html', 'public'].map((entry) => path.join(CONSOLE, entry));
const NOT_DRAWN = (file: string) => file.endsWith('.spec.ts') || file.endsWith('schema.d.ts');

function filesUnder(entry: string): string[] {
  if (!existsSync(entry)) return [];
  if (!statSync(entry).isDirectory()) return [entry];
  return readdirSync(entry).flatMap((child) => filesUnder(path.join(entry, child)));
}

/** A content hash of the console's page sources: what a picture of a page was taken from. */
export function pageSourcesHash(): string {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap(filesUnder)
    .filter((file) => !NOT_DRAWN(file))
    .sort())
    hash.update(path.relative(CONSOLE, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

const STAMP = 'pack-console-sources';
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The PNG with a tEXt chunk naming the page sources it shows, right after its header chunk. */
export function stampedPng(png: Buffer, sourcesHash: string): Buffer {
  const data = Buffer.from(`${STAMP}\0${sourcesHash}`, 'latin1');
  const typeAndData = Buffer.concat([Buffer.from('tEXt', 'latin1'), data]);
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  typeAndData.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(typeAndData), 8 + data.length);
  const afterHeader = 8 + 25; // signature, then IHDR (length, type, 13 bytes, CRC)
  return Buffer.concat([png.subarray(0, afterHeader), chunk, png.subarray(afterHeader)]);
}

/** The page sources hash a PNG was stamped with, or null. */
export function stampOf(png: Buffer): string | null {
  for (let at = 8; at + 8 <= png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type === 'tEXt') {
      const [key, value] = png.toString('latin1', at + 8, at + 8 + length).split('\0');
      if (key === STAMP) return value ?? null;
    }
    at += 12 + length;
  }
  return null;
}
