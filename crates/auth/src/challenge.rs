//! `WWW-Authenticate` values (RFC 6750, with `resource_metadata` from RFC
//! 9728 on every challenge) and the Protected Resource Metadata document.

use http::StatusCode;
use serde_json::{Value, json};

use super::AuthError;
use inbox_domain::Scope;
use inbox_domain::scopes::join;

/// What a resource publishes about itself.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The canonical URI.
    pub uri: String,
    /// The audience its tokens must carry: the URI, unless the identity
    /// provider names resources otherwise (`MCP_AUDIENCE`).
    pub audience: String,
    /// Where its metadata document is served.
    pub metadata_url: String,
    pub issuer: String,
    /// The scopes a client should ask for when it has no token.
    pub default_scopes: Vec<Scope>,
}

impl Resource {
    /// `https://host/mcp` → `https://host/.well-known/oauth-protected-resource/mcp`.
    pub fn new(uri: &str, issuer: &str, default_scopes: Vec<Scope>) -> Resource {
        let (origin, path) = match uri.split_once("://") {
            Some((scheme, rest)) => {
                let cut = rest.find('/').unwrap_or(rest.len());
                (format!("{scheme}://{}", &rest[..cut]), rest[cut..].to_owned())
            }
            None => (String::new(), uri.to_owned()),
        };
        Resource {
            uri: uri.to_owned(),
            audience: uri.to_owned(),
            metadata_url: format!("{origin}/.well-known/oauth-protected-resource{path}"),
            issuer: issuer.to_owned(),
            default_scopes,
        }
    }

    pub fn metadata(&self, name: &str) -> Value {
        json!({
            "resource": self.uri,
            "authorization_servers": [self.issuer],
            "scopes_supported": self.default_scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        })
    }

    /// The status, challenge and OAuth-style body for an authentication failure.
    pub fn reject(&self, error: &AuthError) -> Challenge {
        let meta = format!("resource_metadata=\"{}\"", self.metadata_url);
        match error {
            AuthError::Missing => Challenge {
                status: StatusCode::UNAUTHORIZED,
                challenge: Some(format!("Bearer {meta}, scope=\"{}\"", join(&self.default_scopes))),
                error: "invalid_token",
                description: "A bearer token is required".into(),
                retry_after: None,
            },
            AuthError::InvalidRequest(why) => Challenge {
                status: StatusCode::BAD_REQUEST,
                challenge: Some(format!("Bearer error=\"invalid_request\", error_description=\"{why}\", {meta}")),
                error: "invalid_request",
                description: (*why).into(),
                retry_after: None,
            },
            AuthError::InvalidToken(why) => Challenge {
                status: StatusCode::UNAUTHORIZED,
                challenge: Some(format!("Bearer error=\"invalid_token\", error_description=\"{why}\", {meta}")),
                error: "invalid_token",
                description: (*why).into(),
                retry_after: None,
            },
            AuthError::Unavailable { retry_after_secs } => Challenge {
                status: StatusCode::SERVICE_UNAVAILABLE,
                challenge: None,
                error: "temporarily_unavailable",
                description: "The token issuer's keys cannot be loaded; try again shortly".into(),
                retry_after: Some(*retry_after_secs),
            },
        }
    }

    /// 403 for a valid token that lacks `needed` (all of them, in one challenge).
    pub fn insufficient_scope(&self, needed: &[Scope]) -> Challenge {
        let scopes = join(needed);
        let description = format!("{scopes} is required");
        Challenge {
            status: StatusCode::FORBIDDEN,
            challenge: Some(format!(
                "Bearer error=\"insufficient_scope\", scope=\"{scopes}\", resource_metadata=\"{}\", error_description=\"{description}\"",
                self.metadata_url
            )),
            error: "insufficient_scope",
            description,
            retry_after: None,
        }
    }
}

/// An authentication or scope failure, ready to be rendered by either edge.
#[derive(Debug, Clone)]
pub struct Challenge {
    pub status: StatusCode,
    pub challenge: Option<String>,
    pub error: &'static str,
    pub description: String,
    pub retry_after: Option<u64>,
}

impl Challenge {
    /// The OAuth-style body used on 401/403 outside JSON-RPC.
    pub fn oauth_body(&self) -> Value {
        json!({"error": self.error, "error_description": self.description})
    }

    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        if let Some(c) = &self.challenge {
            headers.push(("www-authenticate", c.clone()));
        }
        if let Some(r) = self.retry_after {
            headers.push(("retry-after", r.to_string()));
        }
        headers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_url_is_path_inserted() {
        let r = Resource::new("https://inbox.example.com/mcp", "https://auth.example.com", vec![Scope::EmailsRead]);
        assert_eq!(r.metadata_url, "https://inbox.example.com/.well-known/oauth-protected-resource/mcp");
        let challenge = r.reject(&AuthError::Missing).challenge.unwrap();
        assert_eq!(
            challenge,
            "Bearer resource_metadata=\"https://inbox.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"emails:read\""
        );
    }
}
