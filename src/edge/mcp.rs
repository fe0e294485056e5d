//! The MCP endpoint's HTTP half, around the protocol half in `crate::mcp`:
//! media type, `Accept` and size (stage A), then `prepare` (parse, era,
//! version errors), then authentication and the rate limit (stage E), then
//! `answer`. Notifications are authenticated and accepted; nothing runs.

use http::HeaderMap;
use serde_json::Value;

use super::Edge;
use super::admit::{NotAdmitted, admit};
use super::gate::{self, MAX_BODY_BYTES};
use crate::mcp::era::ProtocolVersion;
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::{McpReply, Prepared, Trace};

/// One POST to the MCP endpoint.
pub struct McpRequest<'a> {
    pub headers: &'a HeaderMap,
    pub query: Option<&'a str>,
    pub body: &'a [u8],
}

pub async fn handle(edge: &Edge, request: &McpRequest<'_>, trace: &mut Trace) -> McpReply {
    let headers = request.headers;
    let newest = ProtocolVersion::NEWEST;
    // Stages A4–A6.
    let refused = if !gate::is_json(headers) {
        Some(RpcError::unsupported_media_type())
    } else if !gate::accepts_json(headers) {
        Some(RpcError::not_acceptable())
    } else if gate::too_large(headers, request.body.len()) {
        Some(RpcError::too_large(MAX_BODY_BYTES))
    } else {
        None
    };
    if let Some(error) = refused {
        return McpReply::error(None, &error, newest);
    }
    let prepared = match edge.mcp.prepare(request.body, headers, trace) {
        Ok(prepared) => prepared,
        Err(reply) => return reply,
    };
    let (id, version) = match &prepared {
        Prepared::Notification(version) => (None, *version),
        Prepared::Request(r) => (Some(&r.id), r.era.version()),
    };
    let admitted = match admit(edge, &edge.mcp_resource, headers, request.query).await {
        Ok(admitted) => admitted,
        Err(refused) => return not_admitted(id, version, refused),
    };
    trace.sub = Some(admitted.principal.sub.clone());
    let reply = match &prepared {
        Prepared::Notification(version) => McpReply::accepted(*version),
        Prepared::Request(r) => edge.mcp.answer(&edge.api, r, headers, &admitted.principal, trace).await,
    };
    reply.with_headers(&admitted.headers)
}

/// The MCP answer to a request that was not admitted.
fn not_admitted(id: Option<&Value>, version: ProtocolVersion, refused: NotAdmitted) -> McpReply {
    match refused {
        NotAdmitted::Unauthenticated(challenge) => McpReply::rejected(id, &challenge, version),
        NotAdmitted::RateLimited { retry_after, limit, headers } => {
            McpReply::rate_limited(id, version, retry_after, limit).with_headers(&headers)
        }
    }
}
