// Interop test: the official TypeScript MCP client (@modelcontextprotocol/client,
// see package-lock.json) against the running server. Run by scripts/interop.sh as
//   node interop/ts_client.mjs 2026-07-28   pinned to the stateless protocol
//   node interop/ts_client.mjs legacy       initialize handshake (2025-06-18)
// Reads MCP_URL and MCP_TOKEN. Exits non-zero on any failed check and prints
// `interop ts <mode>: N passed, N failed`.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { check, finish } from './checks.mjs';

const mode = process.argv[2] ?? '2026-07-28';
const legacy = mode === 'legacy';
const url = new URL(process.env.MCP_URL);
// The stateless run deletes one seeded e-mail; the legacy run must delete nothing.
const deleteId = legacy ? 'eml_energy_nov' : (process.env.INTEROP_TS_DELETE ?? 'eml_receipt_1');

async function step(name, fn) {
    try {
        await fn();
    } catch (e) {
        check(name, false, `${e?.constructor?.name}: ${e?.message} ${e?.data ? JSON.stringify(e.data) : ''}`);
    }
}
const textOf = result => (result.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');

const client = new Client(
    { name: 'kobana-interop-ts', version: '1' },
    {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: legacy ? 'legacy' : { pin: mode } }
    }
);
// Auto-accepting elicitation handler. On 2026-07-28 the client runs it for each
// elicitation in an `input_required` result and retries with the answers.
client.setRequestHandler('elicitation/create', async request => {
    console.log(`  elicitation: ${JSON.stringify(request.params.message)}`);
    return { action: 'accept', content: { confirm: true } };
});
const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TOKEN}`, 'X-Workspace-Id': 'ws_main' } }
});

async function run() {
    await client.connect(transport);
    const version = client.getNegotiatedProtocolVersion();
    check(`negotiated ${legacy ? '2025-06-18' : mode}`, version === (legacy ? '2025-06-18' : mode), `got ${version}`);

    await step('tools/list', async () => {
        const names = new Set((await client.listTools()).tools.map(t => t.name));
        check('tools/list has emails_get and emails_delete', names.has('emails_get') && names.has('emails_delete'), [...names]);
    });
    await step('tools/call', async () => {
        const result = await client.callTool({ name: 'emails_get', arguments: { id: 'eml_telecom_nov' } });
        const text = textOf(result);
        check('tools/call emails_get', !result.isError && text.includes('"amount_cents":15990'), text.slice(0, 300));
    });
    await step('resources/read', async () => {
        const uri = 'kobana://inbox/emails/eml_telecom_nov';
        const result = await client.readResource({ uri });
        const text = result.contents.map(c => c.text ?? '').join('');
        check('resources/read e-mail', result.contents[0]?.uri === uri && text.includes('eml_telecom_nov'), text.slice(0, 300));
    });
    await step('prompts/get', async () => {
        const result = await client.getPrompt({ name: 'triage_failed_emails', arguments: { inbox_id: 'inb_bills' } });
        const texts = result.messages.map(m => m.content?.text ?? '');
        check('prompts/get triage_failed_emails', texts.some(t => t.includes('inb_bills')), result);
    });
    await step('completion/complete', async () => {
        const result = await client.complete({
            ref: { type: 'ref/prompt', name: 'triage_failed_emails' },
            argument: { name: 'inbox_id', value: 'inb_b' }
        });
        check('completion/complete inbox_id', result.completion.values.includes('inb_bills'), result.completion);
    });
    await step('emails_delete', async () => {
        const result = await client.callTool({ name: 'emails_delete', arguments: { id: deleteId } });
        const text = textOf(result);
        if (legacy) {
            // 2025 era: no stateless elicitation exists, so the server refuses
            // (wire reference §4.6) and nothing is deleted.
            check(`emails_delete ${deleteId} refused with confirmation_required`,
                result.isError === true && text.includes('confirmation_required'), `isError=${result.isError} ${text.slice(0, 300)}`);
            const after = await client.callTool({ name: 'emails_get', arguments: { id: deleteId } });
            check(`${deleteId} still there`, !after.isError && textOf(after).includes(deleteId), textOf(after).slice(0, 300));
        } else {
            check(`emails_delete ${deleteId} after confirmation`,
                !result.isError && text.includes('"deleted":true'), `isError=${result.isError} ${text.slice(0, 300)}`);
        }
    });
    await step('audit_list', async () => {
        // The newest record about the e-mail: the confirmed delete (2026-07-28,
        // with this client's clientInfo); in the 2025 era no delete at all (a
        // refused confirmation never reaches the operation).
        const result = await client.callTool({ name: 'audit_list', arguments: { target_id: deleteId, limit: 1 } });
        const newest = (result.structuredContent?.data ?? [])[0] ?? {};
        if (legacy) {
            check('audit_list: no delete recorded', !result.isError && newest.action !== 'emails_delete' && newest.operation !== 'email_delete', textOf(result).slice(0, 300));
        } else {
            check('audit_list: the delete\'s record names the tool and this client',
                !result.isError && newest.surface === 'mcp' && newest.action === 'emails_delete'
                && newest.status === 200 && newest.client?.name === 'kobana-interop-ts', textOf(result).slice(0, 400));
        }
    });
}

console.log(`interop ts ${mode} (${url}):`);
try {
    await run();
} catch (e) {
    check('connect', false, `${e?.constructor?.name}: ${e?.message}`);
} finally {
    await client.close().catch(() => {});
}
finish(`ts ${mode}`);
