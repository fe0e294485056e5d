//! How clients find this server: its **server card** (SEP-2127, a draft:
//! `GET <mcp-url>/server-card`, media type `application/mcp-server-card+json`)
//! and its **registry entry** (`server.json` at the repository's root, for
//! the MCP registry, schema 2025-12-11). Both are made here from the same
//! constants as the server's `initialize` and `server/discover` identity, so
//! they cannot drift apart; `tests/it/discovery.rs` keeps the committed
//! `server.json` equal to `registry_entry()` and valid against the
//! registry's schema (vendored under `schemas/`).
//!
//! A card is public and static: it names no tool, tenant or credential. It
//! is rendered once per container (`Card::new`) with a strong `ETag` (a
//! digest of its bytes), so a client that has it gets `304 Not Modified`.

use serde_json::{Value, json};

use super::era::ProtocolVersion;
use super::product::{SERVER_TITLE, SERVER_VERSION};

/// The server's name in the registry: reverse DNS of its publisher, one `/`.
pub const REGISTRY_NAME: &str = "br.com.kobana/autonomous-inbox";

/// At most 100 characters (the registry's and the card's rule).
pub const DESCRIPTION: &str =
    "E-mailed Brazilian boletos and Pix codes, read and decoded per workspace, with signed webhooks.";

pub const CARD_SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
pub const REGISTRY_SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
pub const MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// The header that names the workspace (optional: an organization with one
/// workspace needs none).
fn workspace_header() -> Value {
    json!({
        "name": "X-Workspace-Id",
        "description": "The workspace to act on (ws_…), when your organization has more than one",
        "isRequired": false,
        "isSecret": false,
    })
}

fn versions() -> Vec<&'static str> {
    ProtocolVersion::SUPPORTED.iter().map(|v| v.as_str()).collect()
}

/// This deployment's card: its MCP endpoint is `mcp_url`.
pub fn server_card(mcp_url: &str) -> Value {
    json!({
        "$schema": CARD_SCHEMA,
        "name": REGISTRY_NAME,
        "title": SERVER_TITLE,
        "version": SERVER_VERSION,
        "description": DESCRIPTION,
        "remotes": [{
            "type": "streamable-http",
            "url": mcp_url,
            "headers": [workspace_header()],
            "supportedProtocolVersions": versions(),
        }],
    })
}

/// The registry's entry: any deployment of this server, its endpoint on the
/// domain the stack serves (`{domain}`, the template's `DomainName`).
/// Tenancy travels in the token, not in the URL.
pub fn registry_entry() -> Value {
    json!({
        "$schema": REGISTRY_SCHEMA,
        "name": REGISTRY_NAME,
        "title": SERVER_TITLE,
        "description": DESCRIPTION,
        "version": SERVER_VERSION,
        "remotes": [{
            "type": "streamable-http",
            "url": "https://{domain}/mcp",
            "variables": {"domain": {
                "description": "The deployment's domain: its custom domain (DomainName), or its API Gateway host",
                "isRequired": true,
                "format": "string",
            }},
            "headers": [workspace_header()],
        }],
    })
}

/// The card as served: its bytes and their strong `ETag`, made once.
#[derive(Debug, Clone)]
pub struct Card {
    pub body: String,
    pub etag: String,
}

impl Card {
    pub fn new(mcp_url: &str) -> Card {
        let body = server_card(mcp_url).to_string();
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body.as_bytes());
        let etag = format!("\"{}\"", inbox_domain::hex(digest.as_ref().get(..16).unwrap_or_default()));
        Card { body, etag }
    }

    /// Whether `If-None-Match` (a list of tags, or `*`) names this card:
    /// the answer is then 304. Weak comparison, as RFC 9110 asks of it.
    pub fn matches(&self, if_none_match: &str) -> bool {
        if_none_match.split(',').map(str::trim).any(|tag| tag == "*" || tag.trim_start_matches("W/") == self.etag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_fits_the_registry_and_the_tag_is_strong_and_stable() {
        assert!(DESCRIPTION.chars().count() <= 100);
        let (a, b) = (Card::new("https://x.example/mcp"), Card::new("https://x.example/mcp"));
        assert_eq!(a.etag, b.etag);
        assert!(a.etag.starts_with('"') && !a.etag.starts_with("W/"));
        assert_ne!(a.etag, Card::new("https://y.example/mcp").etag, "another deployment, another tag");
        assert!(a.matches(&a.etag) && a.matches(&format!("W/{}", a.etag)) && a.matches("*"));
        assert!(a.matches(&format!("\"other\", {}", a.etag)));
        assert!(!a.matches("\"other\"") && !a.matches(""));
    }
}
