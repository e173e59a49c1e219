import assert from 'node:assert/strict';
import { it } from 'node:test';
import Fastify from 'fastify';
import { buildSerializer } from './serialization.ts';
import { validatorCompiler } from './validation.ts';

/** A schema ajv and fast-json-stringify refuse to compile. */
const BROKEN = { type: 'no-such-type' };

function app() {
  const fastify = Fastify({ schemaController: { compilersFactory: { buildSerializer } } });
  fastify.setValidatorCompiler(validatorCompiler);
  return fastify;
}

it('compiles a route check and a response serializer on first use, not at registration', async () => {
  const fastify = app();
  fastify.post('/broken-body', { schema: { body: BROKEN } }, async () => ({ ok: true }));
  fastify.get('/broken-response', { schema: { response: { 200: BROKEN } } }, async () => ({
    ok: true,
  }));
  // Registration compiled nothing: the broken schemas do not stop the app from starting...
  await fastify.ready();
  // ...and fail their own routes when first used.
  const body = await fastify.inject({ method: 'POST', url: '/broken-body', payload: {} });
  assert.equal(body.statusCode, 500);
  const response = await fastify.inject({ method: 'GET', url: '/broken-response' });
  assert.equal(response.statusCode, 500);
  await fastify.close();
});

it('checks bodies and serializes answers as the eagerly compiled ones did', async () => {
  const fastify = app();
  fastify.post(
    '/echo',
    {
      schema: {
        body: {
          type: 'object',
          properties: { width: { type: 'integer' } },
          required: ['width'],
          additionalProperties: false,
        },
        querystring: { type: 'object', properties: { n: { type: 'integer' } } },
        response: { 200: { type: 'object', properties: { width: { type: 'integer' } } } },
      },
    },
    async (request) => ({
      ...(request.body as object),
      n: (request.query as { n?: number }).n,
      secret: 'not in the schema',
    }),
  );
  for (let round = 0; round < 2; round++) {
    // Bodies are not coerced; the failed check's errors reach Fastify's 400.
    const bad = await fastify.inject({ method: 'POST', url: '/echo', payload: { width: '1' } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /body\/width must be integer/);
    const unknown = await fastify.inject({
      method: 'POST',
      url: '/echo',
      payload: { width: 1, extra: 1 },
    });
    assert.equal(unknown.statusCode, 400);
    // Query strings are coerced; the serializer drops what its schema does not name.
    const notInteger = await fastify.inject({
      method: 'POST',
      url: '/echo?n=oops',
      payload: { width: 640 },
    });
    assert.equal(notInteger.statusCode, 400, 'a query value that is no integer is refused');
    const ok = await fastify.inject({ method: 'POST', url: '/echo?n=3', payload: { width: 640 } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { width: 640 });
  }
  await fastify.close();
});
