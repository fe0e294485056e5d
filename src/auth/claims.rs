//! Where the claims this product needs are found in a token, as the
//! deployment's identity provider puts them (docs/operations.md: "Identity providers").
//!
//! - The audience: `aud`, or the claim named by `AUDIENCE_CLAIM`
//!   (`client_id` for Amazon Cognito, whose access tokens have no `aud`).
//! - The organization: the claim named by `ORG_CLAIM` (default `org_id`;
//!   `https://example.com/org_id` for Auth0's namespaced claims,
//!   `custom:org_id` for Cognito, `tid` for Microsoft Entra ID, `organization`
//!   for Keycloak), a string, or a list or object holding exactly one; or,
//!   for a single-tenant deployment, `ORG_ID`: every token's organization.
//! - The scopes: `scope` (a space-separated string) or `scp` (a list, or a
//!   space-separated string as Entra ID writes it). `SCOPE_PREFIX` is taken
//!   off each name (Cognito's resource-server identifier, `kobana-inbox/`), and
//!   `SCOPE_SEPARATOR` is the character the provider puts between the
//!   resource and the action (`.` where `:` cannot be used): names that do
//!   not fit are ignored, never guessed.

use serde_json::{Map, Value};

use crate::domain::{OrgId, Scopes};

/// How this deployment reads organization and scopes from its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRules {
    /// Where the token names who it is for: `aud` (default), or `client_id`
    /// for providers whose access tokens carry none (Amazon Cognito).
    pub audience_claim: String,
    pub org_claim: String,
    /// A single-tenant deployment's organization, whatever the token says.
    pub fixed_org: Option<OrgId>,
    pub scope_prefix: String,
    pub scope_separator: char,
}

impl Default for ClaimRules {
    fn default() -> Self {
        ClaimRules {
            audience_claim: "aud".into(),
            org_claim: "org_id".into(),
            fixed_org: None,
            scope_prefix: String::new(),
            scope_separator: ':',
        }
    }
}

impl ClaimRules {
    /// Who the token is for: its audience claim, a string or a list.
    pub fn audiences<'a>(&self, claims: &'a Map<String, Value>) -> Vec<&'a str> {
        match claims.get(&self.audience_claim) {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// The token's organization, if it names a well-formed one.
    pub fn organization(&self, claims: &Map<String, Value>) -> Option<OrgId> {
        if let Some(org) = &self.fixed_org {
            return Some(org.clone());
        }
        let text = match claims.get(&self.org_claim)? {
            Value::String(s) => s.as_str(),
            Value::Array(items) => match items.as_slice() {
                [Value::String(s)] => s.as_str(),
                _ => return None,
            },
            Value::Object(map) if map.len() == 1 => map.keys().next()?.as_str(),
            _ => return None,
        };
        OrgId::parse(text)
    }

    /// The scopes the token grants, as this product names them.
    pub fn scopes(&self, claims: &Map<String, Value>) -> Scopes {
        let names: Vec<&str> = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(scope)), _) | (None, Some(Value::String(scope))) => scope.split(' ').collect(),
            (None, Some(Value::Array(scp))) => scp.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let ours: Vec<String> = names
            .into_iter()
            .filter_map(|name| name.strip_prefix(self.scope_prefix.as_str()))
            .filter_map(|name| match self.scope_separator {
                ':' => Some(name.to_owned()),
                // Names in the provider's spelling only: `inboxes.read`, not `inboxes:read`.
                other if !name.contains(':') => Some(name.replacen(other, ":", 1)),
                _ => None,
            })
            .collect();
        Scopes::from_names(ours.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Scope;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn the_organization_is_read_from_the_configured_claim_in_any_of_its_shapes() {
        let rules = ClaimRules { org_claim: "organization".into(), ..ClaimRules::default() };
        for shape in [json!("acme"), json!(["acme"]), json!({"acme": {"id": "42"}})] {
            assert_eq!(rules.organization(&claims(json!({"organization": shape}))), OrgId::parse("acme"), "{shape}");
        }
        for bad in [json!(["a", "b"]), json!({}), json!(7), json!("a#b")] {
            assert_eq!(rules.organization(&claims(json!({"organization": bad}))), None, "{bad}");
        }
        assert_eq!(rules.organization(&claims(json!({"org_id": "acme"}))), None, "another claim");
        let fixed = ClaimRules { fixed_org: OrgId::parse("org_solo"), ..ClaimRules::default() };
        assert_eq!(fixed.organization(&claims(json!({"org_id": "other"}))), OrgId::parse("org_solo"));
    }

    #[test]
    fn scopes_come_from_scope_or_scp_with_the_prefix_and_separator_of_the_provider() {
        let plain = ClaimRules::default();
        let both = |s: Scopes| (s.contains(Scope::EmailsRead), s.contains(Scope::InboxesRead));
        assert_eq!(both(plain.scopes(&claims(json!({"scope": "emails:read inboxes:read"})))), (true, true));
        assert_eq!(both(plain.scopes(&claims(json!({"scp": ["emails:read"]})))), (true, false));
        assert_eq!(both(plain.scopes(&claims(json!({"scp": "emails:read inboxes:read"})))), (true, true));
        let cognito = ClaimRules { scope_prefix: "kobana-inbox/".into(), ..ClaimRules::default() };
        let s = cognito.scopes(&claims(json!({"scope": "kobana-inbox/emails:read emails:write other/inboxes:read"})));
        assert_eq!(
            (s.contains(Scope::EmailsRead), s.contains(Scope::EmailsWrite), s.contains(Scope::InboxesRead)),
            (true, false, false)
        );
        let dotted = ClaimRules { scope_separator: '.', ..ClaimRules::default() };
        let s = dotted.scopes(&claims(json!({"scp": "emails.read inboxes:read"})));
        assert_eq!(both(s), (true, false), "a name in the other spelling is not guessed");
    }
}
