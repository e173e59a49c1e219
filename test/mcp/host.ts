/**
 * The MCP server as an MCP host runs it, for the tests of test/mcp: a child process on stdio
 * (from source), driven by the official SDK's Client; and readers of its tool results.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PAGE_TEXT_CLOSE, PAGE_TEXT_OPEN } from '../../packages/mcp/src/page-text.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
const MAIN = path.join(ROOT, 'packages', 'mcp', 'src', 'main.ts');
/** In the repository the server runs from source: the client's export condition for it. */
export const NODE_ARGS = ['--conditions=shotsmith-source', MAIN];

export type Content = CallToolResult['content'][number];
export type Json = Record<string, unknown>;

export const texts = (result: CallToolResult): string[] =>
  result.content.flatMap((c: Content) => (c.type === 'text' ? [c.text] : []));
/** The last text content, which each tool makes its JSON facts. */
export const facts = (result: CallToolResult): Json =>
  JSON.parse(texts(result).at(-1) ?? '{}') as Json;

/** Servers started as a host starts them (the command, its args, its env block), closed together. */
export function mcpHost() {
  const clients: Client[] = [];
  return {
    async connect(env: Record<string, string>): Promise<Client> {
      const client = new Client({ name: 'shotsmith-test', version: '0.0.0' });
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: NODE_ARGS,
        env: { PATH: process.env.PATH ?? '', ...env },
        stderr: 'pipe',
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async close(): Promise<void> {
      for (const client of clients) await client.close().catch(() => undefined);
    },
  };
}

export const call = async (client: Client, name: string, args: Json = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

/** One line of the page-text block: `name: "json string"`, maybe with the cut's note. */
const VALUE_LINE =
  /^([A-Za-z_][\w.[\]()]*): ("(?:[^"\\]|\\.)*")( \(cut: \d+ characters in all\))?$/;

/**
 * The result's page-text block, checked for its shape, as name -> value (each value parsed
 * back from its JSON string). The delimiters must occur once each in the whole result, the
 * block must be one text content of its own, and no value line may hold a `<` or `>`: a page
 * that wrote the closing delimiter did not end the block.
 */
export function pageBlock(result: CallToolResult): Map<string, string> {
  const all = texts(result).join('\n');
  assert.equal(all.split(PAGE_TEXT_OPEN).length, 2, 'the block opens once');
  assert.equal(all.split(PAGE_TEXT_CLOSE).length, 2, 'the block closes once');
  const block = texts(result).find((t) => t.includes(PAGE_TEXT_OPEN));
  assert.ok(block !== undefined);
  const lines = block.split('\n');
  assert.match(lines[0] ?? '', /^Untrusted text from the captured web page follows/);
  assert.equal(lines[1], PAGE_TEXT_OPEN);
  assert.equal(lines.at(-1), PAGE_TEXT_CLOSE);
  const values = new Map<string, string>();
  for (const line of lines.slice(2, -1)) {
    if (/^\(\d+ more values not shown\)$/.test(line)) continue;
    const match = VALUE_LINE.exec(line);
    assert.ok(match, `a value line: ${line.slice(0, 300)}`);
    assert.doesNotMatch(line, /[<>]/);
    values.set(match[1] as string, JSON.parse(match[2] as string) as string);
  }
  return values;
}

/** The result's texts with the page-text block taken out: what the server says itself. */
export function outsideBlock(result: CallToolResult): string {
  return texts(result)
    .filter((t) => !t.includes(PAGE_TEXT_OPEN))
    .join('\n');
}

/**
 * Whether `text` holds a character a reader would not see or that ends a line, other than the
 * line feeds between the lines of a result: none may reach the model raw.
 */
export const hasHidden = (text: string): boolean =>
  /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Zl}\p{Zp}]/u.test(text.replaceAll('\n', ''));
