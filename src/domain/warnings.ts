// What a render that succeeded wants its caller to know (docs/capture.md, "Warnings"): the output
// is not all of the page, or was taken before the page was ready. One table of codes.

/** Every warning code with the message answers carry. */
export const warningTable = {
  full_page_cut: 'The page is taller than the full-page capture may be: the capture was cut.',
  full_page_by_sections:
    'Chromium could not capture the page in one piece: it was captured a viewport at a time and stitched (full_page_algorithm=by_sections).',
  fonts_not_loaded:
    "The page's web fonts were still loading after 5 seconds: the capture went on without waiting longer.",
  image_scaled_down:
    'The image_width or image_height asked for makes the image larger than an image may be: it was scaled down to fit, aspect kept.',
} as const;

/** A warning's code. */
export type WarningCode = keyof typeof warningTable;

/** One warning as a render records it and answers show it. */
export interface RenderWarning {
  code: WarningCode;
  message: string;
}

/** The warning of `code`, with the table's message and, when given, what was measured. */
export function warning(code: WarningCode, detail?: string): RenderWarning {
  return { code, message: detail ? `${warningTable[code]} ${detail}` : warningTable[code] };
}

/** The response header listing a render's warning codes, comma-separated. */
export const WARNINGS_HEADER = 'X-Render-Warnings';
