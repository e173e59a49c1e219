#!/usr/bin/env node
/**
 * `shotsmith-mcp`: the MCP server on stdio, as an MCP host starts it. Configured by
 * SHOTSMITH_API_KEY and SHOTSMITH_URL; a missing or malformed one stops it at once with
 * every problem on stderr (stdout belongs to the protocol) and exit code 2.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { readConfig } from './config.ts';
import { createServer } from './server.ts';

const { config, problems } = readConfig(process.env);
if (problems) {
  for (const problem of problems) console.error(`shotsmith-mcp: ${problem}`);
  console.error('shotsmith-mcp: see docs/mcp.md for a host configuration example');
  process.exit(2);
}
const server = createServer(config);
await server.connect(new StdioServerTransport());
console.error(`shotsmith-mcp: serving ${new URL(config.baseUrl).origin} on stdio`);
