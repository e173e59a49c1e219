import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from 'typebox';
import { isAppError } from '../domain/errors.ts';
import { bodyChecker } from './validation.ts';

/** The message of the 400 a body gets from the strict body check. */
function messageFor(schema: object, value: unknown): string {
  try {
    bodyChecker(schema)(value);
  } catch (err) {
    assert.ok(isAppError(err));
    return err.message;
  }
  assert.fail('the value was accepted');
}

describe('validation messages', () => {
  const Batch = Type.Object(
    {
      requests: Type.Array(
        Type.Object(
          { url: Type.String(), width: Type.Optional(Type.Integer({ minimum: 1 })) },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 2 },
      ),
    },
    { additionalProperties: false },
  );

  it('names a list item by its index, as requests[3].width', () => {
    const ok = { url: 'http://a/' };
    assert.equal(
      messageFor(Batch, { requests: [ok, { url: 'http://b/', width: 0 }] }),
      'requests[1].width must be >= 1',
    );
    assert.equal(messageFor(Batch, { requests: [ok, {}] }), 'requests[1].url is required');
    assert.equal(
      messageFor(Batch, { requests: [{ ...ok, nope: 1 }] }),
      'unknown field "requests[0].nope"',
    );
    assert.equal(messageFor(Batch, { requests: [ok, 'x'] }), 'requests[1] must be an object');
  });

  it('says how many items a list needs', () => {
    assert.equal(messageFor(Batch, { requests: [] }), 'requests must have at least 1 item');
    const three = Array.from({ length: 3 }, () => ({ url: 'http://a/' }));
    assert.equal(messageFor(Batch, { requests: three }), 'requests must have at most 2 items');
  });
});
