// One PDF merged from several documents (POST /api/pdf/merge, docs/capture.md): its sources and
// which options are the merged file's rather than a source's.
import type { RenderOptions } from './options.ts';

/** Most sources one merge may have. */
export const MERGE_MAX_SOURCES = 20;

/**
 * A source's options as they differ from the merge's: a value for each option it sets otherwise,
 * null for one the merge has and it has not (a source of html where the merge's first is a url).
 * The stream then holds the options they share (a long `scripts`, say) once.
 */
export type SourceOptions = { [Name in keyof RenderOptions]?: RenderOptions[Name] | null };

/** `source` as it differs from `merge` (JSON-equal values are the same). */
export function sourceDifference(merge: RenderOptions, source: RenderOptions): SourceOptions {
  const names = new Set([...Object.keys(merge), ...Object.keys(source)]) as Set<keyof RenderOptions>;
  const difference: Record<string, unknown> = {};
  for (const name of names) {
    if (JSON.stringify(merge[name]) === JSON.stringify(source[name])) continue;
    difference[name] = source[name] ?? null;
  }
  return difference as SourceOptions;
}

/** A source's whole options: the merge's with the source's differences. */
export function sourceOptions(merge: RenderOptions, difference: SourceOptions): RenderOptions {
  const options: Record<string, unknown> = { ...merge };
  for (const [name, value] of Object.entries(difference)) {
    if (value === null) delete options[name];
    else options[name] = value;
  }
  // Each source's options passed the parser on their own; merged back, they are what it made.
  return options as RenderOptions;
}

/**
 * The options a merge's sources are printed with: the merge's document operations (a watermark,
 * a password, PDF/A…) are the merged file's, done once on it; a source keeps pdf_accessible, which
 * gives each its title and language.
 */
export function printOptions(options: RenderOptions): RenderOptions {
  const printed: Record<string, unknown> = { ...options };
  for (const name of mergedFileOptions) delete printed[name];
  // The same options less ones that are optional: still what the parser could have made.
  return printed as RenderOptions;
}

/** The document operations a merge does once, on the merged file (src/domain/combinations.ts lists them all). */
export const mergedFileOptions = [
  'pdf_archive',
  'pdf_title',
  'pdf_author',
  'pdf_subject',
  'pdf_keywords',
  'pdf_watermark',
  'pdf_password',
  'pdf_owner_password',
  'pdf_permissions',
] as const satisfies readonly (keyof RenderOptions)[];
