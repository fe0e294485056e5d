// The MCP Apps views (io.modelcontextprotocol/ui) in a real browser: Debian's
// Chromium, driven by playwright-core, under a minimal host page that follows
// the extension's host side — the view in a sandboxed iframe of another
// origin, served with the policy the extension gives a view that declares no
// domains; JSON-RPC over postMessage: `ui/initialize`, then the tool's
// input and result, the view's `tools/call` proxied to the server (only for
// tools whose visibility includes "app"), `ui/update-model-context` kept.
// The boleto card draws a seeded e-mail's bill; the confirmation view
// approves one deletion and declines another, and the server is asked
// afterwards what happened. Screenshots go to .local/apps/.
// Reads MCP_URL, MCP_TOKEN and CHROMIUM; run by scripts/interop.sh. Prints
// `interop apps-views: N passed, N failed` and exits non-zero on a failure.
import http from 'node:http';
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { check, finish } from './checks.mjs';

const mcpUrl = process.env.MCP_URL;
const token = process.env.MCP_TOKEN;
const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const caps = { elicitation: { form: {} }, extensions: { [UI]: { mimeTypes: [MIME] } } };
fs.mkdirSync('.local/apps', { recursive: true });

let nextId = 1;
// One stateless request, as a 2026-07-28 client that draws views sends it.
async function rpc(method, params = {}) {
    const name = params.name ?? params.uri;
    const headers = {
        authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'x-workspace-id': 'ws_main',
    };
    if (name) headers['mcp-name'] = name;
    const body = { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': caps,
        'io.modelcontextprotocol/clientInfo': { name: 'apps-views-host', version: '1.0.0' },
    } } };
    const response = await fetch(mcpUrl, { method: 'POST', headers, body: JSON.stringify(body) });
    const answer = await response.json();
    if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
}

// The policy the extension has a host give a view that declares no domains.
function viewPolicy(csp = {}) {
    const extra = list => (list && list.length ? ' ' + list.join(' ') : '');
    return `default-src 'none'; script-src 'self' 'unsafe-inline'${extra(csp.resourceDomains)}; ` +
        `style-src 'self' 'unsafe-inline'${extra(csp.resourceDomains)}; img-src 'self' data:${extra(csp.resourceDomains)}; ` +
        `media-src 'self' data:; object-src 'none'; connect-src 'none'${extra(csp.connectDomains)}; frame-src 'none'; base-uri 'self'`;
}

// The host page: the view in a sandboxed iframe of another origin.
const HOST = `<!doctype html><html><head><meta charset="utf-8"><title>Test host</title>
<style>body{margin:0;padding:16px;font:14px system-ui;background:#f1f3f4} iframe{border:1px solid #dadce0;border-radius:8px;width:420px;background:#fff}</style>
</head><body><iframe id="view" sandbox="allow-scripts allow-same-origin" title="view"></iframe>
<script>
const frame = document.getElementById('view');
window.__log = [];
window.__context = null;
const post = (message) => frame.contentWindow.postMessage(message, '*');
const reply = (id, result) => post({ jsonrpc: '2.0', id, result });
const fail = (id, code, message) => post({ jsonrpc: '2.0', id, error: { code, message } });
window.addEventListener('message', async (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data;
  if (!m || m.jsonrpc !== '2.0') return;
  window.__log.push(m);
  if (m.method === 'ui/initialize') {
    reply(m.id, { protocolVersion: '2026-01-26', hostInfo: { name: 'test-host', version: '1.0.0' },
      hostCapabilities: { serverTools: {}, updateModelContext: { text: {} } },
      hostContext: { theme: 'light', displayMode: 'inline', platform: 'web' } });
  } else if (m.method === 'ui/notifications/initialized') {
    post({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: window.__input } });
    post({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: window.__result });
  } else if (m.method === 'ui/notifications/size-changed') {
    if (m.params && m.params.height) frame.style.height = m.params.height + 'px';
  } else if (m.method === 'tools/call') {
    const visible = (window.__visibility[m.params && m.params.name] || []).includes('app');
    if (!visible) { fail(m.id, -32602, 'This tool is not for views'); return; }
    try { reply(m.id, await window.hostCallTool(m.params)); } catch (e) { fail(m.id, -32603, String(e)); }
  } else if (m.method === 'ui/update-model-context') {
    window.__context = m.params;
    reply(m.id, {});
  } else if (m.id !== undefined && m.method) {
    fail(m.id, -32601, 'Method not found');
  }
});
window.__load = (src, input, result, visibility, allow) => {
  window.__input = input; window.__result = result; window.__visibility = visibility;
  // What the view asked for in its _meta.ui.permissions, and nothing else.
  frame.allow = allow;
  frame.src = src;
};
</script></body></html>`;

// Each server on its own loopback port: two origins.
const views = new Map();
const listen = handler => new Promise(resolve => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
});
const hostServer = await listen((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(HOST);
});
const viewServer = await listen((req, res) => {
    const view = views.get(new URL(req.url, 'http://x').pathname.slice(1));
    if (!view) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': viewPolicy(view.csp) });
    res.end(view.html);
});
const hostOrigin = `http://127.0.0.1:${hostServer.address().port}`;
const viewOrigin = `http://127.0.0.1:${viewServer.address().port}`;

let browser;
try {
    // What the server offers this client: the tools' views and the app-only tools.
    const tools = (await rpc('tools/list')).tools;
    const visibility = Object.fromEntries(tools.map(t => [t.name, (t._meta && t._meta.ui && t._meta.ui.visibility) || ['model', 'app']]));
    const linked = name => tools.find(t => t.name === name)?._meta?.ui?.resourceUri;
    check('emails_get links the boleto card', linked('emails_get') === 'ui://kobana-inbox/boleto-card.html', linked('emails_get'));
    check('emails_delete links the confirmation view', linked('emails_delete') === 'ui://kobana-inbox/confirmation.html');
    check('the approval tool is for views only', JSON.stringify(visibility.confirmation_approve) === '["app"]', visibility.confirmation_approve);
    for (const uri of [linked('emails_get'), linked('emails_delete')]) {
        const page = (await rpc('resources/read', { uri })).contents[0];
        check(`${uri} is an MCP App page`, page.mimeType === MIME && page.text.startsWith('<!doctype html>'), page.mimeType);
        const permissions = page._meta?.ui?.permissions ?? {};
        views.set(uri.split('/').pop(), { html: page.text, csp: page._meta?.ui?.csp,
                                          allow: permissions.clipboardWrite ? 'clipboard-write' : '' });
    }

    browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
               '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 480, height: 640 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: viewOrigin });
    // The test reads the clipboard from the host page.
    await context.grantPermissions(['clipboard-read'], { origin: hostOrigin });
    // Every error any frame reports (a refused script or style included: CSP violations are console errors).
    const errors = [];
    const page = await context.newPage();
    page.on('console', message => { if (message.type() === 'error') errors.push(message.text()); });
    page.on('pageerror', error => errors.push(String(error)));
    await page.exposeFunction('hostCallTool', async params => {
        const result = await rpc('tools/call', { name: params.name, arguments: params.arguments });
        delete result.resultType;
        return result;
    });

    // Loads a view with a tool call's input and result; its frame once drawn.
    async function show(file, input, result, ready) {
        errors.length = 0;
        await page.goto(`${hostOrigin}/`);
        const allow = views.get(file).allow;
        await page.evaluate(([src, i, r, v, a]) => window.__load(src, i, r, v, a), [`${viewOrigin}/${file}`, input, result, visibility, allow]);
        await page.waitForFunction(() => window.__log.some(m => m.method === 'ui/notifications/initialized'));
        const frame = page.frames().find(f => f.url().startsWith(viewOrigin));
        await frame.waitForSelector(ready);
        return frame;
    }
    const log = () => page.evaluate(() => window.__log.map(m => m.method ?? `reply:${m.id}`));

    // The boleto card for a seeded, processed e-mail.
    const input = { id: 'eml_telecom_nov' };
    const read = await rpc('tools/call', { name: 'emails_get', arguments: input });
    delete read.resultType;
    const card = await show('boleto-card.html', input, read, '.amount');
    const text = async selector => (await card.textContent(selector))?.trim();
    check('the card shows the amount', await text('.amount') === 'R$ 159,90', await text('.amount'));
    check('the card shows the digitable line as printed',
          await text('.line') === '34191.09123 34567.800007 01234.567897 1 16560000015990', await text('.line'));
    const body = await card.textContent('main');
    check('the card shows the due date and the bank', body.includes('10/12/2026') && body.includes('341 · Itaú'), body);
    check('the card shows the status and the trust', body.includes('processed') && body.includes('unverified sender'), body);
    check('the card shows no subject or body', !body.includes('Sua fatura') && !body.includes('Olá'), body);
    await card.click('button.copy');
    await card.waitForFunction(() => document.querySelector('button.copy').textContent !== 'Copy line');
    check('the copy button copies the line', await card.textContent('button.copy') === 'Copied', await card.textContent('button.copy'));
    const copied = await page.evaluate(() => navigator.clipboard.readText().catch(() => ''));
    check('the clipboard holds the digits', copied === '34191091233456780000701234567897116560000015990', copied);
    const cardLog = await log();
    check('the card initialised as the extension says', cardLog[0] === 'ui/initialize' && cardLog.includes('ui/notifications/initialized') &&
          cardLog.includes('ui/notifications/size-changed'), cardLog);
    check('the card ran under its policy with no console error', errors.length === 0, errors);
    await page.screenshot({ path: '.local/apps/boleto-card.png', fullPage: true });

    // The confirmation view: approve one deletion.
    const asked = await rpc('tools/call', { name: 'emails_delete', arguments: { id: 'eml_rent_dec' } });
    check('a destructive call waits for the view', asked.structuredContent?.result === 'confirmation_pending', asked.structuredContent);
    delete asked.resultType;
    const confirm = await show('confirmation.html', { id: 'eml_rent_dec' }, asked, '#approve');
    const shown = await confirm.textContent('main');
    check('the view says what, to what and where', shown.includes('Delete e-mail') && shown.includes('eml_rent_dec') && shown.includes('ws_main'), shown);
    check('the view shows the record by server facts', shown.includes('inbox "Contas a pagar"'), shown);
    await page.screenshot({ path: '.local/apps/confirmation.png', fullPage: true });
    await confirm.click('#approve');
    await confirm.waitForFunction(() => document.getElementById('outcome').textContent.length > 0);
    check('approving says it was done', (await confirm.textContent('#outcome')) === 'Approved: done.', await confirm.textContent('#outcome'));
    const approvedLog = await page.evaluate(() => window.__log);
    const called = approvedLog.find(m => m.method === 'tools/call');
    check('the approval went through the host as tools/call of the app-only tool',
          called?.params?.name === 'confirmation_approve' && typeof called?.params?.arguments?.token === 'string', called);
    await page.waitForFunction(() => window.__context !== null);
    const told = await page.evaluate(() => window.__context);
    check('the model is told through ui/update-model-context', told?.content?.[0]?.text?.includes('Approved'), told);
    const gone = await rpc('tools/call', { name: 'emails_get', arguments: { id: 'eml_rent_dec' } });
    check('the server deleted the e-mail', gone.isError === true, gone.content?.[0]?.text);
    check('the confirmation view ran with no console error', errors.length === 0, errors);
    await page.screenshot({ path: '.local/apps/confirmation-approved.png', fullPage: true });

    // Decline another: nothing happens.
    const second = await rpc('tools/call', { name: 'emails_delete', arguments: { id: 'eml_unknown_sender' } });
    delete second.resultType;
    const declineView = await show('confirmation.html', { id: 'eml_unknown_sender' }, second, '#decline');
    await declineView.click('#decline');
    await declineView.waitForFunction(() => document.getElementById('outcome').textContent.length > 0);
    check('declining says nothing was done', (await declineView.textContent('#outcome')) === 'Declined: nothing was done.',
          await declineView.textContent('#outcome'));
    const kept = await rpc('tools/call', { name: 'emails_get', arguments: { id: 'eml_unknown_sender' } });
    check('the declined e-mail is still there', kept.isError === false, kept.content?.[0]?.text);
    check('the declined view ran with no console error', errors.length === 0, errors);
    await page.screenshot({ path: '.local/apps/confirmation-declined.png', fullPage: true });
} catch (error) {
    check('the views ran to the end', false, String(error && error.stack || error));
} finally {
    if (browser) await browser.close();
    hostServer.close();
    viewServer.close();
}
finish('apps-views');
