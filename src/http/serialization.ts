import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

const buildDefault = SerializerSelector();

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled on its first use
 * instead of when its route is registered: compiling them all was about a tenth of a start's
 * work on the main thread (docs/deployment.md, "Start-up"), for routes most of which are not
 * called in a node's first seconds. The compiled serializer is kept for good.
 */
export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = buildDefault(externalSchemas, options);
  return (route) => {
    let serialize: ReturnType<typeof compile> | undefined;
    return (doc) => {
      serialize ??= compile(route);
      return serialize(doc);
    };
  };
};
