// Rules over several parameters, or over a value's meaning, that the table's types cannot say:
// the page's (page-rules.ts) and, here, a screenshot's capture and output. Each names every
// parameter it refuses, so a client fixes them all in one go.
import { formatFacts, formatNamed, isImageFormat, transparentOn, transparentTakeFormats } from './formats.ts';
import { pageRules } from './page-rules.ts';
import { SYNC_MAX_DELAY } from './parameters.ts';
import { fetchedByTemplate, inchesOf, MAX_PAPER_INCHES, pdfDocumentOptions } from './pdf.ts';
import { given, type Refusal, type Rule, unmet, type Values } from './refusal.ts';

// Still importable from here: src/render/ reads them by this path.

// The rules over a screenshot's capture and output.
const captureRules: Rule[] = [
  // A delay that takes the whole timeout given with it could only end in timeout_error (without
  // one, the timeout leaves room for the delay: src/http/params.ts); an animation has a longer
  // default timeout, and rules of its own (src/domain/animation.ts).
  (values) => {
    if (!given(values, 'timeout')) return [];
    const delay = Number(values.delay ?? 0);
    const timeout = Number(values.timeout);
    const overSyncLimit = values.async !== true && delay > SYNC_MAX_DELAY;
    return delay > 0 && delay >= timeout && !overSyncLimit
      ? [{ parameter: 'delay', message: `must be less than timeout (${timeout} s): give a longer timeout with it` }]
      : [];
  },
  (values) => {
    const clip = ['clip_x', 'clip_y', 'clip_width', 'clip_height'];
    const set = clip.filter((name) => given(values, name));
    if (set.length === 0) return [];
    if (set.length < clip.length)
      return clip
        .filter((name) => !set.includes(name))
        .map((parameter) => ({
          parameter,
          message: 'is required: give all four of clip_x, clip_y, clip_width and clip_height',
        }));
    return ['selector', 'full_page']
      .filter((name) => values[name] !== undefined && values[name] !== false)
      .map((name) => ({ parameter: 'clip_x', message: `not with ${name}` }));
  },
  (values) =>
    values.omit_background === true && !transparentOn('take', String(values.format ?? 'png'))
      ? [
          {
            parameter: 'omit_background',
            message: `needs a format with transparency: ${transparentTakeFormats.join(' or ')}`,
          },
        ]
      : [],
  // A PDF, HTML or Markdown is the whole document: no rectangle to cut, no image to scale.
  (values) => {
    const format = String(values.format ?? 'png');
    if (isImageFormat(format)) return [];
    const imageOnly = [
      'selector',
      'clip_x',
      'clip_y',
      'clip_width',
      'clip_height',
      'image_width',
      'image_height',
      'image_quality',
      'metadata_image_size',
      'mask_selectors',
      'mask_color',
    ];
    return imageOnly
      .filter((name) => given(values, name) && values[name] !== false)
      .map((parameter) => ({ parameter, message: `not with format=${format}: it needs an image format` }));
  },
  (values) =>
    unmet(values, [
      ['full_page_algorithm', 'full_page=true', values.full_page === true],
      ['full_page_slices', 'full_page=true', values.full_page === true],
      ['full_page_scroll', 'full_page=true', values.full_page === true],
      [
        'full_page_scroll_delay',
        'full_page=true and full_page_scroll not false',
        values.full_page === true && values.full_page_scroll !== false,
      ],
      [
        'full_page_scroll_by',
        'full_page=true and full_page_scroll not false',
        values.full_page === true && values.full_page_scroll !== false,
      ],
      ['selector_algorithm', 'selector', given(values, 'selector')],
      ['selector_scroll_into_view', 'selector', given(values, 'selector')],
      ['full_page_slice_height', 'full_page_slices=true', values.full_page_slices === true],
      ['full_page_slice_overlap_height', 'full_page_slices=true', values.full_page_slices === true],
    ]),
  (values) => {
    const format = String(values.format ?? 'png');
    const image = isImageFormat(format);
    return ['full_page_slices', 'vision_prompt']
      .filter((name) => given(values, name) && values[name] !== false && !image)
      .map((parameter) => ({ parameter, message: `not with format=${format}: it needs an image format` }));
  },
  // The page kept beside a picture or a print of it: a document format is the page already.
  (values) => {
    const format = String(values.format ?? 'png');
    const named = formatNamed(format);
    const pictured = named !== undefined && ['image', 'document'].includes(formatFacts(named).kind);
    return given(values, 'save_formats') && !pictured
      ? [{ parameter: 'save_formats', message: `not with format=${format}: it needs an image format or pdf` }]
      : [];
  },
  (values) =>
    unmet(values, [
      ['mask_color', 'mask_selectors', given(values, 'mask_selectors')],
      ['save_profile', 'url (a page with an origin)', given(values, 'url')],
    ]),
  (values) => {
    if (values.full_page_slices !== true) return [];
    const height = Number(values.full_page_slice_height ?? 4000);
    const overlap = Number(values.full_page_slice_overlap_height ?? 0);
    return height - overlap < 100
      ? [
          {
            parameter: 'full_page_slice_overlap_height',
            message: 'full_page_slice_height minus full_page_slice_overlap_height must be at least 100',
          },
        ]
      : [];
  },
  // A custom paper: both sides, and not beside a named paper or a page cut to the document.
  (values) => {
    const sides = ['pdf_width', 'pdf_height'].filter((name) => given(values, name));
    if (sides.length === 0) return [];
    if (sides.length === 1)
      return [
        {
          parameter: sides[0] === 'pdf_width' ? 'pdf_height' : 'pdf_width',
          message: 'is required: give both pdf_width and pdf_height',
        },
      ];
    const sizes = sides
      .filter((name) => {
        const inches = inchesOf(String(values[name]));
        return inches <= 0 || inches > MAX_PAPER_INCHES;
      })
      .map((name) => ({ parameter: name, message: `must be more than 0 and at most ${MAX_PAPER_INCHES}in` }));
    return [
      ...sizes,
      ...['pdf_paper_format', 'pdf_fit_one_page']
        .filter((name) => given(values, name) && values[name] !== false)
        .map((name) => ({ parameter: 'pdf_width', message: `not with ${name}` })),
    ];
  },
  // Pages count from 1 and a range runs forwards: known before the page is loaded, unlike a page past the end.
  (values) => {
    if (!given(values, 'pdf_page_ranges')) return [];
    const wrong = String(values.pdf_page_ranges)
      .replace(/\s+/g, '')
      .split(',')
      .find((range) => {
        const [first, last = first] = range.split('-').map(Number);
        return first < 1 || last < first;
      });
    return wrong === undefined
      ? []
      : [
          {
            parameter: 'pdf_page_ranges',
            message: `"${wrong}": pages count from 1 and a range runs from first to last`,
          },
        ];
  },
  (values) =>
    given(values, 'pdf_page_ranges') && values.pdf_fit_one_page === true
      ? [{ parameter: 'pdf_page_ranges', message: 'not with pdf_fit_one_page (one page)' }]
      : [],
  (values) =>
    (['pdf_header', 'pdf_footer'] as const).flatMap((name) => {
      const reference = given(values, name) ? fetchedByTemplate(String(values[name])) : undefined;
      return reference === undefined
        ? []
        : [
            {
              parameter: name,
              message: `"${reference.slice(0, 60)}": a template's images, styles and fonts must be inline (data: URLs); nothing is fetched for a template`,
            },
          ];
    }),
  // The document operations make a PDF's file (docs/capture.md, "PDF for archives and documents").
  (values) => {
    const format = String(values.format ?? 'png');
    if (format === 'pdf') return [];
    return pdfDocumentOptions
      .filter((name) => given(values, name) && values[name] !== false)
      .map((parameter) => ({ parameter, message: `only with format=pdf (it is set on the PDF file)` }));
  },
  (values) =>
    unmet(values, [
      ['pdf_watermark_opacity', 'pdf_watermark', given(values, 'pdf_watermark')],
      ['pdf_watermark_layer', 'pdf_watermark', given(values, 'pdf_watermark')],
    ]),
  // PDF/A forbids encryption; and its converter, Ghostscript, does not keep a tagged PDF's structure.
  (values) => {
    if (!given(values, 'pdf_archive')) return [];
    return [
      ...['pdf_password', 'pdf_owner_password', 'pdf_permissions']
        .filter((name) => given(values, name))
        .map((parameter) => ({ parameter, message: 'not with pdf_archive: PDF/A forbids encryption' })),
      ...(values.pdf_accessible === true
        ? [
            {
              parameter: 'pdf_accessible',
              message:
                'not with pdf_archive: the PDF/A conversion does not keep the tags (a-1b, a-2b, a-3b are not tagged)',
            },
          ]
        : []),
    ];
  },
];

/** Every refusal the rules find in parsed values. */
export function refusals(values: Values): Refusal[] {
  return [...pageRules, ...captureRules].flatMap((rule) => rule(values));
}
