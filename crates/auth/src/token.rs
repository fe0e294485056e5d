//! JWT verification: the algorithm comes from the cached key (never from the
//! token alone) and must be RS256, ES256 or EdDSA; then signature, `iss`,
//! the audience (`aud` as a string or array, normalised, or the provider's
//! own claim — then an `aud` the token carries as well must name the same
//! resource), `token_use` where the provider has it, `exp`/`nbf`/`iat` with a
//! small leeway, and the claims this product needs (`sub`, the organization,
//! `scope` or `scp`).

use std::collections::HashMap;
use std::sync::Mutex;

use jsonwebtoken::{Algorithm, Validation, decode, decode_header};
use serde::Deserialize;

use super::challenge::Resource;
use super::claims::ClaimRules;
use super::jwks::{JwksCache, JwksError};
use super::{AuthError, Principal};

/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
pub const LEEWAY_SECS: u64 = 60;

const ALLOWED: [Algorithm; 3] = [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA];

pub struct Verifier {
    issuer: String,
    pub jwks: JwksCache,
    rules: ClaimRules,
    /// Tokens already verified, by `cache_key` of resource and token: a
    /// client sends the same token with every request, and the signature
    /// check is most of a cheap request's CPU. Kept until the token expires,
    /// at most `VERIFIED_SECS`, and never past the time the issuer's keys are
    /// due for a refresh (`JwksCache::fresh_for`), so a key the issuer
    /// retires stops vouching within the keys' maximum age.
    verified: Mutex<HashMap<u128, Verified>>,
    /// The key of `cache_key`, drawn when the verifier is made.
    cache_secret: [u8; 16],
}

#[derive(Clone)]
struct Verified {
    principal: Principal,
    /// Unix seconds after which the entry is not used.
    until: u64,
}

/// The longest a verified token is taken on trust without a new check.
pub const VERIFIED_SECS: u64 = 300;
/// Most tokens remembered per container; past it the memory starts over.
const MAX_VERIFIED: usize = 10_000;

#[derive(Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    iat: Option<u64>,
    exp: u64,
    /// Everything else: where the organization and the scopes are found
    /// depends on the identity provider (`ClaimRules`).
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

impl Verifier {
    pub fn new(issuer: String, jwks: JwksCache) -> Self {
        let cache_secret = inbox_support::sys::random();
        Self { issuer, jwks, rules: ClaimRules::default(), verified: Mutex::new(HashMap::new()), cache_secret }
    }

    /// The verified-token cache's key of (`audience`, `uri`, `token`): SipHash-2-4
    /// with its 128-bit output, under a secret key of this verifier's. A
    /// keyed pseudorandom function: without the key no one can make a token
    /// that lands on another's entry, and the cache keeps no token (a memory
    /// dump shows no bearer credential). SHA-256, unkeyed, gave the same at
    /// eight times the cost — most of a cached check (`make profile`).
    fn cache_key(&self, audience: &str, uri: &str, token: &str) -> u128 {
        use siphasher::sip128::Hasher128 as _;
        use std::hash::Hasher as _;
        let mut hasher = siphasher::sip128::SipHasher24::new_with_key(&self.cache_secret);
        // An audience or URI holds no NUL (they are configured): the triple reads one way only.
        hasher.write(audience.as_bytes());
        hasher.write(&[0]);
        hasher.write(uri.as_bytes());
        hasher.write(&[0]);
        hasher.write(token.as_bytes());
        hasher.finish128().as_u128()
    }

    /// Reads organization and scopes as `rules` say.
    pub fn with_claims(self, rules: ClaimRules) -> Self {
        Self { rules, ..self }
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Verifies `token` for `resource`, the surface it was sent to (or finds
    /// it verified within `VERIFIED_SECS`, not yet expired, and the keys not
    /// yet due for a refresh).
    pub async fn verify(&self, token: &str, resource: &Resource) -> Result<Principal, AuthError> {
        let key = self.cache_key(&resource.audience, &resource.uri, token);
        let now = jsonwebtoken::get_current_timestamp();
        // A poisoned map only holds copies of verified principals: keep using it.
        let lock = || self.verified.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(hit) = lock().get(&key).filter(|v| v.until > now) {
            return Ok(hit.principal.clone());
        }
        let (principal, exp) = self.verify_signed(token, resource).await?;
        let keys_fresh = self.jwks.fresh_for().as_secs().min(VERIFIED_SECS);
        let mut verified = lock();
        if verified.len() >= MAX_VERIFIED {
            verified.clear();
        }
        verified.insert(key, Verified { principal: principal.clone(), until: exp.min(now + keys_fresh) });
        Ok(principal)
    }

    /// The full check: signature against the issuer's key, then the claims.
    async fn verify_signed(&self, token: &str, resource: &Resource) -> Result<(Principal, u64), AuthError> {
        let header = decode_header(token).map_err(|_| AuthError::InvalidToken("The access token is malformed"))?;
        if !ALLOWED.contains(&header.alg) {
            return Err(AuthError::InvalidToken("The access token algorithm is not allowed"));
        }
        let kid = header.kid.ok_or(AuthError::InvalidToken("The access token has no key id"))?;
        let key = self.jwks.key(&kid).await.map_err(|e| match e {
            JwksError::UnknownKid => AuthError::InvalidToken("The access token key id is unknown"),
            JwksError::Unavailable { retry_after_secs } => AuthError::Unavailable { retry_after_secs },
        })?;
        if key.alg != header.alg {
            return Err(AuthError::InvalidToken("The access token algorithm does not match its key"));
        }

        let mut validation = Validation::new(key.alg);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        // The audience is compared below, after normalisation.
        validation.validate_aud = false;
        // `aud`, or the claim this deployment's provider names its audience
        // in (`ClaimRules::audiences`), is required below.
        validation.set_required_spec_claims(&["exp", "iss", "sub"]);
        let data = decode::<Claims>(token, &key.key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            AuthError::InvalidToken(match e.kind() {
                ErrorKind::ExpiredSignature => "The access token expired",
                ErrorKind::ImmatureSignature => "The access token is not valid yet",
                ErrorKind::InvalidIssuer => "The access token issuer is not trusted",
                ErrorKind::InvalidSignature => "The access token signature is invalid",
                ErrorKind::MissingRequiredClaim(_) => "The access token lacks a required claim",
                _ => "The access token is invalid",
            })
        })?;
        let claims = data.claims;
        if claims.iss != self.issuer {
            return Err(AuthError::InvalidToken("The access token issuer is not trusted"));
        }
        let wanted = normalise(&resource.audience);
        let not_ours = AuthError::InvalidToken("The access token is not meant for this resource");
        let audiences = self.rules.audiences(&claims.rest).map_err(AuthError::InvalidToken)?;
        if !audiences.iter().any(|a| normalise(a) == wanted) {
            return Err(not_ours);
        }
        // Under another audience claim (Cognito's `client_id`) a token may
        // still name an API in `aud`: it must be this one (its audience or
        // its URI), or the token was issued for another API.
        if let Some(aud) = self.rules.other_aud(&claims.rest) {
            let uri = normalise(&resource.uri);
            if !aud.iter().map(|a| normalise(a)).any(|a| a == wanted || a == uri) {
                return Err(not_ours);
            }
        }
        match claims.rest.get("token_use") {
            Some(serde_json::Value::String(used)) if used == "access" => {}
            None if !self.rules.requires_token_use() => {}
            _ => return Err(AuthError::InvalidToken("The access token is not an access token")),
        }
        if claims.iat.is_some_and(|iat| iat > jsonwebtoken::get_current_timestamp() + LEEWAY_SECS) {
            return Err(AuthError::InvalidToken("The access token was issued in the future"));
        }
        if claims.sub.is_empty() {
            return Err(AuthError::InvalidToken("The access token has an empty subject"));
        }
        let org = self.rules.organization(&claims.rest).map_err(AuthError::InvalidToken)?;
        let scopes = self.rules.scopes(&claims.rest);
        Ok((Principal::new(claims.iss, claims.sub, org, scopes), claims.exp))
    }
}

/// Lowercase scheme and host, no trailing slash: how audiences are compared.
pub fn normalise(uri: &str) -> String {
    let trimmed = uri.trim_end_matches('/');
    match trimmed.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            format!("{}://{}{}", scheme.to_ascii_lowercase(), authority.to_ascii_lowercase(), path)
        }
        None => trimmed.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audiences_compare_case_insensitively_on_scheme_and_host_only() {
        assert_eq!(normalise("HTTPS://Inbox.Example.com/mcp/"), "https://inbox.example.com/mcp");
        assert_ne!(normalise("https://inbox.example.com/MCP"), normalise("https://inbox.example.com/mcp"));
    }

    fn verifier() -> Verifier {
        let jwks =
            JwksCache::new("http://127.0.0.1:1/jwks.json".into(), reqwest::Client::new(), std::time::Duration::ZERO);
        Verifier::new("http://127.0.0.1:1".into(), jwks)
    }

    #[test]
    fn a_cached_token_is_found_only_for_its_audience_and_only_by_its_verifier() {
        let (one, other) = (verifier(), verifier());
        let (mcp, api, token) = ("https://inbox.example.com/mcp", "https://inbox.example.com/api/v1", "eyJ.eyJ.sig");
        assert_eq!(one.cache_key(mcp, mcp, token), one.cache_key(mcp, mcp, token));
        assert_ne!(one.cache_key(mcp, mcp, token), one.cache_key(api, api, token));
        // One client id as the audience of both surfaces still keys them apart.
        assert_ne!(one.cache_key("c1", mcp, token), one.cache_key("c1", api, token));
        assert_ne!(one.cache_key(mcp, mcp, token), one.cache_key(mcp, mcp, "eyJ.eyJ.sif"));
        // Where the audience ends and the token begins is part of the key.
        assert_ne!(one.cache_key("https://a", "u", "b.c.d"), one.cache_key("https://ab", "u", ".c.d"));
        // Each verifier (container) has its own secret.
        assert_ne!(one.cache_key(mcp, mcp, token), other.cache_key(mcp, mcp, token));
    }
}
