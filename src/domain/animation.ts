// An animated capture's own vocabulary: its formats, the scroll choreography's options, the
// parameter table of /api/animate (the page rows of /api/take plus these) and its rules.
import { devices } from './devices.ts';
import { transparentOn } from './formats.ts';
import { pageRules } from './page-rules.ts';
import {
  parameters,
  type Flat,
  type Parameter,
  type ParameterGroup,
  type ParameterType,
  type TakeParameter,
  type ValuesOf,
} from './parameters.ts';
import { animationFormats, type AnimationFormat } from './options.ts';
import { given, type Refusal, type Rule } from './refusal.ts';

export { animationFormats, type AnimationFormat };

/** The scroll curves of `scroll_easing`, as ScreenshotOne names them. */
export const scrollEasings = [
  'linear',
  'ease_in_quad',
  'ease_out_quad',
  'ease_in_out_quad',
  'ease_in_cubic',
  'ease_out_cubic',
  'ease_in_out_cubic',
  'ease_in_quart',
  'ease_out_quart',
  'ease_in_out_quart',
  'ease_in_quint',
  'ease_out_quint',
  'ease_in_out_quint',
] as const;

/** One curve of `scroll_easing`. */
export type ScrollEasing = (typeof scrollEasings)[number];

/** The longest recording in seconds, also with `scroll_complete` lengthening it. */
export const MAX_ANIMATION_SECONDS = 30;

/** Frames per second of every recording (docs/animate.md). */
export const RECORDING_FRAME_RATE = 25;

/**
 * The most pixels × frames one recording may make, checked before it starts (docs/animate.md,
 * "Cost"): 1280 × 720 at 25 fps for 30 s, or 1920 × 1080 for 13 s, or 3840 × 2160 for 3 s. The
 * larger of the frames recorded and the output counts, as ffmpeg handles both.
 */
export const RECORDING_PIXEL_FRAME_BUDGET = 1280 * 720 * RECORDING_FRAME_RATE * MAX_ANIMATION_SECONDS;

const flag = { kind: 'boolean' } as const;
const integer = (min: number, max: number) => ({ kind: 'integer', min, max }) as const;
const milliseconds = integer(0, MAX_ANIMATION_SECONDS * 1000);
const row = <
  const Name extends string,
  const Type extends ParameterType,
  const Extra extends Partial<Parameter> = Record<never, never>,
>(
  name: Name,
  type: Type,
  description: string,
  extra?: Extra,
) => {
  const base: { name: Name; type: Type; group: ParameterGroup; role: 'option'; description: string } = {
    name,
    type,
    group: 'animation',
    role: 'option',
    description,
  };
  return Object.assign(base, extra);
};

const rows = [
  row(
    'format',
    { kind: 'enum', values: animationFormats },
    'Output format: mp4 (H.264), webm (VP9), mov (ProRes 4444), avi (MPEG-4) or gif.',
    { default: 'mp4', group: 'output' },
  ),
  row(
    'duration',
    { kind: 'number', min: 1, max: MAX_ANIMATION_SECONDS },
    'Seconds of recording; width × height × 25 fps × duration is at most 1280 × 720 × 25 × 30 pixels × frames.',
    { default: 5 },
  ),
  row(
    'width',
    integer(16, 3840),
    'Width of the output in pixels; with only one of width and height, aspect_ratio gives the other.',
    { defaultText: 'the viewport' },
  ),
  row('height', integer(16, 2160), 'Height of the output in pixels.', { defaultText: 'the viewport' }),
  row(
    'aspect_ratio',
    { kind: 'enum', values: ['4:3', '16:9'] },
    'Width to height of the output when only one of width and height is given.',
    { default: '4:3' },
  ),
  row(
    'scenario',
    { kind: 'enum', values: ['default', 'scroll', ''] },
    'default: the page as it plays; scroll: scrolled down through and back.',
    { default: 'default' },
  ),
  row('scroll_duration', integer(100, MAX_ANIMATION_SECONDS * 1000), 'Milliseconds one scroll step takes.', {
    default: 1500,
  }),
  row('scroll_delay', milliseconds, 'Milliseconds of pause after each scroll step.', { default: 500 }),
  row('scroll_by', integer(1, 100_000), 'Pixels of one scroll step.', { default: 1000 }),
  row(
    'scroll_start_immediately',
    flag,
    'Start scrolling as soon as the recording starts; false: after scroll_start_delay.',
    { default: true },
  ),
  row(
    'scroll_start_delay',
    milliseconds,
    'Milliseconds to wait before the first scroll when scroll_start_immediately is false.',
    { default: 0 },
  ),
  row(
    'scroll_complete',
    flag,
    'Record until the scroll (and the scroll back) is complete, even past duration (at most 30 s in all).',
    { default: true },
  ),
  row('scroll_back', flag, 'Scroll back to the top once the end is reached.', { default: true }),
  row(
    'scroll_back_after_duration',
    milliseconds,
    'Start scrolling back after this many milliseconds, even before the end.',
  ),
  row(
    'scroll_back_algorithm',
    { kind: 'enum', values: ['once', 'repeat'] },
    'once: back to the top in one scroll step; repeat: in steps of scroll_by, as on the way down.',
    { default: 'once' },
  ),
  row(
    'scroll_stop_after_duration',
    milliseconds,
    'Stop scrolling after this many milliseconds (with scroll_back=false).',
  ),
  row(
    'scroll_till_selector',
    { kind: 'string', maxLength: 1000 },
    'Scroll until the first element matching this selector is at the top, not to the end of the page.',
  ),
  row(
    'scroll_till_selector_adjust_top',
    integer(-10_000, 10_000),
    'Pixels to add to where scroll_till_selector stops (negative: above it).',
    { default: 0 },
  ),
  row(
    'scroll_to_end_after',
    milliseconds,
    'After this many milliseconds, the next scroll step goes straight to the end (scenario=scroll).',
  ),
  row('scroll_easing', { kind: 'enum', values: scrollEasings }, 'The curve of each scroll step.', {
    default: 'ease_in_out_quint',
  }),
  row(
    'scroll_try_navigate',
    flag,
    'Go on to another page during the scroll: scroll_navigate_to_url, or a link of the page matching scroll_navigate_link_hints.',
    { default: false },
  ),
  row(
    'scroll_navigate_after',
    milliseconds,
    'Milliseconds of scrolling before the navigation of scroll_try_navigate.',
    { defaultText: 'half the duration' },
  ),
  row(
    'scroll_navigate_to_url',
    { kind: 'string', maxLength: 8192 },
    'Where scroll_try_navigate goes; it obeys the address rules of url.',
  ),
  row(
    'scroll_navigate_link_hints',
    { kind: 'list', item: { kind: 'string', maxLength: 200 }, maxItems: 20 },
    'Words a link of the page is looked for by (its text or address) when no scroll_navigate_to_url is given.',
    { default: ['pricing', 'about', 'customers'] },
  ),
];

/** One row only /api/animate has: a Parameter with its literal name, type and default. */
export type AnimationParameter = (typeof rows)[number] & Parameter;

/** The rows only /api/animate has, in the order the API reference lists them. */
export const animationParameters: readonly AnimationParameter[] = rows;

type RecordingRow = Exclude<AnimationParameter, { name: 'format' }>;

/** The rows of the recording itself; `format` is a render option like a screenshot's. */
export const recordingParameters = animationParameters.filter((p): p is RecordingRow => p.name !== 'format');

/**
 * What to record and how, after validation, with defaults applied; names as in the public API,
 * one field per recording row above, typed by it. Times in ms unless named seconds.
 */
export type AnimationOptions = Flat<Omit<ValuesOf<RecordingRow>, 'scenario'> & NormalisedRecording>;

/** Recording options the parser normalises, so their type is not their row's. */
interface NormalisedRecording {
  /** ScreenshotOne's schema takes an empty scenario as the default one. */
  scenario: Exclude<ValuesOf<RecordingRow>['scenario'], ''>;
}

/** The /api/take rows an animation has no use for: it captures neither one image nor a document. */
const screenshotOnlyNames = [
  'format',
  'image_quality',
  'image_width',
  'image_height',
  'selector',
  'full_page',
  'full_page_scroll',
  'full_page_scroll_delay',
  'full_page_scroll_by',
  'full_page_max_height',
  'full_page_algorithm',
  'full_page_slices',
  'full_page_slice_height',
  'full_page_slice_overlap_height',
  'selector_algorithm',
  'selector_scroll_into_view',
  'capture_beyond_viewport',
  'metadata_image_size',
  'mask_selectors',
  'mask_color',
  'save_formats',
  'save_profile',
  // Outside ScreenshotOne's animate schema, so refused there as here: nothing silently ignored.
  'error_on_selector_not_found',
  'vision_prompt',
  'vision_max_tokens',
  'openai_api_key',
] as const;
const screenshotOnly = new Set<string>(screenshotOnlyNames);

/** A row of /api/take that /api/animate has too (the animate options' types come from these). */
export type SharedParameter = Exclude<TakeParameter, { name: (typeof screenshotOnlyNames)[number] } | { group: 'pdf' }>;

/** The rows of /api/take that /api/animate has too: the very same rows, not copies. */
export const sharedParameters = parameters.filter(
  (p): p is SharedParameter => !screenshotOnly.has(p.name) && p.group !== 'pdf',
);

/**
 * Every row of /api/animate: the page, request, blocking and answer rows of /api/take, then its
 * own. A row /api/take's table gains (the customer's bucket: `store`, `storage_*`) is a row here
 * too unless listed above; with the admission (src/http/take-flow.ts) and the worker's store
 * step shared, an animation's file goes wherever a screenshot's goes.
 */
export const animateParameters: readonly Parameter[] = [...sharedParameters, ...animationParameters];

const CLIP = ['clip_x', 'clip_y', 'clip_width', 'clip_height'];

/** The rules of /api/animate over several parameters (after the page rules of /api/take). */
const animationRules: Rule[] = [
  (values) => {
    const set = CLIP.filter((name) => given(values, name));
    if (set.length === 0) return [];
    if (values.format !== 'gif') return set.map((parameter) => ({ parameter, message: 'needs format=gif' }));
    if (set.length < CLIP.length)
      return CLIP.filter((name) => !set.includes(name)).map((parameter) => ({
        parameter,
        message: 'is required: give all four of clip_x, clip_y, clip_width and clip_height',
      }));
    // The viewport as the render will have it: given, else the device preset's, else the default.
    const preset = given(values, 'viewport_device')
      ? devices.find(String(values.viewport_device))?.viewport
      : undefined;
    let width = Number(values.viewport_width ?? preset?.width ?? 1280);
    let height = Number(values.viewport_height ?? preset?.height ?? 720);
    // viewport_landscape turns a portrait viewport on its side, as the render does (src/render/steps/emulation.ts).
    if (values.viewport_landscape === true && width < height) [width, height] = [height, width];
    const outside =
      Number(values.clip_x) + Number(values.clip_width) > width ||
      Number(values.clip_y) + Number(values.clip_height) > height;
    return outside ? [{ parameter: 'clip_x', message: 'the rectangle must lie inside the viewport' }] : [];
  },
  (values) =>
    values.omit_background === true && !transparentOn('animate', String(values.format ?? 'mp4'))
      ? [{ parameter: 'omit_background', message: 'needs format=mov (ProRes 4444 with alpha)' }]
      : [],
  (values) =>
    given(values, 'scroll_stop_after_duration') && values.scroll_back !== false
      ? [{ parameter: 'scroll_stop_after_duration', message: 'needs scroll_back=false' }]
      : [],
  (values) =>
    given(values, 'scroll_stop_after_duration') && given(values, 'scroll_back_after_duration')
      ? [{ parameter: 'scroll_back_after_duration', message: 'not with scroll_stop_after_duration' }]
      : [],
  (values) =>
    given(values, 'scroll_to_end_after') && values.scenario !== 'scroll'
      ? [{ parameter: 'scroll_to_end_after', message: 'needs scenario=scroll' }]
      : [],
  (values) => {
    const url = values.scroll_navigate_to_url;
    if (url === undefined) return [];
    try {
      const { protocol } = new URL(String(url));
      if (protocol === 'http:' || protocol === 'https:') return [];
    } catch {
      /* refused below */
    }
    return [{ parameter: 'scroll_navigate_to_url', message: 'must be an absolute http or https URL' }];
  },
  // The whole render includes the page's load: the recording alone must leave room for it.
  (values) =>
    given(values, 'timeout') && Number(values.timeout) <= Number(values.duration ?? 5)
      ? [{ parameter: 'timeout', message: 'must be more than duration' }]
      : [],
];

/**
 * What a recording of `values` will cost in pixels × frames: the larger of its frames (the clip of
 * a gif, else the viewport, at the device scale as the recorder captures it) and its output, times
 * RECORDING_FRAME_RATE times `duration`. The viewport is as the render will have it: given, else the
 * device preset's, else the default.
 */
export function recordingCost(values: Record<string, unknown>): {
  width: number;
  height: number;
  pixelFrames: number;
} {
  const preset = given(values, 'viewport_device') ? devices.find(String(values.viewport_device)) : undefined;
  let width = Number(values.viewport_width ?? preset?.viewport.width ?? 1280);
  let height = Number(values.viewport_height ?? preset?.viewport.height ?? 720);
  if (values.viewport_landscape === true && width < height) [width, height] = [height, width];
  const mobile = values.viewport_mobile ?? preset?.isMobile ?? false;
  const scale = mobile === true ? 1 : Number(values.device_scale_factor ?? preset?.deviceScaleFactor ?? 1);
  const clipped = CLIP.every((name) => given(values, name)) && values.format === 'gif';
  const frame = clipped
    ? { width: Number(values.clip_width) * scale, height: Number(values.clip_height) * scale }
    : { width: width * scale, height: height * scale };
  const output = outputSize(
    { width: values.width, height: values.height, aspect_ratio: values.aspect_ratio } as AnimationOptions,
    frame,
    (values.format ?? 'mp4') as AnimationFormat,
  );
  const largest = frame.width * frame.height >= output.width * output.height ? frame : output;
  const seconds = Number(values.duration ?? 5);
  return {
    width: Math.round(largest.width),
    height: Math.round(largest.height),
    pixelFrames: Math.round(largest.width * largest.height * RECORDING_FRAME_RATE * seconds),
  };
}

// The budget of one recording (RECORDING_PIXEL_FRAME_BUDGET): refused up front, naming the duration
// and every size the request gave.
const budgetRule: Rule = (values) => {
  const cost = recordingCost(values);
  if (cost.pixelFrames <= RECORDING_PIXEL_FRAME_BUDGET) return [];
  const seconds = Number(values.duration ?? 5);
  const fits = Math.floor(RECORDING_PIXEL_FRAME_BUDGET / (cost.width * cost.height * RECORDING_FRAME_RATE));
  const message =
    `${cost.width} × ${cost.height} px at ${RECORDING_FRAME_RATE} fps for ${seconds} s is ${cost.pixelFrames.toLocaleString('en')} ` +
    `pixels × frames, over the budget of ${RECORDING_PIXEL_FRAME_BUDGET.toLocaleString('en')} (1280 × 720 for 30 s): ` +
    (fits >= 1 ? `record at most ${fits} s at this size, or a smaller size` : 'record a smaller size');
  const sizes = [
    'width',
    'height',
    'viewport_width',
    'viewport_height',
    'device_scale_factor',
    'clip_width',
    'clip_height',
  ];
  return ['duration', ...sizes.filter((name) => given(values, name))].map((parameter) => ({ parameter, message }));
};

/** Every refusal of the /api/animate rules in parsed values. */
export function animateRefusals(values: Record<string, unknown>): Refusal[] {
  const refusals = [...pageRules, ...animationRules].flatMap((rule) => rule(values));
  // The budget only of a request otherwise valid: its sizes are then numbers of their ranges.
  return refusals.length > 0 ? refusals : budgetRule(values);
}

/**
 * The size of the output in pixels: both of `width` and `height`, one and the other from
 * `aspect_ratio`, or the frame (the clip of a gif, else the viewport) at the device scale.
 * Video encoders need even sides: a video's are rounded down to even.
 */
export function outputSize(
  animation: AnimationOptions,
  frame: { width: number; height: number },
  format: AnimationFormat,
): { width: number; height: number } {
  const [w, h] = animation.aspect_ratio === '16:9' ? [16, 9] : [4, 3];
  const { width, height } = animation;
  const size =
    width !== undefined && height !== undefined
      ? { width, height }
      : width !== undefined
        ? { width, height: Math.round((width * h) / w) }
        : height !== undefined
          ? { width: Math.round((height * w) / h), height }
          : frame;
  if (format === 'gif')
    return { width: Math.max(1, Math.round(size.width)), height: Math.max(1, Math.round(size.height)) };
  const even = (n: number) => Math.max(2, Math.floor(n / 2) * 2);
  return { width: even(size.width), height: even(size.height) };
}
