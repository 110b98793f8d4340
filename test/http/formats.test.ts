// The output parameters of /api/take: formats, pdf options and metadata parsed by the table, the
// combinations refused with them, and the Content-Disposition of attachment_name.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseTakeParams, type RawParams } from '../../src/http/params.ts';
import { attachmentDisposition } from '../../src/http/files.ts';

const formats = suite('output formats, pdf and metadata parameters');

const query = (qs: string): RawParams => ({ kind: 'query', entries: [...new URLSearchParams(qs)] });
const problemsOf = (qs: string) => {
  const parsed = parseTakeParams(query(qs));
  return 'problems' in parsed ? parsed.problems.map((p) => p.parameter).sort() : [];
};
const optionsOf = (qs: string) => {
  const parsed = parseTakeParams(query(qs));
  if ('problems' in parsed) throw new Error(JSON.stringify(parsed.problems));
  return parsed.request;
};

formats('every format of §3c parses; pdf and metadata defaults apply', () => {
  for (const format of ['png', 'jpeg', 'webp', 'gif', 'avif', 'tiff', 'pdf', 'html', 'markdown']) {
    assert.is(optionsOf(`url=https://a.example&format=${format}`).options.format, format);
  }
  const { options, control } = optionsOf(
    'url=https://a.example&format=pdf&pdf_margin=10mm&pdf_margin_left=0.5in&response_type=empty&attachment_name=a.pdf',
  );
  assert.is(options.pdf_print_background, true);
  assert.is(options.pdf_paper_format, 'a4');
  assert.is(options.pdf_margin, '10mm');
  assert.is(options.pdf_margin_left, '0.5in');
  assert.is(options.metadata_content_format, 'html');
  assert.is(options.metadata_page_title, false);
  assert.equal([control.response_type, control.attachment_name], ['empty', 'a.pdf']);
});

formats('pdf refuses selector and clip_*; only images take image_width, image_height and metadata_image_size', () => {
  assert.equal(problemsOf('url=https://a.example&format=pdf&selector=%23a'), ['selector']);
  assert.equal(problemsOf('url=https://a.example&format=pdf&clip_x=0&clip_y=0&clip_width=10&clip_height=10'), [
    'clip_height',
    'clip_width',
    'clip_x',
    'clip_y',
  ]);
  assert.equal(problemsOf('url=https://a.example&format=markdown&image_width=100&metadata_image_size=true'), [
    'image_width',
    'metadata_image_size',
  ]);
  assert.equal(problemsOf('url=https://a.example&format=avif&image_width=100&metadata_image_size=true'), []);
  assert.equal(problemsOf('url=https://a.example&format=gif&omit_background=true'), ['omit_background']);
});

formats(
  'pdf_* with another format is ignored, as ScreenshotOne does; margins are CSS lengths; paper formats are the listed ones',
  () => {
    assert.equal(problemsOf('url=https://a.example&pdf_landscape=true&pdf_paper_format=letter'), []);
    assert.equal(problemsOf('url=https://a.example&format=pdf&pdf_margin=10&pdf_margin_top=1em&pdf_paper_format=b5'), [
      'pdf_margin',
      'pdf_margin_top',
      'pdf_paper_format',
    ]);
    assert.equal(
      problemsOf(
        'url=https://a.example&format=pdf&pdf_margin=0&pdf_margin_top=20px&pdf_margin_bottom=1.5cm&pdf_paper_format=letter',
      ),
      [],
    );
    assert.equal(problemsOf('url=https://a.example&response_type=xml&metadata_content_format=text'), [
      'metadata_content_format',
      'response_type',
    ]);
  },
);

formats(
  'attachment_name: an ASCII fallback without quotes, slashes or line breaks, and the exact name in UTF-8',
  () => {
    assert.is(attachmentDisposition('report.pdf'), `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
    assert.is(
      attachmentDisposition('a"b\\c/d\r\nx-é.png'),
      `attachment; filename="a_b_c_d__x-_.png"; filename*=UTF-8''a%22b%5Cc%2Fd%0D%0Ax-%C3%A9.png`,
    );
  },
);

formats.run();
