import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { errorBody, errorTable, statusOf } from '../src/errors.ts';

const errors = suite('error table');

// Contract §4, row by row.
const contract: Record<string, number> = {
  request_not_valid: 400,
  url_not_allowed: 400,
  name_not_resolved: 400,
  access_key_invalid: 401,
  screenshots_limit_reached: 402,
  email_not_verified: 403,
  signature_is_not_valid: 403,
  signature_is_required: 403,
  not_found: 404,
  request_body_too_large: 413,
  request_header_too_large: 431,
  request_timeout: 408,
  selector_not_found: 422,
  matched_failed_request: 422,
  content_missing_specified_string: 422,
  content_contains_specified_string: 422,
  script_error: 422,
  concurrency_limit_reached: 429,
  host_returned_error: 502,
  network_error: 502,
  storage_upload_failed: 502,
  temporary_unavailable: 503,
  timeout_error: 504,
  internal_application_error: 500,
};

errors('every contract code has its status', () => {
  for (const [code, status] of Object.entries(contract))
    assert.is(statusOf(code as keyof typeof errorTable), status, code);
});

errors('every row has a public message', () => {
  for (const [code, row] of Object.entries(errorTable)) assert.ok(row.message.length > 10, code);
});

errors('the body has the contract shape', () => {
  assert.equal(errorBody('host_returned_error', { returned_status_code: 404 }), {
    is_successful: false,
    error_code: 'host_returned_error',
    error_message: errorTable.host_returned_error.message,
    returned_status_code: 404,
  });
});

errors.run();
