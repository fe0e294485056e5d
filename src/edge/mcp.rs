//! The MCP endpoint's HTTP half, around the protocol half in `crate::mcp`:
//! media type, `Accept` and size (stage A), then `prepare` (parse, era,
//! version errors), then authentication and the rate limit (stage E), then
//! `answer`. Notifications are authenticated and accepted; nothing runs.

use http::HeaderMap;
use serde_json::Value;

use super::Edge;
use super::admit::{Counting, NotAdmitted, authenticate};
use crate::gate::{self, MAX_BODY_BYTES};
use crate::mcp::era::ProtocolVersion;
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::{McpReply, Prepared, Trace};
// Every MCP request spends the person's budget: the ingestion route, the
// only one with a budget of its own, has no tool.
use crate::store::rate_limit::Budget;

/// One POST to the MCP endpoint.
pub struct McpRequest<'a> {
    /// `/mcp`, or a narrowing path form (`/mcp/readonly`, `/mcp/x/{toolsets}`).
    pub path: &'a str,
    pub headers: &'a HeaderMap,
    pub query: Option<&'a str>,
    pub body: &'a [u8],
}

pub async fn handle(edge: &Edge, request: &McpRequest<'_>, trace: &mut Trace) -> McpReply {
    let (headers, path) = (request.headers, request.path);
    let newest = ProtocolVersion::NEWEST;
    // Stages A4–A6.
    let refused = if !gate::is_json(headers) {
        Some(RpcError::unsupported_media_type())
    } else if !gate::accepts_json(headers) {
        Some(RpcError::not_acceptable())
    } else if gate::too_large(headers, request.body.len(), MAX_BODY_BYTES) {
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
    let admitted_and_answered = async {
        let principal = match authenticate(edge, &edge.mcp_resource, headers, request.query).await {
            Ok(principal) => principal,
            Err(refused) => return not_admitted(id, version, refused),
        };
        trace.sub = Some(principal.sub.clone());
        let request = match &prepared {
            Prepared::Notification(version) => {
                // Nothing runs: count without waiting.
                return match edge.limiter.admit_read(&principal, Budget::Person).and_then(finish) {
                    Ok(rate) => McpReply::accepted(*version).with_headers(&rate),
                    Err(refused) => not_admitted(None, *version, refused),
                };
            }
            Prepared::Request(r) => r,
        };
        if edge.mcp.changes_state(request) {
            // A write is counted before it runs.
            let rate = match edge.limiter.admit_write(&principal, Budget::Person).await {
                Ok(rate) => rate,
                Err(refused) => return not_admitted(id, version, refused),
            };
            edge.mcp.answer(&edge.api, request, path, headers, &principal, trace).await.with_headers(&rate)
        } else {
            let counting = match edge.limiter.admit_read(&principal, Budget::Person) {
                Ok(counting) => counting,
                Err(refused) => return not_admitted(id, version, refused),
            };
            let reply = edge.mcp.answer(&edge.api, request, path, headers, &principal, trace).await;
            match finish(counting) {
                Ok(rate) => reply.with_headers(&rate),
                Err(refused) => not_admitted(id, version, refused),
            }
        }
    };
    // Not boxed: what runs a table call is boxed where it runs one (the
    // tenancy cache's miss, the write counter, each operation), so this
    // future is small whatever the method.
    match tokio::time::timeout(edge.request_timeout, admitted_and_answered).await {
        Ok(reply) => reply,
        Err(_) => {
            tracing::warn!(budget_ms = edge.request_timeout.as_millis(), "request budget exhausted");
            McpReply::error(id, &crate::mcp::results::unavailable(), version)
        }
    }
}

/// A read's rate verdict once its work is done (none when the limit is off).
fn finish(counting: Option<Counting>) -> Result<Vec<(&'static str, String)>, NotAdmitted> {
    counting.map_or(Ok(Vec::new()), Counting::finish)
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
