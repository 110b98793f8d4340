// What a PDF's options mean before any print: which act on the file, paper sizes in inches,
// and what a header or footer template would fetch (nothing may be).

/** The options that act on the PDF file rather than on the print (src/render/outputs/pdf-finish.ts). */
export const pdfDocumentOptions = [
  'pdf_archive',
  'pdf_accessible',
  'pdf_title',
  'pdf_author',
  'pdf_subject',
  'pdf_keywords',
  'pdf_watermark',
  'pdf_watermark_opacity',
  'pdf_watermark_layer',
  'pdf_password',
  'pdf_owner_password',
  'pdf_permissions',
] as const;

// A PDF page is at most 14,400 units (200 in) a side; past a few hundred inches Chromium's print fails.
export const MAX_PAPER_INCHES = 200;
const INCHES_PER_UNIT: Record<string, number> = { px: 1 / 96, in: 1, cm: 1 / 2.54, mm: 1 / 25.4 };

/** A CSS length of the parameter table (`0`, or a number in px, in, cm or mm) in inches. */
export function inchesOf(length: string): number {
  const match = /^([\d.]+)(px|in|cm|mm)?$/i.exec(length);
  return match ? Number(match[1]) * (INCHES_PER_UNIT[match[2]?.toLowerCase() ?? 'px'] ?? 0) : 0;
}

/**
 * The first thing a header or footer template refers to outside itself (an element's src, srcset,
 * poster, data or href, a CSS url() or @import), or undefined; data: URLs and #fragments are
 * inside, and a link's href is never fetched. Chromium loads nothing for a template: an image
 * stays empty and a stylesheet or font fails the print, so such a template is refused up front.
 */
export function fetchedByTemplate(template: string): string | undefined {
  if (/@import\b/i.test(template)) return '@import';
  const outside = (value: string) => value.trim() !== '' && !/^(data:|#)/i.test(value.trim());
  for (const [, tag, attributes] of template.matchAll(/<([a-z][\w:-]*)\b([^>]*)>/gi)) {
    for (const [, name, ...values] of attributes.matchAll(/([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
      const attribute = name.toLowerCase();
      if (
        !/^(src|srcset|poster|data|href|xlink:href)$/.test(attribute) ||
        (attribute === 'href' && tag.toLowerCase() === 'a')
      )
        continue;
      const value = values.find((part) => part !== undefined) ?? '';
      if (outside(value)) return value;
    }
  }
  for (const [, ...values] of template.matchAll(/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)]*))\)/gi)) {
    const value = values.find((part) => part !== undefined) ?? '';
    if (outside(value)) return value;
  }
  return undefined;
}
