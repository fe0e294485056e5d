// Interop test: the official TypeScript MCP client logs in through the
// development authorization server with its OAuth client provider: 401 →
// protected-resource metadata → authorization-server metadata → dynamic
// client registration → authorization with PKCE (the server runs with
// AUTO_APPROVE, so the login answers at once with the redirect) → finishAuth
// → tools; then its access token is refused (as a revoked or expired one is:
// the server's 401), and the client refreshes and retries. Reads MCP_URL; run by scripts/interop.sh. Prints
// `interop ts-oauth: N passed, N failed` and exits non-zero on a failure.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { check, finish } from './checks.mjs';

const url = new URL(process.env.MCP_URL);
const callback = 'http://127.0.0.1:53128/callback';

// The provider: what a desktop client keeps (in memory here), and its
// "browser": it follows the authorization URL to the redirect the server answers with.
const kept = { client: undefined, tokens: undefined, verifier: undefined, redirect: undefined, issued: 0, logins: 0 };
const provider = {
    get redirectUrl() { return callback; },
    get clientMetadata() {
        return { client_name: 'interop ts oauth', redirect_uris: [callback], grant_types: ['authorization_code', 'refresh_token'],
                 response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'inboxes:read emails:read' };
    },
    clientInformation() { return kept.client; },
    saveClientInformation(info) { kept.client = info; },
    tokens() { return kept.tokens; },
    saveTokens(tokens) { kept.tokens = tokens; kept.issued += 1; },
    saveCodeVerifier(verifier) { kept.verifier = verifier; },
    codeVerifier() { return kept.verifier; },
    async redirectToAuthorization(authorizationUrl) {
        kept.logins += 1;
        const answer = await fetch(authorizationUrl, { redirect: 'manual' });
        kept.redirect = answer.headers.get('location');
        check('authorization answers with a redirect to the callback', answer.status === 302 && (kept.redirect ?? '').startsWith(callback),
              `${answer.status} ${kept.redirect}`);
    }
};

const headers = { 'X-Workspace-Id': 'ws_main' };
const connect = async () => {
    const client = new Client({ name: 'kobana-interop-ts-oauth', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider, requestInit: { headers } });
    await client.connect(transport);
    return { client, transport };
};

try {
    let session;
    try {
        session = await connect();
    } catch (e) {
        check('the first call asks for a login', e instanceof UnauthorizedError, `${e?.constructor?.name}: ${e?.message}`);
        const params = new URL(kept.redirect).searchParams;
        check('the redirect carries iss (RFC 9207)', params.has('iss'), kept.redirect);
        const transport = new StreamableHTTPClientTransport(url, { authProvider: provider, requestInit: { headers } });
        await transport.finishAuth(params);
        session = await connect();
    }
    const tools = await session.client.listTools();
    const names = tools.tools.map(t => t.name);
    check('tools/list after logging in', names.includes('emails_list'), names);
    const result = await session.client.callTool({ name: 'emails_list', arguments: { limit: 1 } });
    check('tools/call emails_list', !result.isError, result);
    check('registered by dynamic client registration', (kept.client?.client_id ?? '').startsWith('dcr_'), kept.client);
    check('a refresh token was issued', Boolean(kept.tokens?.refresh_token), kept.tokens);
    // The server stops accepting the access token: the next call gets a 401,
    // and the client refreshes (no second login) and retries.
    const first = kept.tokens;
    kept.tokens = { ...first, access_token: 'no-longer-accepted' };
    const again = await session.client.callTool({ name: 'inboxes_list', arguments: {} });
    check('tools/call after the access token was refused', !again.isError, again);
    check('the client refreshed (no second login)', kept.issued === 2 && kept.logins === 1, `${kept.issued} token responses, ${kept.logins} logins`);
    check('the refresh rotated both tokens', kept.tokens.access_token !== first.access_token
          && kept.tokens.refresh_token !== first.refresh_token, kept.tokens);
    await session.client.close();
} catch (e) {
    check('the login and the calls', false, `${e?.constructor?.name}: ${e?.message}`);
}
finish('ts-oauth');
