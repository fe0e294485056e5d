//! The MCP pipeline up to authentication (`McpServer::prepare`: parsing and
//! era selection) on any body and any `MCP-Protocol-Version` / `Mcp-Method`
//! header values. It stops before the store. Invariants: a refusal is a
//! documented status (400, or 404 for a version mismatch that names no
//! method) with a JSON-RPC error body whose code is documented; an accepted
//! request has an id and an era.

use std::sync::{Arc, OnceLock};

use http::{HeaderMap, HeaderValue};
use inbox::auth::challenge::Resource;
use inbox::domain::Scope;
use inbox::mcp::{McpServer, Prepared, ReplyBody, Trace};
use inbox::secrets::Secrets;

fn server() -> &'static McpServer {
    static SERVER: OnceLock<McpServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let secrets = Arc::new(Secrets::new(&["fuzz-signing-secret-0123456789abcdef".to_owned()]));
        let resource = Resource::new("https://inbox.example.com/mcp", "https://auth.example.com", Scope::USER.to_vec());
        McpServer::new(secrets, 600, resource)
    })
}

const DOCUMENTED: [i64; 6] = [-32700, -32600, -32601, -32602, -32020, -32022];

/// The invariants on one input (panics when one is broken).
pub fn check(data: &[u8]) {
    // The first bytes pick header values; the rest is the body.
    let (head, body) = data.split_at(data.len().min(2));
    let mut headers = HeaderMap::new();
    let versions = ["2026-07-28", "2025-06-18", "2025-03-26", "2024-11-05", "", "2026-07-28, 2025-06-18"];
    if let Some(pick) = head.first()
        && let Ok(value) = HeaderValue::from_str(versions[usize::from(*pick) % versions.len()])
    {
        headers.insert("mcp-protocol-version", value);
    }
    if let Some(pick) = head.get(1) {
        let methods = ["tools/list", "tools/call", "initialize", "x"];
        headers.insert("mcp-method", HeaderValue::from_static(methods[usize::from(*pick) % methods.len()]));
    }
    let mut trace = Trace::default();
    match server().prepare(body, &headers, &mut trace) {
        Ok(Prepared::Request(request)) => {
            assert!(request.id.is_string() || request.id.is_number(), "id {}", request.id)
        }
        Ok(Prepared::Notification(_)) => {}
        Err(reply) => {
            assert!(matches!(reply.status.as_u16(), 400 | 404), "status {}", reply.status);
            let Some(ReplyBody::Json(body)) = reply.body else { panic!("no JSON body") };
            let code = body["error"]["code"].as_i64().expect("a JSON-RPC error code");
            assert!(DOCUMENTED.contains(&code), "code {code}: {body}");
            assert_eq!(body["jsonrpc"], "2.0");
        }
    }
}
