// The PDF document options and the merge's body, validated (docs/capture.md, "PDF for archives and
// documents"): what is refused with 400 request_not_valid, naming each parameter.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../src/errors.ts';
import { parseTakeParams } from '../../src/http/params.ts';
import { parseMerge } from '../../src/http/pdf-merge.ts';
import { sourceOptions } from '../../src/domain/merge.ts';

const test = suite('pdf parameters');

const problems = (body: Record<string, unknown>) => {
  const parsed = parseTakeParams({ kind: 'json', body: { html: '<p>x</p>', ...body } });
  return 'problems' in parsed ? parsed.problems.map((problem) => problem.parameter).sort() : [];
};
const mergeProblems = (body: Record<string, unknown>) => {
  try {
    parseMerge({ kind: 'json', body });
    return [];
  } catch (error) {
    assert.instance(error, ServiceError);
    assert.is((error as ServiceError).code, 'request_not_valid');
    return ((error as ServiceError).details.error_details as { parameter: string }[]).map((p) => p.parameter).sort();
  }
};

test('the document options are for format=pdf only', () => {
  assert.equal(problems({ format: 'png', pdf_title: 'T', pdf_watermark: 'W', pdf_password: 'p' }), [
    'pdf_password',
    'pdf_title',
    'pdf_watermark',
  ]);
  assert.equal(problems({ format: 'pdf', pdf_title: 'T', pdf_watermark: 'W', pdf_password: 'p' }), []);
});

test('pdf_archive refuses encryption and tags; values and ranges are checked', () => {
  assert.equal(problems({ format: 'pdf', pdf_archive: 'a-2b', pdf_password: 'p', pdf_permissions: ['print'] }), [
    'pdf_password',
    'pdf_permissions',
  ]);
  assert.equal(problems({ format: 'pdf', pdf_archive: 'a-2b', pdf_accessible: true }), ['pdf_accessible']);
  assert.equal(problems({ format: 'pdf', pdf_archive: 'a-4' }), ['pdf_archive']);
  assert.equal(problems({ format: 'pdf', pdf_watermark: 'W', pdf_watermark_opacity: 1.5 }), ['pdf_watermark_opacity']);
  assert.equal(problems({ format: 'pdf', pdf_watermark_layer: 'under' }), ['pdf_watermark_layer']);
  assert.equal(problems({ format: 'pdf', pdf_permissions: ['print', 'delete'] }), ['pdf_permissions']);
  assert.equal(problems({ format: 'pdf', pdf_password: 'two\nlines' }), ['pdf_password']);
  assert.equal(problems({ format: 'pdf', pdf_password: 'é'.repeat(64) }), ['pdf_password']);
});

test("a merge: 1 to 20 sources, each its own target and page options; the rest is the merge's", () => {
  assert.equal(mergeProblems({ sources: [] }), ['sources']);
  assert.equal(mergeProblems({ sources: Array.from({ length: 21 }, () => ({ html: 'x' })) }), ['sources']);
  assert.equal(
    mergeProblems({
      format: 'png',
      sources: [{ html: 'x', pdf_password: 'p', response_type: 'json' }, { html: 'x', pdf_scale: 5 }, 'nope'],
    }),
    ['format', 'sources[0].pdf_password', 'sources[0].response_type', 'sources[1].pdf_scale', 'sources[2]'],
  );
  const merge = parseMerge({
    kind: 'json',
    body: {
      pdf_title: 'All',
      pdf_landscape: true,
      response_type: 'json',
      sources: [{ url: 'https://example.com/' }, { html: '<p>two</p>', pdf_landscape: false }],
    },
  });
  assert.is(merge.options.format, 'pdf');
  assert.is(merge.options.pdf_title, 'All');
  assert.is(merge.control.response_type, 'json');
  assert.equal(merge.sources[0], {});
  const second = sourceOptions(merge.options, merge.sources[1]);
  assert.is(second.url, undefined);
  assert.is(second.html, '<p>two</p>');
  assert.is(second.pdf_landscape, false);
  assert.is(second.pdf_title, 'All');
});

test.run();
