//! Authentication for an OAuth 2.1 resource server: bearer extraction,
//! JWT verification against the issuer's cached JWKS, and the
//! `WWW-Authenticate` challenges. Knows nothing of MCP, REST or storage.

pub mod challenge;
pub mod claims;
pub mod jwks;
pub mod token;

use http::HeaderMap;

use inbox_domain::{OrgId, Scope, Scopes};

pub use jwks::JwksCache;
pub use token::Verifier;

/// A verified caller: who (issuer and subject), which organization, which scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub iss: String,
    pub sub: String,
    pub org: OrgId,
    pub scopes: Scopes,
    /// The scopes a job's subject is checked against when the caller reads
    /// or cancels a job: the token's own scopes. A connection narrowed to
    /// the `jobs` toolset keeps them for jobs alone, without keeping them for
    /// the e-mails and webhooks themselves (`inbox_mcp::narrow`).
    pub job_scopes: Scopes,
}

impl Principal {
    /// A caller with these scopes for everything, jobs included.
    pub fn new(iss: String, sub: String, org: OrgId, scopes: Scopes) -> Principal {
        Principal { iss, sub, org, scopes, job_scopes: scopes }
    }

    pub fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(scope)
    }

    /// Whether a job whose subject needs `scope` is within this caller's reach.
    pub fn has_for_jobs(&self, scope: Scope) -> bool {
        self.job_scopes.contains(scope)
    }
}

/// Why a request was not authenticated. Each maps to one status and challenge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization` header, or a scheme other than Bearer: 401 without `error`.
    #[error("no bearer token")]
    Missing,
    /// The header is unusable (empty token, several headers, token also in the query): 400.
    #[error("malformed authorization: {0}")]
    InvalidRequest(&'static str),
    /// The token failed verification: 401 `invalid_token`.
    #[error("invalid token: {0}")]
    InvalidToken(&'static str),
    /// No signing keys are available (issuer unreachable and nothing cached): 503.
    #[error("signing keys unavailable")]
    Unavailable { retry_after_secs: u64 },
}

/// Exactly one `Authorization: Bearer <token>` header, nothing in the query.
pub fn bearer<'h>(headers: &'h HeaderMap, query: Option<&str>) -> Result<&'h str, AuthError> {
    let in_query = query.is_some_and(|q| q.split('&').any(|pair| pair.split('=').next() == Some("access_token")));
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let Some(first) = values.next() else {
        // A token only in the query string is never accepted: treat as absent.
        return Err(AuthError::Missing);
    };
    if values.next().is_some() {
        return Err(AuthError::InvalidRequest("more than one Authorization header"));
    }
    let value = first.to_str().map_err(|_| AuthError::InvalidRequest("Authorization is not ASCII"))?;
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::Missing);
    }
    if in_query {
        return Err(AuthError::InvalidRequest("token sent in both header and query"));
    }
    let token = rest.trim_matches(' ');
    if token.is_empty() || token.contains(' ') {
        return Err(AuthError::InvalidRequest("the bearer token is empty or has spaces"));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(http::header::AUTHORIZATION, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn bearer_extraction_rules() {
        assert_eq!(bearer(&headers(&["Bearer abc"]), None), Ok("abc"));
        assert_eq!(bearer(&headers(&["bearer abc"]), None), Ok("abc"));
        assert_eq!(bearer(&headers(&[]), None), Err(AuthError::Missing));
        assert_eq!(bearer(&headers(&[]), Some("access_token=abc")), Err(AuthError::Missing));
        assert_eq!(bearer(&headers(&["Basic dXNlcjpwYXNz"]), None), Err(AuthError::Missing));
        assert!(matches!(bearer(&headers(&["Bearer "]), None), Err(AuthError::InvalidRequest(_))));
        assert!(matches!(bearer(&headers(&["Bearer a b"]), None), Err(AuthError::InvalidRequest(_))));
        assert!(matches!(bearer(&headers(&["Bearer a", "Bearer b"]), None), Err(AuthError::InvalidRequest(_))));
        assert!(matches!(
            bearer(&headers(&["Bearer a"]), Some("x=1&access_token=a")),
            Err(AuthError::InvalidRequest(_))
        ));
    }
}
