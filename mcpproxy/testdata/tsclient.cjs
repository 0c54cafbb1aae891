// A client on the official TypeScript SDK, run by TestTSClientChunks: it
// lists the tools (so the SDK validates results of tools with an
// outputSchema), calls "items" with a small _budget, and fetches every
// declared chunk recursively at that budget and whole. The SDK throws on
// a reply without structuredContent, or with one the schema rejects; the
// client checks that every result and chunk reply carries its
// terse/completeness fact in _meta.
// Usage: node tsclient.cjs COMMAND [ARGS...] (the proxy to spawn), or
// node tsclient.cjs URL (a gateway; its tool is fake__items); with
// NODE_PATH naming the node_modules that hold @modelcontextprotocol/sdk.
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function main() {
  const [command, ...args] = process.argv.slice(2);
  const http = command.startsWith('http');
  const tool = http ? 'fake__items' : 'items';
  const transport = http ? new StreamableHTTPClientTransport(new URL(command))
    : new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
  const client = new Client({ name: 'ts-client', version: '1' });
  await client.connect(transport);
  await client.listTools();
  let calls = 0;
  // checkFact returns the completeness fact of a result, as the SDK
  // passed it on in the result's _meta.
  function checkFact(r, what) {
    const f = r._meta && r._meta['terse/completeness'];
    if (!f || typeof f.complete !== 'boolean') throw new Error(`${what}: no terse/completeness in _meta: ${JSON.stringify(r._meta)}`);
    return f;
  }
  const text = (r) => r.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  async function fetchAll(handle, budget) {
    for (let n = 1; ; n++) {
      const r = await client.callTool({ name: tool, arguments: { _chunk: `${handle}.${n}`, _budget: budget } });
      calls++;
      const t = text(r);
      if (!r.isError) checkFact(r, `chunk ${handle}.${n}`);
      if (r.isError) {
        if (!t.includes('does not exist')) throw new Error(`chunk ${handle}.${n}: ${t}`);
        return;
      }
      const sub = /_chunk "(c_[0-9a-f]{16})\.N"/.exec(t.split('\n').slice(1).join('\n'));
      if (sub) await fetchAll(sub[1], budget);
    }
  }
  for (const [n, big, budget] of [[30, 0, 300], [30, 17, 300], [30, 0, 10]]) {
    const r = await client.callTool({ name: tool, arguments: { n, big, _budget: budget } });
    const h = /c_[0-9a-f]{16}/.exec(text(r));
    if (!h) throw new Error('no handle in: ' + text(r));
    const f = checkFact(r, `items n=${n}`);
    if (f.complete !== false || f.handle !== h[0] || !(f.shown < f.total) || (f.unit === "items" && f.total !== n)) {
      throw new Error(`fitted result's completeness: ${JSON.stringify(f)}`);
    }
    await fetchAll(h[0], budget);
    await fetchAll(h[0], 100000);
  }
  console.log(`ok ${calls} chunk replies accepted`);
  await client.close();
}
main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
