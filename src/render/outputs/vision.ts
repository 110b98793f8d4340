// vision_prompt (docs/options.md): the capture and the prompt sent to an OpenAI-compatible chat
// completions API (VISION_API_URL: OpenAI's, or a self-hosted model server), its answer kept as `vision`.
import { ServiceError } from '../../errors.ts';
import { contentTypes, formatFacts, type OutputFormat } from '../../domain/formats.ts';

/** What one vision question needs. */
export interface VisionRequest {
  apiUrl: string;
  model: string;
  prompt: string;
  maxTokens?: number;
  /** The customer's key, sent as a Bearer token; none for a server that asks for none. */
  apiKey?: string;
  image: Buffer;
  format: OutputFormat;
  signal: AbortSignal;
}

// Image types chat completions APIs accept in a data URL (the format registry's `vision`); any
// other output is sent as a png.
const sentAs = (format: OutputFormat) => (formatFacts(format).vision ? contentTypes[format] : undefined);

/** Asks the vision API about the image; its text answer, or ServiceError('vision_failed') saying why. */
export async function askVision(request: VisionRequest): Promise<string> {
  let type = sentAs(request.format);
  let image = request.image;
  if (!type) {
    const sharp = (await import('sharp')).default;
    image = await sharp(image, { limitInputPixels: false }).png().toBuffer();
    type = contentTypes.png;
  }
  const body = {
    model: request.model,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: request.prompt },
          { type: 'image_url', image_url: { url: `data:${type};base64,${image.toString('base64')}` } },
        ],
      },
    ],
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
  };
  let response: Response;
  try {
    response = await fetch(request.apiUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(request.apiKey ? { authorization: `Bearer ${request.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: request.signal,
      redirect: 'error',
    });
  } catch (error) {
    if (request.signal.aborted) throw request.signal.reason;
    throw failed('the vision API could not be reached', error);
  }
  const raw = await response.text().catch(() => '');
  let answer: { choices?: { message?: { content?: unknown } }[]; error?: { message?: unknown } } = {};
  try {
    answer = JSON.parse(raw);
  } catch {
    // Not JSON: said below.
  }
  if (!response.ok) {
    const said = typeof answer.error?.message === 'string' ? `: ${answer.error.message.slice(0, 300)}` : '';
    throw failed(`the vision API answered ${response.status}${said}`);
  }
  // A string, or (some servers) a list of parts whose text parts make the answer.
  const content = answer.choices?.[0]?.message?.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content
            .map((part: { type?: unknown; text?: unknown }) =>
              part?.type === 'text' && typeof part.text === 'string' ? part.text : '',
            )
            .join('')
        : '';
  if (text === '') throw failed('the vision API answered with no text');
  return text;
}

function failed(message: string, cause?: unknown): ServiceError {
  return new ServiceError('vision_failed', { error_details: [{ parameter: 'vision_prompt', message }] }, { cause });
}
