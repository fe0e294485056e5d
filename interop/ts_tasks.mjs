// Interop test: the official tasks client (`@modelcontextprotocol/ext-tasks`)
// drives long tools of a 2026-07-28 server. As its README says for such a
// server, it is given a raw dispatch (one JSON-RPC message per POST, with the
// routing headers) and the request framing (protocol version, client info
// and capabilities, the tasks extension among them). A long tool goes
// through the confirmation round trip (the client answers the elicitation),
// becomes a task, and `settle()` returns its result; a second one is
// cancelled through the client while its job is still queued (the server
// runs with LOCAL_JOB_HOLD_MS) and ends `cancelled`.
// Reads MCP_URL and MCP_TOKEN; run by scripts/interop.sh. Prints
// `interop ts-tasks: N passed, N failed` and exits non-zero on a failure.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { check, finish } from './checks.mjs';

const VERSION = '2026-07-28';
const url = new URL(process.env.MCP_URL);
const headers = { authorization: `Bearer ${process.env.MCP_TOKEN}`, 'x-workspace-id': 'ws_main' };
const clientInfo = { name: 'kobana-interop-ts-tasks', version: '1' };
const clientCapabilities = { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };

// The parameter each method's `Mcp-Name` header mirrors.
const NAME_PARAM = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri', 'tasks/get': 'taskId',
                     'tasks/update': 'taskId', 'tasks/cancel': 'taskId' };
// `Mcp-Name`: the value itself when it is plain printable ASCII, else the base64 sentinel form.
const nameHeader = value => (/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !value.startsWith('=?base64?'))
    ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;

// The host's request coordinator: the package hands it a request (method
// and params); the host gives it an id and the JSON-RPC envelope.
const sent = [];
let nextId = 1;
async function rawDispatch(request, options) {
    const h = { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
                'mcp-protocol-version': VERSION, 'mcp-method': request.method };
    const param = NAME_PARAM[request.method];
    if (param && typeof request.params?.[param] === 'string') h['mcp-name'] = nameHeader(request.params[param]);
    sent.push(request.method);
    const answer = await fetch(url, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, ...request }), signal: options?.signal });
    return await answer.json();
}

const elicitations = [];
const onInputRequest = async (request) => {
    elicitations.push(request);
    if (request.kind !== 'elicitation') throw new Error(`unexpected input request ${request.kind}`);
    return { action: 'accept', content: { confirm: true } };
};

const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: VERSION } }, capabilities: { elicitation: { form: {} } } });
const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
let session;
try {
    await client.connect(transport);
    session = createTaskSessionFromClient(client, {
        endpointId: 'kobana-interop', rawDispatch, onInputRequest,
        v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities }
    });

    // A long tool through the confirmation: a task, settled to its result.
    const execution = await session.callTool('emails_reprocess', { id: 'eml_telecom_nov' }, { task: { preference: 'prefer' } });
    check('emails_reprocess became a task', execution.kind === 'task', execution.kind);
    check('after the confirmation (one elicitation answered)', elicitations.length === 1
          && JSON.stringify(elicitations[0].params).includes('Reprocess e-mail'), elicitations);
    const { outcome } = await execution.settle();
    check('settle() completes', outcome.status === 'completed', outcome);
    const result = resultFromTaskOutcome(outcome);
    const payload = result.structuredContent ?? {};
    check('with the tool result (the job, succeeded)', result.isError === false && payload.data?.job?.status === 'succeeded', result);
    check('polled with tasks/get', sent.includes('tasks/get'), sent);

    // A second one, cancelled through the client while queued.
    elicitations.length = 0;
    const second = await session.callTool('emails_reprocess', { id: 'eml_unknown_sender' }, { task: { preference: 'prefer' } });
    check('a second task is created', second.kind === 'task', second.kind);
    await second.cancel();
    const settled = await second.settle();
    check('cancelled through the client, it ends cancelled', settled.outcome.status === 'cancelled', settled.outcome);
    check('the cancel went out as tasks/cancel', sent.includes('tasks/cancel'), sent);
    const view = await session.task(second.handle.taskId).snapshot();
    check('and stays cancelled (its job never ran)', view.status === 'cancelled', view);
} catch (e) {
    check('the tasks client runs', false, `${e?.constructor?.name}: ${e?.message} ${JSON.stringify(e?.cause ?? e?.issues ?? '')?.slice(0, 2000)}`);
} finally {
    await session?.close().catch(() => {});
    await client.close().catch(() => {});
}
finish('ts-tasks');
