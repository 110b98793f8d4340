// Rendered files' names: unguessable, carrying the day they may be swept, served under FILES_BASE_URL/files/.
import { randomBytes } from 'node:crypto';
import { formatNames, formatTable, type OutputFormat } from './formats.ts';

/** The file extension of a format, without the dot (`jpeg` → `jpg`, `markdown` → `md`). */
export function fileExtension(format: OutputFormat): string {
  return formatTable[format].extension;
}

/** How long a file is kept when nothing asks for longer: as long as the render records that point at it. */
export const DEFAULT_FILE_LIFETIME_SECONDS = 7 * 24 * 3600;

/**
 * File names are the UTC day the file expires (YYYYMMDD), a dash, 32 random hex characters and
 * the extension: unguessable, so served without a key, and sweepable a whole day at a time.
 */
const fileNamePattern = new RegExp(`^(\\d{8})-[0-9a-f]{32}\\.(${formatNames.map(fileExtension).join('|')})$`);

/** The UTC day of a moment as file names carry it (YYYYMMDD). */
export const dayOf = (moment: Date) => moment.toISOString().slice(0, 10).replaceAll('-', '');

/** A new unguessable file name for a file of this format that may be deleted after `expiresAt`. */
export function newFileName(format: OutputFormat, expiresAt: Date): string {
  // Kept to the end of its expiry day, so a file never goes before the cache entry pointing at it.
  return `${dayOf(expiresAt)}-${randomBytes(16).toString('hex')}.${fileExtension(format)}`;
}

/** True when `name` has the shape of a file name this service hands out. */
export function isFileName(name: string): boolean {
  return fileNamePattern.test(name);
}

/** The format of a file this service named, read from its extension. */
export function fileFormat(fileName: string): OutputFormat {
  const extension = fileNamePattern.exec(fileName)![2];
  return formatNames.find((format) => fileExtension(format) === extension)!;
}

/** The moment a file may be swept: the end of the UTC day its name carries. */
export function fileExpiry(fileName: string): Date {
  const day = fileNamePattern.exec(fileName)![1];
  return new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)) + 1));
}

/** The public URL of a stored file, under FILES_BASE_URL (docs/security.md). */
export function fileUrl(baseUrl: string, fileName: string): string {
  return `${baseUrl}/files/${fileName}`;
}
