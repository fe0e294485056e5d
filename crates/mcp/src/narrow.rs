//! Narrowing a connection to less than its token allows, never more: only
//! read-only tools (`X-MCP-Readonly: true`, or the path `/mcp/readonly`), or
//! only chosen toolsets (`X-MCP-Toolsets: emails,jobs`, or `/mcp/x/emails,jobs`;
//! the toolsets are `inboxes`, `emails`, `webhooks`, `jobs`, `audit`).
//! Both may be given, in the path and in headers; each narrows further.
//!
//! Tools outside the narrowing are absent from `tools/list` and calling one
//! is the unknown-tool error, before any confirmation is asked. Resources,
//! prompts and completions follow through the caller's scopes, which the
//! narrowing trims: a read-only connection keeps only read scopes; a toolset
//! keeps its resource's scopes. Jobs are checked against the scope of their
//! subject (an e-mail or a webhook), so `jobs` keeps the token's e-mail and
//! webhook scopes for jobs alone (`Principal::job_scopes`): on `/mcp/x/jobs`
//! a job can be read (and, unless read-only, cancelled) while the e-mails,
//! webhooks, their resources, completions and prompts stay out of reach.
//! Anything outside the narrowing is "not found", never a step-up challenge
//! for a scope the token has.

use std::borrow::Cow;

use http::HeaderMap;
use serde_json::json;

use super::era::Header;
use super::jsonrpc::RpcError;
use inbox_api::{self as api, Op};
use inbox_auth::Principal;
use inbox_domain::Scope;
use inbox_domain::provenance::ContentPolicy;

pub const H_READONLY: http::HeaderName = http::HeaderName::from_static("x-mcp-readonly");
pub const H_TOOLSETS: http::HeaderName = http::HeaderName::from_static("x-mcp-toolsets");
pub const H_CONTENT: http::HeaderName = http::HeaderName::from_static("x-mcp-content-policy");

/// The toolsets, by name: each tool belongs to the one its REST resource names.
pub const TOOLSETS: [&str; 5] = ["inboxes", "emails", "webhooks", "jobs", "audit"];

/// What a connection narrowed itself to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Narrowing {
    pub readonly: bool,
    /// One bit per entry of `TOOLSETS`.
    toolsets: u8,
    /// A content policy the connection asked for (`X-MCP-Content-Policy`):
    /// it can only make the workspace's stricter (`Call::content_policy`).
    pub content: Option<ContentPolicy>,
}

impl Default for Narrowing {
    fn default() -> Self {
        Narrowing { readonly: false, toolsets: u8::MAX, content: None }
    }
}

fn bad(header: &str, message: String) -> RpcError {
    RpcError::bad_params(message).with_data(json!({"invalid": header, "toolsets": TOOLSETS}))
}

/// The bits of a comma-separated toolset list.
fn toolsets(list: &str, header: &str) -> Result<u8, RpcError> {
    let mut bits = 0u8;
    for name in list.split(',').map(str::trim) {
        let Some(i) = TOOLSETS.iter().position(|t| t.eq_ignore_ascii_case(name)) else {
            return Err(bad(header, format!("Unknown toolset {name:?}; the toolsets are {}", TOOLSETS.join(", "))));
        };
        bits |= 1 << i;
    }
    Ok(bits)
}

/// Whether `path` is the MCP endpoint: `/mcp` or one of its narrowing
/// forms (`/mcp/readonly`, `/mcp/x/{toolsets}`, whatever the list). The one
/// place that says so: the edge routes by it and answers an MCP path's
/// refusals (the gate's, an unreadable body's) in the MCP shape by it.
pub fn is_mcp_path(path: &str) -> bool {
    path == "/mcp" || path == "/mcp/readonly" || path.starts_with("/mcp/x/")
}

impl Narrowing {
    /// The narrowing as one short string, for what must be bound to the
    /// connection it was made on (a `requestState`: `input::seal`).
    pub fn key(&self) -> String {
        format!("r{}t{:02x}c{}", u8::from(self.readonly), self.toolsets, self.content.map_or("-", |c| c.as_str()))
    }

    /// From the endpoint's path (`/mcp`, `/mcp/readonly`, `/mcp/x/{toolsets}`)
    /// and the request headers.
    pub fn read(path: &str, headers: &HeaderMap) -> Result<Narrowing, RpcError> {
        let mut narrowing = Narrowing::default();
        if !is_mcp_path(path) {
            return Err(bad("path", format!("No MCP endpoint at {path}")));
        }
        if path == "/mcp/readonly" {
            narrowing.readonly = true;
        }
        if let Some(list) = path.strip_prefix("/mcp/x/") {
            let list = percent_encoding::percent_decode_str(list).decode_utf8_lossy();
            narrowing.toolsets &= toolsets(&list, "path")?;
        }
        match Header::read(headers, H_READONLY) {
            Header::Absent => {}
            Header::One(value) if value.eq_ignore_ascii_case("true") => narrowing.readonly = true,
            Header::One(value) if value.eq_ignore_ascii_case("false") => {}
            _ => return Err(bad("X-MCP-Readonly", "X-MCP-Readonly must be true or false".into())),
        }
        match Header::read(headers, H_TOOLSETS) {
            Header::Absent => {}
            Header::One(list) => narrowing.toolsets &= toolsets(list, "X-MCP-Toolsets")?,
            _ => return Err(bad("X-MCP-Toolsets", "X-MCP-Toolsets must be given once".into())),
        }
        let content_error = || {
            RpcError::bad_params(format!(
                "X-MCP-Content-Policy must be given once, as one of {}",
                ContentPolicy::NAMES.join(", ")
            ))
            .with_data(json!({"invalid": "X-MCP-Content-Policy", "policies": ContentPolicy::NAMES}))
        };
        match Header::read(headers, H_CONTENT) {
            Header::Absent => {}
            Header::One(name) => {
                narrowing.content =
                    Some(ContentPolicy::parse(&name.trim().to_ascii_lowercase()).ok_or_else(content_error)?)
            }
            _ => return Err(content_error()),
        }
        Ok(narrowing)
    }

    /// Whether the connection narrowed itself at all.
    pub fn is_narrowed(&self) -> bool {
        *self != Narrowing::default()
    }

    /// Whether a tool mirroring `op` may be listed and called.
    pub fn allows(&self, op: Op) -> bool {
        (!op.is_write() || !self.readonly) && self.toolsets & (1 << toolset(op)) != 0
    }

    fn keeps(&self, scope: Scope) -> bool {
        let (set, write) = match scope {
            Scope::InboxesRead => (0, false),
            Scope::InboxesWrite => (0, true),
            Scope::EmailsRead => (1, false),
            Scope::EmailsWrite => (1, true),
            Scope::WebhooksRead => (2, false),
            Scope::WebhooksWrite => (2, true),
            Scope::EmailsIngest => (1, true),
            Scope::AuditRead => (4, false),
            // Organization administration has no tools: a narrowed
            // connection never carries it.
            Scope::OrgAdmin => return false,
        };
        self.toolsets & (1 << set) != 0 && !(write && self.readonly)
    }

    /// The scopes a job's subject is checked against: with the `jobs`
    /// toolset, the token's e-mail and webhook scopes (reads only on a
    /// read-only connection), whatever other toolsets are kept; without it,
    /// those the narrowing keeps.
    fn keeps_for_jobs(&self, scope: Scope) -> bool {
        let subject =
            matches!(scope, Scope::EmailsRead | Scope::EmailsWrite | Scope::WebhooksRead | Scope::WebhooksWrite);
        let jobs = self.toolsets & (1 << 3) != 0;
        let write = matches!(scope, Scope::EmailsWrite | Scope::WebhooksWrite);
        (jobs && subject && !(write && self.readonly)) || self.keeps(scope)
    }

    /// The caller as this connection narrows it: the same person with only
    /// the scopes the narrowing keeps (no copy when nothing is narrowed).
    pub fn principal<'a>(&self, principal: &'a Principal) -> Cow<'a, Principal> {
        if !self.is_narrowed() {
            return Cow::Borrowed(principal);
        }
        let mut narrowed = principal.clone();
        narrowed.scopes = principal.scopes.retain(|s| self.keeps(s));
        narrowed.job_scopes = principal.job_scopes.retain(|s| self.keeps_for_jobs(s));
        Cow::Owned(narrowed)
    }
}

/// The toolset a tool of `op` belongs to (an index into `TOOLSETS`).
fn toolset(op: Op) -> usize {
    match op.template.as_str().trim_start_matches('/').split('/').next() {
        Some("inboxes") if op == &api::emails::INGEST => 1,
        Some("inboxes") => 0,
        Some("emails") => 1,
        Some("webhooks" | "webhook_deliveries") => 2,
        Some("jobs") => 3,
        Some("audit") => 4,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        map
    }

    #[test]
    fn path_and_headers_narrow_and_never_widen() {
        let none = Narrowing::read("/mcp", &HeaderMap::new()).unwrap();
        assert!(none.allows(&api::webhooks::ROTATE_SECRET));
        let ro = Narrowing::read("/mcp/readonly", &HeaderMap::new()).unwrap();
        assert!(ro.allows(&api::emails::GET) && !ro.allows(&api::emails::DELETE));
        let both = Narrowing::read("/mcp/x/emails,jobs", &headers(&[("x-mcp-toolsets", "jobs,webhooks")])).unwrap();
        assert!(both.allows(&api::jobs::GET));
        assert!(!both.allows(&api::emails::GET) && !both.allows(&api::webhooks::GET), "the intersection");
        let ro = Narrowing::read("/mcp/readonly", &headers(&[("x-mcp-readonly", "false")])).unwrap();
        assert!(ro.readonly, "a header cannot undo the path's narrowing");
        for (path, pairs) in [
            ("/mcp/x/mail", vec![]),
            ("/mcp", vec![("x-mcp-toolsets", "emails,bogus")]),
            ("/mcp", vec![("x-mcp-readonly", "yes")]),
            ("/mcp/other", vec![]),
        ] {
            assert!(Narrowing::read(path, &headers(&pairs)).is_err(), "{path} {pairs:?}");
        }
    }
}
