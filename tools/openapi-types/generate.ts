/**
 * Turns the OpenAPI document into TypeScript types with openapi-typescript, for the web app
 * (scripts/write-openapi-types.ts writes them to web/src/api/schema.d.ts).
 *
 * This folder is a package of its own (a `file:` devDependency of the root) because
 * openapi-typescript 7 builds its output with the TypeScript 5 compiler API, which the
 * project's compiler, TypeScript 7, no longer ships: npm installs the generator here, next to
 * its own TypeScript 5, and the rest of the repository keeps TypeScript 7.
 */
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';

const HEADER = `/**
 * Generated from openapi.json by openapi-typescript (\`npm run openapi:types\`): do not edit.
 * \`npm run typecheck\` fails when this file and openapi.json disagree.
 */

`;

export async function openapiToTypeScript(document: OpenAPI3): Promise<string> {
  const ast = await openapiTS(document, { silent: true });
  return `${HEADER}${astToString(ast)}`;
}
