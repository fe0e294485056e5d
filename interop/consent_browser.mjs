// The development authorization server's consent page, in a real browser
// (Debian's Chromium, driven by playwright-core): a client registers, sends
// the person to the page (`prompt=consent`, so the page shows although the
// interop server runs with AUTO_APPROVE), the page names the client, the
// resource and the scopes; the person picks who they are, unticks a scope and
// approves — the browser lands on the client's callback with a code, `state`
// and `iss`, and the code buys a token with only the ticked scopes, for the
// person chosen. Then the person declines: `error=access_denied`.
// Reads MCP_URL, ISSUER_URL and CHROMIUM; run by scripts/interop.sh. Prints
// `interop consent-browser: N passed, N failed` and exits non-zero on a failure.
import http from 'node:http';
import crypto from 'node:crypto';
import { chromium } from 'playwright-core';
import { check, finish } from './checks.mjs';

const issuer = process.env.ISSUER_URL;
const resource = process.env.MCP_URL;

// The client's loopback callback: the browser is redirected here.
const callbacks = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Back in the client</title><p>Signed in.</p>');
});
await new Promise(resolve => callbacks.listen(0, '127.0.0.1', resolve));
const callback = `http://127.0.0.1:${callbacks.address().port}/callback`;

const verifier = crypto.randomBytes(32).toString('base64url');
const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
const claims = token => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

let browser;
try {
    const registered = await fetch(`${issuer}/register`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Browser test client', redirect_uris: [callback], application_type: 'native',
                               token_endpoint_auth_method: 'none' })
    });
    const client = await registered.json();
    check('the client registers', registered.status === 201 && typeof client.client_id === 'string', client);
    const authorize = state => `${issuer}/authorize?${new URLSearchParams({
        response_type: 'code', client_id: client.client_id, redirect_uri: callback, state, resource,
        scope: 'inboxes:read emails:read webhooks:read', code_challenge: challenge, code_challenge_method: 'S256',
        prompt: 'consent' })}`;

    browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        // A closed network: no background connections, no sandbox (root in CI).
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
               '--disable-component-update', '--disable-sync']
    });
    const page = await browser.newPage();

    // The page renders: who asks, for what, and the choices.
    const shown = await page.goto(authorize('approve-1'));
    check('the consent page renders', shown.status() === 200 && (await page.title()).includes('Browser test client'),
          `${shown.status()} ${await page.title()}`);
    check('it names the client', (await page.textContent('#client')) === 'Browser test client', await page.textContent('#client'));
    check('it names the resource', (await page.textContent('#resource')) === resource, await page.textContent('#resource'));
    check('it says where it sends the person back', (await page.textContent('#redirect')) === callback, await page.textContent('#redirect'));
    const scopes = await page.$$eval('input[name=scope]', boxes => boxes.map(b => `${b.value}:${b.checked}`));
    check('it lists the scopes asked for, ticked', scopes.join(' ') === 'inboxes:read:true emails:read:true webhooks:read:true', scopes);
    const people = await page.$$eval('input[name=sub]', radios => radios.map(r => r.value));
    check('it offers the demo people', people.join(' ') === 'usr_admin usr_operator usr_viewer', people);
    check('it runs no script', (await page.$$('script')).length === 0);
    await page.screenshot({ path: '.local/interop/consent.png' });

    // Approve as the operator, without webhooks:read.
    await page.check('input[name=sub][value=usr_operator]');
    await page.uncheck('input[name=scope][value="webhooks:read"]');
    await Promise.all([page.waitForURL(u => u.href.startsWith(callback)), page.click('#approve')]);
    const approved = new URL(page.url()).searchParams;
    check('approving lands on the callback with a code, state and iss', approved.get('code') && approved.get('state') === 'approve-1'
          && approved.get('iss') === issuer, page.url());
    const exchanged = await fetch(`${issuer}/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', client_id: client.client_id, code: approved.get('code') ?? '',
                                    code_verifier: verifier, redirect_uri: callback })
    });
    const tokens = await exchanged.json();
    check('the code buys a token with only the ticked scopes', exchanged.status === 200 && tokens.scope === 'inboxes:read emails:read', tokens);
    const granted = tokens.access_token ? claims(tokens.access_token) : {};
    check('for the person chosen, for the resource named', granted.sub === 'usr_operator'
          && [granted.aud].flat().includes(resource), granted);

    // Decline.
    await page.goto(authorize('deny-1'));
    await Promise.all([page.waitForURL(u => u.href.startsWith(callback)), page.click('#deny')]);
    const denied = new URL(page.url()).searchParams;
    check('declining lands on the callback with access_denied, state and iss', denied.get('error') === 'access_denied'
          && denied.get('state') === 'deny-1' && denied.get('iss') === issuer && !denied.has('code'), page.url());
} catch (e) {
    check('the browser run', false, `${e?.constructor?.name}: ${e?.message}`);
} finally {
    await browser?.close();
    callbacks.close();
}
finish('consent-browser');
